import { readFileSync } from 'node:fs';
import { sleep } from './util';

/**
 * Waiting for a settled machine before a measure (bench/README.md "Method"): the load average is
 * a minute-long mean, so after a cancel wave of thousands of processes it stays high for minutes
 * on an idle machine; what matters is whether the cores are busy now. `/proc/stat`'s busy share
 * over short windows says that.
 */

/**
 * The machine's CPU counters from /proc/stat's first line — busy and total jiffies, waiting for
 * the disk counted as busy (a cancel wave's thousands of `sync` calls leave the disk flushing
 * after the cores are free) — and the processes blocked on I/O now.
 */
export function cpuJiffies(): { busy: number; total: number; blocked: number } {
  const text = readFileSync('/proc/stat', 'utf8');
  const f = text.split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal …: only idle is not busy.
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const blocked = Number(/^procs_blocked (\d+)/m.exec(text)?.[1] ?? 0);
  return { busy: total - f[3], total, blocked };
}

/** What waitSettled saw: the busy share of its last window (0–1) and how long it waited (ms). */
export interface Settled {
  busy: number;
  waitedMs: number;
  settled: boolean;
}

/**
 * Waits until a `windowMs` window of the whole machine is at most `maxBusy` busy (share of all
 * cores, 0–1, I/O wait included) with no process blocked on I/O at its end, at most `maxWaitMs`;
 * answers the last window's share (settled false: it gave up).
 */
export async function waitSettled(maxBusy = 0.2, windowMs = 2000, maxWaitMs = 180_000): Promise<Settled> {
  const t0 = Date.now();
  for (;;) {
    const a = cpuJiffies();
    await sleep(windowMs);
    const b = cpuJiffies();
    const busy = b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : 0;
    const waitedMs = Date.now() - t0;
    if (busy <= maxBusy && b.blocked === 0) return { busy, waitedMs, settled: true };
    if (waitedMs >= maxWaitMs) return { busy, waitedMs, settled: false };
  }
}
