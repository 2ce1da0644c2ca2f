/**
 * The query parameters of the job list and its counts (GET /api/jobs, /api/jobs/counts): one
 * filter shape, the store's JobFilter (lib/store/list.ts), which every part answers from an index.
 */
import { z } from 'zod';
import { LABEL_KEY, LABEL_KEY_EXPECTED, MAX_LABEL_VALUE } from '../jobs/spec/labels';
import { LIST_SORTS as LIST_SORT_VALUES } from '../store/list';
import { DEFAULT_LIST_LIMIT, JobStatusFilterSchema, MAX_LIST_LIMIT, QueueFilterSchema, userText } from './schemas';

/**
 * A submitted-time bound of a list filter: an ISO-8601 time with a zone (`2026-12-01T00:00:00Z`,
 * `…+01:00`) or a date (`2026-12-01`, midnight UTC). The message names the field.
 */
const timeBound = (field: string, description: string) =>
  z
    .string()
    .max(40, { error: `${field} must be an ISO-8601 time (2026-12-01T08:00:00Z) or date (2026-12-01), at most 40 characters` })
    .refine((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) || z.iso.datetime({ offset: true }).safeParse(v).success, {
      error: (iss) => `${field} must be an ISO-8601 time with a zone (2026-12-01T08:00:00Z) or a date (2026-12-01), got ${JSON.stringify(String(iss.input).slice(0, 40))}`,
    })
    .refine((v) => Number.isFinite(Date.parse(/T/.test(v) ? v : `${v}T00:00:00Z`)), { error: `${field} is not a calendar date` })
    .meta({ format: 'date-time', description })
    .transform((v) => new Date(/T/.test(v) ? v : `${v}T00:00:00Z`));

/** Bounds of the `metadata` filter: pairs, key and value lengths. */
export const METADATA_FILTER_MAX_PAIRS = 8;
export const METADATA_FILTER_MAX_KEY = 64;
export const METADATA_FILTER_MAX_VALUE = 200;

/**
 * One `metadata=key:value` pair (split at the first `:`; the key 1–64 characters, the value ≤ 200,
 * matched as that string), as `[key, value]`. The messages name the field.
 */
const metadataPair = userText(1, METADATA_FILTER_MAX_KEY + 1 + METADATA_FILTER_MAX_VALUE)
  .superRefine((v, ctx) => {
    const at = v.indexOf(':');
    const key = at < 0 ? '' : v.slice(0, at);
    if (at < 1) ctx.addIssue({ code: 'custom', message: `metadata must be key:value (a key of 1–${METADATA_FILTER_MAX_KEY} characters, a colon, the value), got ${JSON.stringify(v.slice(0, 80))}` });
    else if (key.length > METADATA_FILTER_MAX_KEY) ctx.addIssue({ code: 'custom', message: `metadata key must be at most ${METADATA_FILTER_MAX_KEY} characters, got ${key.length}` });
    else if (v.length - at - 1 > METADATA_FILTER_MAX_VALUE) ctx.addIssue({ code: 'custom', message: `metadata value must be at most ${METADATA_FILTER_MAX_VALUE} characters, got ${v.length - at - 1}` });
  })
  .transform((v): [string, string] => [v.slice(0, v.indexOf(':')), v.slice(v.indexOf(':') + 1)]);

/** The `metadata` filter: 1–8 pairs, all of which a job's metadata must hold. */
export const MetadataFilterSchema = z
  .array(z.string({ error: 'metadata must be key:value' }).max(METADATA_FILTER_MAX_KEY + 1 + METADATA_FILTER_MAX_VALUE, { error: `metadata must be key:value with a key ≤ ${METADATA_FILTER_MAX_KEY} and a value ≤ ${METADATA_FILTER_MAX_VALUE} characters` }).pipe(metadataPair))
  .max(METADATA_FILTER_MAX_PAIRS, { error: `metadata: at most ${METADATA_FILTER_MAX_PAIRS} key:value pairs` })
  .meta({ description: `Only jobs whose metadata holds this key with this string value (\`team:vision\`; repeatable, all must hold; at most ${METADATA_FILTER_MAX_PAIRS}, key ≤ ${METADATA_FILTER_MAX_KEY}, value ≤ ${METADATA_FILTER_MAX_VALUE} characters).` });

/** Most `label` pairs one filter may hold. */
export const LABEL_FILTER_MAX_PAIRS = 8;

/** One `label=key=value` pair (split at the first `=`; the key a label key, the value ≤ 256 characters), as `[key, value]`. */
const labelPair = userText(3, 128 + 1 + MAX_LABEL_VALUE)
  .superRefine((v, ctx) => {
    const at = v.indexOf('=');
    if (at < 1) ctx.addIssue({ code: 'custom', message: `label must be key=value, got ${JSON.stringify(v.slice(0, 80))}` });
    else if (!LABEL_KEY.test(v.slice(0, at))) ctx.addIssue({ code: 'custom', message: `label ${JSON.stringify(v.slice(0, Math.min(at, 80)))}: ${LABEL_KEY_EXPECTED}` });
    else if (v.length - at - 1 > MAX_LABEL_VALUE) ctx.addIssue({ code: 'custom', message: `label value must be at most ${MAX_LABEL_VALUE} characters, got ${v.length - at - 1}` });
  })
  .transform((v): [string, string] => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]);

/** The `label` filter: 1–8 pairs, all of which the job's tasks' `resources.labels` must hold. */
export const LabelFilterSchema = z
  .array(z.string({ error: 'label must be key=value' }).max(128 + 1 + MAX_LABEL_VALUE, { error: `label must be key=value with a key ≤ 128 and a value ≤ ${MAX_LABEL_VALUE} characters` }).pipe(labelPair))
  .max(LABEL_FILTER_MAX_PAIRS, { error: `label: at most ${LABEL_FILTER_MAX_PAIRS} key=value pairs` })
  .meta({ description: `Only jobs whose tasks carry this label (\`resources.labels\`; \`team=vision\`; repeatable, all must hold; at most ${LABEL_FILTER_MAX_PAIRS}).` });

/** The filter fields the list and the counts share (besides status). */
export const searchShape = {
  q: userText(1, 200).meta({ description: 'Case-insensitive name substring (% _ and \\ match themselves); a number (`4` or `#4`) also matches that job id exactly.' }).optional(),
  queue: QueueFilterSchema.optional(),
  submittedAfter: timeBound('submittedAfter', 'Only jobs submitted at or after this time (ISO-8601, or a date: midnight UTC).').optional(),
  submittedBefore: timeBound('submittedBefore', 'Only jobs submitted before this time (ISO-8601, or a date: midnight UTC).').optional(),
  metadata: MetadataFilterSchema.optional(),
  label: LabelFilterSchema.optional(),
};

/** submittedBefore must come after submittedAfter (an empty range is a mistake, not a search). */
export function rangeOrdered(v: { submittedAfter?: Date; submittedBefore?: Date }, ctx: z.RefinementCtx): void {
  // A bound that failed its own check is still the string given (its transform did not run).
  const { submittedAfter: a, submittedBefore: b } = v as { submittedAfter?: unknown; submittedBefore?: unknown };
  if (!(a instanceof Date) || !(b instanceof Date)) return;
  if (b <= a) {
    ctx.addIssue({ code: 'custom', path: ['submittedBefore'], message: `submittedBefore (${b.toISOString()}) must be later than submittedAfter (${a.toISOString()})` });
  }
}

/** The order of GET /api/jobs. */
export const ListSortSchema = z
  .enum(LIST_SORT_VALUES, { error: (iss) => `sort must be one of ${LIST_SORT_VALUES.join(', ')}, got ${JSON.stringify(iss.input)}` })
  .meta({ description: 'newest first (id descending; the default), oldest first, or by name (A→Z, then id).' });

/** Query parameters of GET /api/jobs/counts. */
export const CountsQuerySchema = z.object(searchShape).superRefine(rangeOrdered);

/**
 * The list's whole filter — status, the search fields, owner — as GET /api/jobs and the log search
 * (GET /api/logs/grep) take it: one shape, so the two select the same jobs.
 */
export const listFilterShape = {
  status: z.array(JobStatusFilterSchema).meta({ description: 'Only jobs in these statuses (repeatable, or comma-separated; case-insensitive).' }).optional(),
  ...searchShape,
  owner: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, { error: 'owner must be "me" or a user name (a–z, 0–9, ., - and _, 1–63 characters)' }).meta({ description: 'Only the jobs this user submitted: "me" (the caller) or a user name.' }).optional(),
  group: idParam('group').meta({ description: 'Only the jobs of this group (an array or sweep).' }).optional(),
  schedule: idParam('schedule').meta({ description: 'Only the jobs this schedule (its id) submitted.' }).optional(),
};

/** A positive integer id given as a query parameter; the message names the field. */
function idParam(field: string) {
  const msg = `${field} must be an id (a positive integer)`;
  return z.coerce.number({ error: msg }).int({ error: msg }).min(1, { error: msg }).max(2_147_483_647, { error: msg });
}

/** Query parameters of GET /api/jobs (`status` may repeat, or hold a comma-separated list). */
export const ListQuerySchema = z.object({
  ...listFilterShape,
  sort: ListSortSchema.optional(),
  limit: z.coerce
    .number({ error: (iss) => `limit must be an integer between 1 and ${MAX_LIST_LIMIT}, got "${String(iss.input)}"` })
    .int({ error: `limit must be an integer between 1 and ${MAX_LIST_LIMIT}` })
    .min(1, { error: `limit must be an integer between 1 and ${MAX_LIST_LIMIT}` })
    .max(MAX_LIST_LIMIT, { error: `limit must be an integer between 1 and ${MAX_LIST_LIMIT}` })
    .default(DEFAULT_LIST_LIMIT)
    .meta({ description: 'Page size.' }),
  cursor: userText(1, 400).meta({ description: 'Opaque: the nextCursor of the previous page (of the same sort).' }).optional(),
  fold: z.enum(['groups'], { error: 'fold must be "groups"' }).meta({ description: 'groups: a group (array) is one row — its first job, with the group in `groups`.' }).optional(),
}).superRefine(rangeOrdered);
export type ListQuery = z.infer<typeof ListQuerySchema>;
