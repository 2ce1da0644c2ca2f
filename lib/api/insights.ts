/**
 * GET /api/insights (docs/design.md §8 "Charts"): what the charts page draws, for a range of the
 * last 24 h, 7 d or 30 d — jobs started and ended per bucket by status, queue wait and run
 * duration p50/p95 per bucket, the busiest job names, GPU-hours by user and queue. The database
 * computes the aggregates (lib/store insightRows, gpuSecondsByUser); this fills the empty buckets
 * so every series has one value per bucket.
 */
import { z } from 'zod';
import { gpuSecondsByUser, insightRows, type PercentileRow, type StoreScope } from '../store';
import { validate } from './request';
import { named } from './schemas';
import type { InsightsView } from './types';

/**
 * The ranges the page offers, their length and bucket: about a hundred buckets each, so a team's
 * first hour is several bars on the 24 h chart, not one at its edge (15 min, 1 h, 6 h).
 */
export const INSIGHT_RANGES = {
  '24h': { ms: 24 * 3_600_000, bucketMs: 15 * 60_000 },
  '7d': { ms: 7 * 24 * 3_600_000, bucketMs: 3_600_000 },
  '30d': { ms: 30 * 24 * 3_600_000, bucketMs: 6 * 3_600_000 },
} as const;

export type InsightRange = keyof typeof INSIGHT_RANGES;

const RANGES = Object.keys(INSIGHT_RANGES) as [InsightRange, ...InsightRange[]];

/** The query of GET /api/insights. */
export const InsightsQuerySchema = z.object({
  range: z
    .enum(RANGES, { error: `expected one of ${RANGES.join(', ')}` })
    .default('24h')
    .meta({ description: 'The last 24 h (15-minute buckets), 7 d (hourly) or 30 d (6-hour buckets); default 24h.' }),
});

const seconds = () => z.array(z.number().min(0).nullable());

/** Most user × queue rows of GPU-hours answered. */
const GPU_ROWS = 50;
const PercentileSeriesSchema = z.object({ p50: seconds(), p95: seconds(), jobs: z.array(z.number().int().min(0)) });
const PercentileTotalSchema = z.object({ p50: z.number().min(0).nullable(), p95: z.number().min(0).nullable(), jobs: z.number().int().min(0) });

/** The answer of GET /api/insights (mirrors InsightsView). */
export const InsightsViewSchema = named(
  z.object({
    range: z.enum(RANGES),
    from: z.string().meta({ format: 'date-time' }),
    to: z.string().meta({ format: 'date-time' }),
    now: z.string().meta({ format: 'date-time', description: 'When the figures were computed: running jobs count up to here.' }),
    bucketSeconds: z.number().int().min(1),
    buckets: z.array(z.string().meta({ format: 'date-time' })),
    started: z.array(z.number().int().min(0)),
    ended: z.record(z.string(), z.array(z.number().int().min(0))),
    queueWait: PercentileSeriesSchema,
    runDuration: PercentileSeriesSchema,
    busiest: z.array(z.object({ name: z.string(), jobs: z.number().int().min(0), failed: z.number().int().min(0), runSeconds: z.number().min(0) })).max(10),
    totals: z
      .object({ started: z.number().int().min(0), ended: z.record(z.string(), z.number().int().min(0)), queueWait: PercentileTotalSchema, runDuration: PercentileTotalSchema })
      .meta({ description: 'The whole range at once (legends, summaries): jobs started, ended by status, percentiles over every job of the range.' }),
    gpuHours: z
      .array(z.object({ user: z.string().nullable(), queue: z.string(), gpuHours: z.number().min(0), gpusNow: z.number().min(0) }))
      .max(GPU_ROWS)
      .meta({ description: 'GPU-hours used in the range by user and queue (GPUs × run time of each attempt, inside the range), most first; gpusNow: GPUs their running attempts hold.' }),
  }),
  'Insights',
  'What the charts page draws: jobs started/ended per bucket, queue wait and run duration p50/p95 (s), the busiest job names, GPU-hours by user and queue.',
);

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compile-time check: the schema and lib/api/types.ts InsightsView describe the same shape. */
export type InsightsSchemaCheck = Equals<z.infer<typeof InsightsViewSchema>, InsightsView> extends true ? true : never;
const schemaMatches: InsightsSchemaCheck = true;
void schemaMatches;

/** Parses `?range=` (default 24h). @throws ApiError 400 naming `range` for any other value. */
export function parseInsightsQuery(url: URL): { range: InsightRange } {
  const raw = url.searchParams.get('range');
  return validate(InsightsQuerySchema, { range: raw === null || raw === '' ? undefined : raw }, 'query');
}

/**
 * The charts' data for `range` ending at `now`: whole buckets, the last one holding `now`; a job
 * still running counts its run time up to `now`.
 */
export async function insights(store: StoreScope, range: InsightRange, now: Date = new Date()): Promise<InsightsView> {
  const r = INSIGHT_RANGES[range];
  // Whole buckets: the last one holds now; the first starts at the boundary at or before now − range.
  const end = Math.floor(now.getTime() / r.bucketMs) * r.bucketMs + r.bucketMs;
  const start = end - r.ms;
  const [rows, gpus] = await Promise.all([insightRows(store, { since: new Date(start), until: new Date(end), bucketMs: r.bucketMs, now }), gpuSecondsByUser(store, { since: new Date(start), until: new Date(end) })]);
  const buckets: number[] = [];
  for (let t = start; t < end; t += r.bucketMs) buckets.push(t);
  const index = new Map(buckets.map((t, i) => [t, i]));
  const statuses = [...new Set(rows.throughput.filter((x) => x.status !== 'STARTED').map((x) => x.status))].sort();
  const started = buckets.map(() => 0);
  const ended: Record<string, number[]> = Object.fromEntries(statuses.map((s) => [s, buckets.map(() => 0)]));
  const totalEnded: Record<string, number> = Object.fromEntries(statuses.map((s) => [s, 0]));
  let totalStarted = 0;
  for (const x of rows.throughput) {
    if (x.bucket === null) {
      if (x.status === 'STARTED') totalStarted = x.n;
      else totalEnded[x.status] = x.n;
      continue;
    }
    const i = index.get(x.bucket.getTime());
    if (i === undefined) continue;
    if (x.status === 'STARTED') started[i] += x.n;
    else ended[x.status][i] += x.n;
  }
  const percentiles = (list: PercentileRow[]) => {
    const out = buckets.map(() => ({ p50: null as number | null, p95: null as number | null, jobs: 0 }));
    for (const p of list) {
      const i = p.bucket === null ? undefined : index.get(p.bucket.getTime());
      if (i !== undefined) out[i] = { p50: p.p50, p95: p.p95, jobs: p.n };
    }
    return { p50: out.map((o) => o.p50), p95: out.map((o) => o.p95), jobs: out.map((o) => o.jobs) };
  };
  const total = (list: PercentileRow[]) => {
    const t = list.find((p) => p.bucket === null);
    return t && t.n > 0 ? { p50: t.p50, p95: t.p95, jobs: t.n } : { p50: null, p95: null, jobs: 0 };
  };
  return {
    range,
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    now: now.toISOString(),
    bucketSeconds: r.bucketMs / 1000,
    buckets: buckets.map((t) => new Date(t).toISOString()),
    started,
    ended,
    queueWait: percentiles(rows.queueWait),
    runDuration: percentiles(rows.runDuration),
    busiest: rows.busiest,
    totals: { started: totalStarted, ended: totalEnded, queueWait: total(rows.queueWait), runDuration: total(rows.runDuration) },
    gpuHours: gpus.slice(0, GPU_ROWS).map((g) => ({ user: g.user, queue: g.queue, gpuHours: g.gpuSeconds / 3600, gpusNow: g.gpusNow })),
  };
}
