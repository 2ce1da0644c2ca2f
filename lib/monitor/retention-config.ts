/**
 * The operator's retention policy (docs/design.md §13 "Retention"), read from the environment
 * through lib/config.ts: JOBDECK_RETAIN_LOGS_DAYS, JOBDECK_RETAIN_LOGS_BYTES,
 * JOBDECK_RETAIN_JOBS_DAYS (their bounds and meaning are in its table, and in the README's), and
 * the pace of the passes, JOBDECK_RETENTION_INTERVAL_MS and JOBDECK_RETENTION_BATCH.
 *
 * Unset: nothing is removed by the policy (a job's own `retention:` still applies).
 */
import { setting, type Env } from '../config';

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

/**
 * Reads the policy. @throws ConfigError naming the variable when a value is malformed or out of range.
 */
export function retentionPolicyFromEnv(env: Env = process.env): RetentionPolicy {
  return {
    logsDays: setting('JOBDECK_RETAIN_LOGS_DAYS', env),
    logsBytes: setting('JOBDECK_RETAIN_LOGS_BYTES', env),
    jobsDays: setting('JOBDECK_RETAIN_JOBS_DAYS', env),
    intervalMs: setting('JOBDECK_RETENTION_INTERVAL_MS', env),
    batch: setting('JOBDECK_RETENTION_BATCH', env),
  };
}
