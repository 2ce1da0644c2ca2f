import { z } from 'zod';

/**
 * `notify: [NAME, …]` (docs/spec.md "notify"): webhook subscriptions a job's events also go to,
 * whatever their own filters.
 */

/** Most webhook names one job's `notify` may list. */
export const MAX_NOTIFY = 10;

/** A webhook subscription's name: the rule of queue names (1–63 characters, a–z, 0–9, - and _). */
export const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const NOTIFY_EXPECTED = 'expected a webhook name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit)';

/** The `notify` key's value: 1 to {@link MAX_NOTIFY} webhook names. */
export const NotifySchema = z
  .array(z.string({ error: NOTIFY_EXPECTED }).regex(WEBHOOK_NAME, { error: NOTIFY_EXPECTED }), { error: `expected a list of webhook names, e.g. [ops-alerts]` })
  .min(1, { error: 'expected at least one webhook name' })
  .max(MAX_NOTIFY, { error: `expected at most ${MAX_NOTIFY} webhook names` });
