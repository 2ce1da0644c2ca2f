/**
 * The reads of the charts page (docs/design.md §8 "Charts"): aggregates over a time range computed
 * by the database — jobs started and ended per bucket (JobEvent), queue wait and run duration
 * percentiles per bucket (Job), each also over the whole range (one GROUPING SETS query each), and
 * the busiest job names. Plain SQL that PGlite and PostgreSQL both run (percentile_cont is an
 * ordered-set aggregate of both; date_bin since PostgreSQL 14).
 */
import { Prisma } from '../generated/prisma/client';
import { JOB_TERMINAL } from '../jobs/status';
import { pgTimestamp } from './sql';
import type { StoreScope } from './handle';

/** A bucket of the throughput: jobs started (first start) and ended, by final status. `bucket` null: the whole range. */
export interface ThroughputRow {
  bucket: Date | null;
  /** 'STARTED' for a first start, else the terminal status a job ended in. */
  status: string;
  n: number;
}

/** Percentiles (seconds) of one bucket; `bucket` null: the whole range. */
export interface PercentileRow {
  bucket: Date | null;
  p50: number;
  p95: number;
  n: number;
}

/** A job name with its counts in the range. */
export interface BusyNameRow {
  name: string;
  jobs: number;
  failed: number;
  /** Summed run time of its jobs that started (s): to their end, or to `now` while they run. */
  runSeconds: number;
}

/** What insightRows() answers. */
export interface InsightRows {
  throughput: ThroughputRow[];
  queueWait: PercentileRow[];
  runDuration: PercentileRow[];
  busiest: BusyNameRow[];
}

/** The range of insightRows(): [since, until) in buckets of `bucketMs` from the epoch (UTC), and now. */
export interface InsightWindow {
  since: Date;
  until: Date;
  /** Bucket length, ms: a whole number of seconds. */
  bucketMs: number;
  /** Running jobs count up to here (not to `until`, which may lie ahead of it). */
  now: Date;
}

/**
 * The aggregates of a window: per bucket (`date_bin` from the epoch, so buckets start at whole
 * multiples of `bucketMs` in UTC, as the database stores times) and over the whole window (rows
 * with `bucket` null). Four queries, each over an index on its time column.
 */
export async function insightRows(store: StoreScope, w: InsightWindow, top = 10): Promise<InsightRows> {
  const from = pgTimestamp(w.since);
  const to = pgTimestamp(w.until);
  const now = pgTimestamp(w.now);
  const stride = `${Math.round(w.bucketMs / 1000)} seconds`;
  const bin = (col: Prisma.Sql) => Prisma.sql`date_bin(${stride}::interval, ${col}, TIMESTAMP '1970-01-01 00:00:00')`;
  const terminal = JSON.stringify([...JOB_TERMINAL]);
  const db = store.prisma;
  const percentiles = (at: Prisma.Sql, length: Prisma.Sql, where: Prisma.Sql) => Prisma.sql`
      SELECT s."bucket",
        percentile_cont(0.5) WITHIN GROUP (ORDER BY s."s")::float8 AS "p50",
        percentile_cont(0.95) WITHIN GROUP (ORDER BY s."s")::float8 AS "p95",
        count(*)::int AS "n"
      FROM (SELECT ${bin(at)} AS "bucket", extract(epoch FROM ${length})::float8 AS "s" FROM "Job" j
            WHERE ${at} >= ${from}::timestamp(3) AND ${at} < ${to}::timestamp(3) AND ${where}) s
      GROUP BY GROUPING SETS ((s."bucket"), ()) ORDER BY 1 NULLS LAST`;
  const [throughput, queueWait, runDuration, busiest] = await Promise.all([
    db.$queryRaw<ThroughputRow[]>(Prisma.sql`
      SELECT s."bucket", s."status", count(*)::int AS "n"
      FROM (SELECT ${bin(Prisma.sql`e."at"`)} AS "bucket", CASE WHEN e."to" = 'STARTING' THEN 'STARTED' ELSE e."to" END AS "status"
            FROM "JobEvent" e
            WHERE e."at" >= ${from}::timestamp(3) AND e."at" < ${to}::timestamp(3) AND e."entity" = 'job'
              AND ((e."from" = 'PENDING' AND e."to" = 'STARTING') OR e."to" IN (SELECT jsonb_array_elements_text(${terminal}::jsonb)))) s
      GROUP BY GROUPING SETS ((s."bucket", s."status"), (s."status")) ORDER BY 1 NULLS LAST, 2`),
    db.$queryRaw<PercentileRow[]>(percentiles(Prisma.sql`j."startedAt"`, Prisma.sql`j."startedAt" - j."submittedAt"`, Prisma.sql`true`)),
    db.$queryRaw<PercentileRow[]>(percentiles(Prisma.sql`j."endedAt"`, Prisma.sql`j."endedAt" - j."startedAt"`, Prisma.sql`j."startedAt" IS NOT NULL`)),
    db.$queryRaw<BusyNameRow[]>(Prisma.sql`
      SELECT j."name", count(*)::int AS "jobs",
        count(*) FILTER (WHERE j."status"::text LIKE 'FAILED%')::int AS "failed",
        COALESCE(sum(GREATEST(0, extract(epoch FROM COALESCE(j."endedAt", ${now}::timestamp(3)) - j."startedAt"))) FILTER (WHERE j."startedAt" IS NOT NULL), 0)::float8 AS "runSeconds"
      FROM "Job" j WHERE j."submittedAt" >= ${from}::timestamp(3) AND j."submittedAt" < ${to}::timestamp(3)
      GROUP BY j."name" ORDER BY 2 DESC, 1 ASC LIMIT ${top}`),
  ]);
  return { throughput, queueWait, runDuration, busiest };
}
