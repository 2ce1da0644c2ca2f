/**
 * The operator's retention policy (docs/design.md "Retention", README "Retention"), from the
 * environment:
 *
 *   JOBDECK_RETAIN_LOGS_DAYS   finished jobs' logs are removed this many days after the job ended (1–36500)
 *   JOBDECK_RETAIN_LOGS_BYTES  finished jobs' logs are removed, oldest first, while all logs take more
 *                              than this (bytes, or with a unit: 500MB, 20GiB, 1TB; at least 1MB)
 *   JOBDECK_RETAIN_JOBS_DAYS   finished jobs (their tasks, attempts, events, folder) are deleted
 *                              this many days after they ended (1–36500)
 *   JOBDECK_RETENTION_INTERVAL_MS  how often a pass runs (default 600000, 100–86400000)
 *   JOBDECK_RETENTION_BATCH    jobs one statement of a pass handles (default 100, 1–10000)
 *
 * Unset: nothing is removed by the policy (a job's own `retention:` still applies).
 */

/** Env by name (process.env or a plain object in tests). */
type Env = Readonly<Record<string, string | undefined>>;

/** The policy and the pass's pace. */
export interface RetentionPolicy {
  /** Days finished jobs' logs are kept; null: no age limit. */
  logsDays: number | null;
  /** Bytes all logs may take before the oldest finished ones go; null: no size limit. */
  logsBytes: number | null;
  /** Days finished jobs are kept; null: kept. */
  jobsDays: number | null;
  /** Between passes (ms). */
  intervalMs: number;
  /** Jobs per statement of a pass. */
  batch: number;
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

function intIn(env: Env, name: string, min: number, max: number, def: number | null): number | null {
  const raw = env[name]?.trim();
  if (!raw) return def;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || n < min || n > max) throw new Error(`${name}: expected an integer from ${min} to ${max}, got "${env[name]}"`);
  return n;
}

function bytes(env: Env, name: string): number | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)$/i.exec(raw);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  const n = m && unit ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!Number.isFinite(n) || n < 1e6 || n > 1e18) throw new Error(`${name}: expected a size of at least 1MB (bytes, or with a unit: 500MB, 20GiB, 1TB), got "${env[name]}"`);
  return n;
}

/**
 * Reads the policy. @throws Error naming the variable when a value is malformed or out of range.
 */
export function retentionPolicyFromEnv(env: Env = process.env): RetentionPolicy {
  return {
    logsDays: intIn(env, 'JOBDECK_RETAIN_LOGS_DAYS', 1, 36_500, null),
    logsBytes: bytes(env, 'JOBDECK_RETAIN_LOGS_BYTES'),
    jobsDays: intIn(env, 'JOBDECK_RETAIN_JOBS_DAYS', 1, 36_500, null),
    intervalMs: intIn(env, 'JOBDECK_RETENTION_INTERVAL_MS', 100, 86_400_000, 600_000)!,
    batch: intIn(env, 'JOBDECK_RETENTION_BATCH', 1, 10_000, 100)!,
  };
}
