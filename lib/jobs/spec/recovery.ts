import { z } from 'zod';

/**
 * Parts of `job_recovery` (docs/spec.md "job_recovery"; the map itself is schema.ts's): exit
 * codes, and `restart_backoff` — the wait before a restart after
 * the task's own failure, doubling for each later attempt of the task up to the server's cap
 * (lib/jobs/retry.ts restartDelayMs). jobdeck's own key: SkyPilot has none (its restart relaunches
 * a cluster, which takes minutes). Absent from the normalized spec when not given — the server's
 * JOBDECK_RESTART_BACKOFF_MS applies — so the specs (and hashes) of files without it are as before.
 */

/** The message for a restart count that is not one. */
export const RESTARTS_EXPECTED = 'expected an integer ≥ 0';
const EXIT_CODE_EXPECTED = 'expected an exit code (an integer from 0 to 255)';
/** An exit code of `recover_on_exit_codes`: an integer 0–255. */
export const ExitCodeSchema = z.int({ error: EXIT_CODE_EXPECTED }).min(0, { error: EXIT_CODE_EXPECTED }).max(255, { error: EXIT_CODE_EXPECTED });

/** Longest `restart_backoff` (ms): a day. */
export const MAX_RESTART_BACKOFF_MS = 86_400_000;
const BACKOFF_EXPECTED = 'expected a duration: seconds (30) or with a unit (500ms, 30s, 5m, 1h), at most 24h';
const BACKOFF_UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** `restart_backoff`: seconds (a number) or a number with a unit → ms; at most MAX_RESTART_BACKOFF_MS. */
export const RestartBackoffSchema = z.union([z.number(), z.string()], { error: BACKOFF_EXPECTED }).transform((v, ctx) => {
  const m = typeof v === 'number' ? null : /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h)?\s*$/i.exec(v);
  const ms = typeof v === 'number' ? v * 1000 : m ? Number(m[1]) * BACKOFF_UNIT_MS[(m[2] ?? 's').toLowerCase()] : NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_RESTART_BACKOFF_MS) {
    ctx.addIssue({ code: 'custom', message: BACKOFF_EXPECTED });
    return z.NEVER;
  }
  return Math.round(ms);
});
