/**
 * Statements of resource usage per attempt (docs/design.md §7, "Resource usage"): the running
 * attempts a sampling round looks at, what is stored of an attempt it sees for the first time
 * (after a restart of the server), and the round's write — one statement for every attempt
 * sampled. Not status writes: no JobEvent, nothing announced on the bus.
 */
import { Prisma } from '../generated/prisma/client';
import type { UsagePoint } from '../jobs/usage';
import { pgTimestamp } from './sql';
import type { StoreScope } from './handle';

/** A live attempt with an executor handle (what a sampling round looks at). */
export interface UsageTarget {
  id: number;
  jobId: number;
  executor: string;
  executorRef: string;
  pid: number | null;
  pidStartTime: string | null;
  logPath: string | null;
}

/**
 * Attempts STARTING, RUNNING or CANCELLING whose executor handle is recorded, by id. One query
 * over the Attempt(status) index.
 */
export async function usageTargets(store: StoreScope): Promise<UsageTarget[]> {
  return store.prisma.attempt.findMany({
    where: { status: { in: ['STARTING', 'RUNNING', 'CANCELLING'] }, executorRef: { not: null } },
    select: { id: true, jobId: true, executor: true, executorRef: true, pid: true, pidStartTime: true, logPath: true },
    orderBy: { id: 'asc' },
  }) as Promise<UsageTarget[]>;
}

/** What is stored of an attempt's usage: its peaks and the shape of its series (lib/jobs/usage SeriesShape). */
export interface StoredUsage {
  id: number;
  peakRssBytes: number | null;
  peakProcs: number | null;
  /** Points the series holds (0: none). */
  length: number;
  /** Samples per point of its first point (1 when none). */
  weight: number;
  last: UsagePoint | null;
}

/** The stored usage of the attempts `ids` (one query; only two points of each series are read). */
export async function storedUsage(store: StoreScope, ids: readonly number[]): Promise<StoredUsage[]> {
  if (ids.length === 0) return [];
  return store.prisma.$queryRaw<StoredUsage[]>(Prisma.sql`
    SELECT a."id", a."peakRssBytes", a."peakProcs", COALESCE(jsonb_array_length(u."points"), 0)::int AS "length",
      COALESCE((u."points" -> 0 ->> 4)::int, 1) AS "weight", u."points" -> -1 AS "last"
    FROM "Attempt" a LEFT JOIN "AttemptUsage" u ON u."attemptId" = a."id"
    WHERE a."id" IN (SELECT (x)::int FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS x)`);
}

/** An attempt's series as stored (null: none). */
export async function usageSeries(store: StoreScope, attemptId: number): Promise<UsagePoint[] | null> {
  const row = await store.prisma.attemptUsage.findUnique({ where: { attemptId }, select: { points: true } });
  return row ? (row.points as unknown as UsagePoint[]) : null;
}

/** The series of several attempts (a job's page), by attempt id. */
export async function usageSeriesOf(store: StoreScope, attemptIds: readonly number[]): Promise<Map<number, UsagePoint[]>> {
  if (attemptIds.length === 0) return new Map();
  const rows = await store.prisma.attemptUsage.findMany({ where: { attemptId: { in: [...attemptIds] } }, select: { attemptId: true, points: true } });
  return new Map(rows.map((r) => [r.attemptId, r.points as unknown as UsagePoint[]]));
}

/** One attempt's part of a sampling round's write. */
export interface UsageWrite {
  id: number;
  cpuMs: number;
  rssBytes: number;
  peakRssBytes: number;
  peakProcs: number;
  /**
   * What is done to the series (lib/jobs/usage placeSample): `append` the points given, `merge`:
   * they replace the last point, `replace`: they are the whole new series (after a halving).
   */
  op: 'append' | 'merge' | 'replace';
  points: UsagePoint[];
}

/**
 * Writes one sampling round in ONE statement: the totals and peaks on each Attempt row, and each
 * series changed as its `op` says. The attempt rows are locked in id order, the order every
 * guarded write takes them, so a round never deadlocks with one; a row deleted meanwhile is
 * skipped.
 * @param at when the round sampled (Attempt.usageAt, AttemptUsage.updatedAt).
 * @returns how many attempts were written.
 */
export async function recordUsage(store: StoreScope, rows: readonly UsageWrite[], at: Date): Promise<number> {
  if (rows.length === 0) return 0;
  const ts = pgTimestamp(at);
  const json = JSON.stringify([...rows].sort((a, b) => a.id - b.id).map((r) => ({ id: r.id, c: r.cpuMs, r: r.rssBytes, pr: r.peakRssBytes, pp: r.peakProcs, op: r.op, p: r.points })));
  const written = await store.prisma.$queryRaw<Array<{ n: number }>>(Prisma.sql`
    WITH v AS (SELECT * FROM jsonb_to_recordset(${json}::jsonb) AS v(id int, c float8, r float8, pr float8, pp int, op text, p jsonb)),
    locked AS (SELECT a."id" FROM "Attempt" a WHERE a."id" IN (SELECT id FROM v) ORDER BY a."id" FOR NO KEY UPDATE),
    upd AS (
      UPDATE "Attempt" a SET "cpuMs" = v.c, "rssBytes" = v.r, "peakRssBytes" = v.pr, "peakProcs" = v.pp, "usageAt" = ${ts}::timestamp(3)
      FROM v WHERE a."id" = v.id AND a."id" IN (SELECT id FROM locked)
      RETURNING a."id"),
    ins AS (
      INSERT INTO "AttemptUsage" ("attemptId", "points", "updatedAt")
      SELECT v.id, v.p, ${ts}::timestamp(3) FROM v
      WHERE v.id IN (SELECT id FROM upd) AND NOT EXISTS (SELECT 1 FROM "AttemptUsage" u WHERE u."attemptId" = v.id)
      ON CONFLICT ("attemptId") DO NOTHING
      RETURNING 1),
    ser AS (
      UPDATE "AttemptUsage" u SET "updatedAt" = ${ts}::timestamp(3), "points" = CASE v.op
        WHEN 'replace' THEN v.p
        WHEN 'merge' THEN (u."points" - (-1)) || v.p
        ELSE u."points" || v.p END
      FROM v WHERE u."attemptId" = v.id AND v.id IN (SELECT id FROM upd)
      RETURNING 1)
    SELECT ((SELECT count(*) FROM ins) + (SELECT count(*) FROM ser))::int AS n`);
  return written[0]?.n ?? 0;
}
