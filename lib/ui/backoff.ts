/**
 * Reconnect delays: exponential backoff with jitter, capped (the usual WebSocket reconnect
 * policy; the jitter spreads a thundering herd after a server restart). Pure. The first retry
 * comes within 300 ms and the cap is 5 s, so a page is back within seconds of its server; a
 * server that said it is restarting is retried with the lower RESTART_MAX_MS cap (lib/ui/socket.ts).
 */

/** Backoff settings (ms). */
export interface BackoffOptions {
  /** Delay before the first retry (default 250 ms). */
  initialMs: number;
  /** Upper bound of any delay (default 5000 ms). */
  maxMs: number;
  /** Growth per failed try (default 2). */
  factor: number;
  /** Random spread as a fraction of the delay, ±jitter (default 0.2 → ±20 %). */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 5000, factor: 2, jitter: 0.2 };

/** The cap of every delay while the server said it is restarting (ms). */
export const RESTART_MAX_MS = 1000;

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
