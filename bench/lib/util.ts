/**
 * Small helpers shared by the bench measures: waiting, statistics, number formatting.
 * Times are milliseconds unless a name says otherwise; sizes are bytes.
 */
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Wall-clock time in ms since the epoch with sub-millisecond precision (comparable with Date.now()). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Polls `check` every `intervalMs` until it returns a non-undefined value, and returns it.
 * @throws Error `${what}: not reached within ${timeoutMs} ms` (with `lastState()` when given).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  opts: { timeoutMs: number; intervalMs?: number; lastState?: () => string },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not reached within ${opts.timeoutMs} ms${opts.lastState ? ` (${opts.lastState()})` : ''}`);
    }
    await sleep(opts.intervalMs ?? 100);
  }
}

/** Nearest-rank percentile (p in 0–100) of `values`; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Summary of a sample of durations (ms). */
export interface Dist {
  n: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** p50/p95/p99/min/max/mean of `values`. */
export function dist(values: readonly number[]): Dist {
  const n = values.length;
  const mean = n ? values.reduce((a, b) => a + b, 0) / n : NaN;
  return {
    n,
    min: n ? Math.min(...values) : NaN,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: n ? Math.max(...values) : NaN,
    mean,
  };
}

/** Rounds to `digits` decimals (for JSON results). */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** "12.3 ms" / "1.23 s". */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

/** Bytes as "123 MB" (10^6) — throughputs are quoted in MB/s. */
export function fmtBytes(b: number): string {
  if (!Number.isFinite(b)) return '—';
  if (b >= 1e9) return `${(b / 1e9).toFixed(2)} GB`;
  if (b >= 1e6) return `${(b / 1e6).toFixed(1)} MB`;
  if (b >= 1e3) return `${(b / 1e3).toFixed(1)} kB`;
  return `${b} B`;
}

/** Bytes per second as "123 MB/s". */
export function fmtRate(bytesPerSec: number): string {
  return `${fmtBytes(bytesPerSec)}/s`;
}

/** Runs `fn(i)` for i in [0, n) with at most `concurrency` calls in flight; results in index order. */
export async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return out;
}

/** Bytes allocated on disk under `dir` (st_blocks × 512, every file below it; 0 when it is missing). */
export function diskBytes(dir: string): number {
  let total = 0;
  const walk = (p: string): void => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    total += st.blocks * 512;
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(path.join(p, name));
  };
  walk(dir);
  return total;
}
