/**
 * The one retry rhythm of the client (and so of the CLI), for the job stream's reconnects
 * (stream.ts) and for REST requests retried after a dropped connection (client.ts): 250 ms,
 * doubling, at most 5 s.
 */

/** First wait after a failure (ms). */
export const BACKOFF_FIRST_MS = 250;
/** Longest wait between tries (ms). */
export const BACKOFF_MAX_MS = 5000;

/** The wait before retry number `retry` (1 = the first retry): 250, 500, 1000, 2000, 4000, 5000, 5000… ms. */
export function backoffDelay(retry: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, Math.min(retry - 1, 20)));
}
