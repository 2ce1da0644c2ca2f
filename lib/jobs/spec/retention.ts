import { z } from 'zod';

/**
 * `retention:` (docs/spec.md "retention"): how long this job's logs and its record are kept
 * after it ends, over the operator's policy (JOBDECK_RETAIN_* , docs/design.md "Retention"):
 * a number of days (1–36500) or `forever`, for `logs` and/or `job`.
 */

/** Longest retention in days (100 years); longer is `forever`. */
export const MAX_RETENTION_DAYS = 36_500;

/** A retention period: whole days, or kept forever. */
export type RetentionPeriod = number | 'forever';

/** The normalized `retention` of a job (each absent: the operator's policy applies). */
export interface SpecRetention {
  logs?: RetentionPeriod;
  job?: RetentionPeriod;
}

const PERIOD_EXPECTED = `expected a number of days (1–${MAX_RETENTION_DAYS}) or forever`;

const period = z.union([z.int({ error: PERIOD_EXPECTED }).min(1, { error: PERIOD_EXPECTED }).max(MAX_RETENTION_DAYS, { error: PERIOD_EXPECTED }), z.literal('forever', { error: PERIOD_EXPECTED })], { error: PERIOD_EXPECTED });

/** The `retention` key's value: `{ logs?: days | forever, job?: days | forever }`, at least one. */
export const RetentionSchema = z
  .strictObject({ logs: period.optional(), job: period.optional() }, { error: 'expected a map with logs and/or job, each a number of days or forever (e.g. retention: {logs: forever})' })
  .refine((v) => v.logs !== undefined || v.job !== undefined, { error: 'expected logs and/or job (a number of days or forever)' });

/** The keys of a `retention` map (for "did you mean"). */
export const RETENTION_KEYS = ['logs', 'job'];
