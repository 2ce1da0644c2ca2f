/**
 * The reads of the charts page (docs/design.md §8 "Charts"): aggregates over a time range computed
 * by the database — jobs started and ended per bucket (JobEvent), queue wait and run duration
 * percentiles per bucket (Job), and the busiest job names. Plain SQL that PGlite and PostgreSQL
 * both run (percentile_cont is an ordered-set aggregate of both).
 */
import { Prisma } from '../generated/prisma/client';
import { JOB_TERMINAL } from '../jobs/status';
import { pgTimestamp } from './sql';
import type { StoreScope } from './store';

/** A bucket of the throughput: jobs started (first start) and ended, by final status. */
export interface ThroughputRow {
  bucket: Date;
  /** 'STARTED' for a first start, else the terminal status a job ended in. */
  status: string;
  n: number;
}

/** Percentiles (seconds) of one bucket. */
export interface PercentileRow {
  bucket: Date;
  p50: number;
  p95: number;
  n: number;
}

/** A job name with its counts in the range. */
export interface BusyNameRow {
  name: string;
  jobs: number;
  failed: number;
  /** Summed run time of its jobs that started (s). */
  runSeconds: number;
}

/** What insightRows() answers. */
export interface InsightRows {
  throughput: ThroughputRow[];
  queueWait: PercentileRow[];
  runDuration: PercentileRow[];
  busiest: BusyNameRow[];
}

/**
 * The aggregates of [since, until) in buckets of `unit` (`hour` or `day`, date_trunc in UTC as the
 * database stores times). Four queries, each over an index on its time column.
 */
export async function insightRows(store: StoreScope, since: Date, until: Date, unit: 'hour' | 'day', top = 10): Promise<InsightRows> {
  const from = pgTimestamp(since);
  const to = pgTimestamp(until);
  const terminal = JSON.stringify([...JOB_TERMINAL]);
  const db = store.prisma;
  const [throughput, queueWait, runDuration, busiest] = await Promise.all([
    db.$queryRaw<ThroughputRow[]>(Prisma.sql`
      SELECT date_trunc(${unit}, e."at") AS "bucket", CASE WHEN e."to" = 'STARTING' THEN 'STARTED' ELSE e."to" END AS "status", count(*)::int AS "n"
      FROM "JobEvent" e
      WHERE e."at" >= ${from}::timestamp(3) AND e."at" < ${to}::timestamp(3) AND e."entity" = 'job'
        AND ((e."from" = 'PENDING' AND e."to" = 'STARTING') OR e."to" IN (SELECT jsonb_array_elements_text(${terminal}::jsonb)))
      GROUP BY 1, 2 ORDER BY 1, 2`),
    db.$queryRaw<PercentileRow[]>(Prisma.sql`
      SELECT date_trunc(${unit}, j."startedAt") AS "bucket",
        percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM j."startedAt" - j."submittedAt"))::float8 AS "p50",
        percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM j."startedAt" - j."submittedAt"))::float8 AS "p95",
        count(*)::int AS "n"
      FROM "Job" j WHERE j."startedAt" >= ${from}::timestamp(3) AND j."startedAt" < ${to}::timestamp(3)
      GROUP BY 1 ORDER BY 1`),
    db.$queryRaw<PercentileRow[]>(Prisma.sql`
      SELECT date_trunc(${unit}, j."endedAt") AS "bucket",
        percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM j."endedAt" - j."startedAt"))::float8 AS "p50",
        percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM j."endedAt" - j."startedAt"))::float8 AS "p95",
        count(*)::int AS "n"
      FROM "Job" j WHERE j."endedAt" >= ${from}::timestamp(3) AND j."endedAt" < ${to}::timestamp(3) AND j."startedAt" IS NOT NULL
      GROUP BY 1 ORDER BY 1`),
    db.$queryRaw<BusyNameRow[]>(Prisma.sql`
      SELECT j."name", count(*)::int AS "jobs",
        count(*) FILTER (WHERE j."status"::text LIKE 'FAILED%')::int AS "failed",
        COALESCE(sum(extract(epoch FROM COALESCE(j."endedAt", ${to}::timestamp(3)) - j."startedAt")) FILTER (WHERE j."startedAt" IS NOT NULL), 0)::float8 AS "runSeconds"
      FROM "Job" j WHERE j."submittedAt" >= ${from}::timestamp(3) AND j."submittedAt" < ${to}::timestamp(3)
      GROUP BY j."name" ORDER BY 2 DESC, 1 ASC LIMIT ${top}`),
  ]);
  return { throughput, queueWait, runDuration, busiest };
}
