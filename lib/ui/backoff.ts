/**
 * Reconnect delays: exponential backoff with jitter, capped (the usual WebSocket reconnect
 * policy; full-jitter variants spread a thundering herd after a server restart). Pure.
 */

/** Backoff settings (ms). */
export interface BackoffOptions {
  /** Delay before the first retry (default 500 ms). */
  initialMs: number;
  /** Upper bound of any delay (default 15 000 ms). */
  maxMs: number;
  /** Growth per failed try (default 2). */
  factor: number;
  /** Random spread as a fraction of the delay, ±jitter (default 0.2 → ±20 %). */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 15_000, factor: 2, jitter: 0.2 };

/**
 * The delay (ms) before retry number `failures` (1 = first retry after the first drop):
 * `min(maxMs, initialMs × factor^(failures−1))`, spread by ±jitter, never above maxMs nor below 0.
 * `random` returns [0, 1) (injectable for tests).
 */
export function backoffDelay(failures: number, opts: Partial<BackoffOptions> = {}, random: () => number = Math.random): number {
  const o = { ...DEFAULT_BACKOFF, ...opts };
  const n = Math.max(1, Math.floor(failures));
  const base = Math.min(o.maxMs, o.initialMs * Math.pow(o.factor, n - 1));
  const spread = base * o.jitter * (random() * 2 - 1);
  return Math.round(Math.max(0, Math.min(o.maxMs, base + spread)));
}
