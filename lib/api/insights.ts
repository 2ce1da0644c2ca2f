/**
 * GET /api/insights (docs/design.md §8 "Charts"): what the charts page draws, for a range of the
 * last 24 h, 7 d or 30 d — jobs started and ended per bucket by status, queue wait and run
 * duration p50/p95 per bucket, the busiest job names. The database computes the aggregates
 * (lib/store insightRows); this fills the empty buckets so every series has one value per bucket.
 */
import { z } from 'zod';
import { insightRows, type PercentileRow, type StoreScope } from '../store';
import { validate } from './request';
import { named } from './schemas';
import type { InsightsView } from './types';

/** The ranges the page offers, their length and bucket. */
export const INSIGHT_RANGES = {
  '24h': { ms: 24 * 3_600_000, unit: 'hour', bucketMs: 3_600_000 },
  '7d': { ms: 7 * 24 * 3_600_000, unit: 'hour', bucketMs: 3_600_000 },
  '30d': { ms: 30 * 24 * 3_600_000, unit: 'day', bucketMs: 24 * 3_600_000 },
} as const;

export type InsightRange = keyof typeof INSIGHT_RANGES;

const RANGES = Object.keys(INSIGHT_RANGES) as [InsightRange, ...InsightRange[]];

/** The query of GET /api/insights. */
export const InsightsQuerySchema = z.object({
  range: z
    .enum(RANGES, { error: `expected one of ${RANGES.join(', ')}` })
    .default('24h')
    .meta({ description: 'The last 24 h or 7 d (hourly buckets) or 30 d (daily buckets); default 24h.' }),
});

const seconds = () => z.array(z.number().min(0).nullable());
const PercentileSeriesSchema = z.object({ p50: seconds(), p95: seconds(), jobs: z.array(z.number().int().min(0)) });

/** The answer of GET /api/insights (mirrors InsightsView). */
export const InsightsViewSchema = named(
  z.object({
    range: z.enum(RANGES),
    from: z.string().meta({ format: 'date-time' }),
    to: z.string().meta({ format: 'date-time' }),
    bucketSeconds: z.number().int().min(1),
    buckets: z.array(z.string().meta({ format: 'date-time' })),
    started: z.array(z.number().int().min(0)),
    ended: z.record(z.string(), z.array(z.number().int().min(0))),
    queueWait: PercentileSeriesSchema,
    runDuration: PercentileSeriesSchema,
    busiest: z.array(z.object({ name: z.string(), jobs: z.number().int().min(0), failed: z.number().int().min(0), runSeconds: z.number().min(0) })).max(10),
  }),
  'Insights',
  'What the charts page draws: jobs started/ended per bucket, queue wait and run duration p50/p95 (s), the busiest job names.',
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

/** The charts' data for `range` ending at `now`. */
export async function insights(store: StoreScope, range: InsightRange, now: Date = new Date()): Promise<InsightsView> {
  const r = INSIGHT_RANGES[range];
  // Whole buckets: the first starts at the bucket boundary at or before now − range.
  const end = Math.floor(now.getTime() / r.bucketMs) * r.bucketMs + r.bucketMs;
  const start = end - r.ms;
  const rows = await insightRows(store, new Date(start), new Date(end), r.unit);
  const buckets: number[] = [];
  for (let t = start; t < end; t += r.bucketMs) buckets.push(t);
  const index = new Map(buckets.map((t, i) => [t, i]));
  const statuses = [...new Set(rows.throughput.filter((x) => x.status !== 'STARTED').map((x) => x.status))].sort();
  const started = buckets.map(() => 0);
  const ended: Record<string, number[]> = Object.fromEntries(statuses.map((s) => [s, buckets.map(() => 0)]));
  for (const x of rows.throughput) {
    const i = index.get(x.bucket.getTime());
    if (i === undefined) continue;
    if (x.status === 'STARTED') started[i] += x.n;
    else ended[x.status][i] += x.n;
  }
  const percentiles = (list: PercentileRow[]) => {
    const out = buckets.map(() => ({ p50: null as number | null, p95: null as number | null, jobs: 0 }));
    for (const p of list) {
      const i = index.get(p.bucket.getTime());
      if (i !== undefined) out[i] = { p50: p.p50, p95: p.p95, jobs: p.n };
    }
    return { p50: out.map((o) => o.p50), p95: out.map((o) => o.p95), jobs: out.map((o) => o.jobs) };
  };
  return {
    range,
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    bucketSeconds: r.bucketMs / 1000,
    buckets: buckets.map((t) => new Date(t).toISOString()),
    started,
    ended,
    queueWait: percentiles(rows.queueWait),
    runDuration: percentiles(rows.runDuration),
    busiest: rows.busiest,
  };
}
