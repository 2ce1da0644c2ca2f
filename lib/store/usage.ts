/**
 * Statements of resource usage per attempt (docs/design.md §7, "Resource usage"): the running
 * attempts a sampling round looks at, what is stored of an attempt it sees for the first time
 * (after a restart of the server), and the round's write — one statement for every attempt
 * sampled. Not status writes: no JobEvent, nothing announced on the bus.
 */
import { Prisma } from '../generated/prisma/client';
import { seriesParts, type UsagePoint } from '../jobs/usage';
import { pgTimestamp } from './sql';
import { isSingleSession } from '../db/session';
import type { Store, StoreScope } from './handle';

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
  /** The series' last stored part (AttemptUsage.part; 0 when none) and how many points it holds. */
  lastPart: number;
  lastPartLength: number;
}

/** The stored usage of the attempts `ids` (one query; of each series the lengths, its first point and its last part are read). */
export async function storedUsage(store: StoreScope, ids: readonly number[]): Promise<StoredUsage[]> {
  if (ids.length === 0) return [];
  return store.prisma.$queryRaw<StoredUsage[]>(Prisma.sql`
    SELECT a."id", a."peakRssBytes", a."peakProcs",
      COALESCE((SELECT sum(jsonb_array_length(u."points")) FROM "AttemptUsage" u WHERE u."attemptId" = a."id"), 0)::int AS "length",
      COALESCE((SELECT (u."points" -> 0 ->> 4)::int FROM "AttemptUsage" u WHERE u."attemptId" = a."id" ORDER BY u."part" LIMIT 1), 1) AS "weight",
      l."points" -> -1 AS "last", COALESCE(l."part", 0) AS "lastPart", COALESCE(jsonb_array_length(l."points"), 0)::int AS "lastPartLength"
    FROM "Attempt" a
    LEFT JOIN LATERAL (SELECT u."part", u."points" FROM "AttemptUsage" u WHERE u."attemptId" = a."id" ORDER BY u."part" DESC LIMIT 1) l ON true
    WHERE a."id" IN (SELECT (x)::int FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS x)`);
}

/** An attempt's series as stored (its parts in order, joined; null: none). */
export async function usageSeries(store: StoreScope, attemptId: number): Promise<UsagePoint[] | null> {
  return (await usageSeriesOf(store, [attemptId])).get(attemptId) ?? null;
}

/** The series of several attempts (a job's page), by attempt id (each one's parts in order, joined). */
export async function usageSeriesOf(store: StoreScope, attemptIds: readonly number[]): Promise<Map<number, UsagePoint[]>> {
  if (attemptIds.length === 0) return new Map();
  const rows = await store.prisma.attemptUsage.findMany({ where: { attemptId: { in: [...attemptIds] } }, select: { attemptId: true, points: true }, orderBy: [{ attemptId: 'asc' }, { part: 'asc' }] });
  const out = new Map<number, UsagePoint[]>();
  for (const r of rows) {
    const points = r.points as unknown as UsagePoint[];
    const series = out.get(r.attemptId);
    if (series) series.push(...points);
    else out.set(r.attemptId, [...points]);
  }
  return out;
}

/** One attempt's part of a sampling round's write. */
export interface UsageWrite {
  id: number;
  cpuMs: number;
  rssBytes: number;
  peakRssBytes: number;
  peakProcs: number;
  /**
   * What is done to the series (lib/jobs/usage placeSample): `append` the points given to part
   * `part` (a new part when it does not exist yet), `merge`: they replace the last point of part
   * `part`, `replace`: they are the whole new series (after a halving; stored as seriesParts cuts
   * it, `part` unused).
   */
  op: 'append' | 'merge' | 'replace';
  part: number;
  points: UsagePoint[];
}

/**
 * Writes one sampling round in ONE statement: the totals and peaks on each Attempt row, and each
 * series changed as its `op` says — only its last part, or, after a halving, all its parts (those
 * past the new last one deleted). The attempt rows are locked in id order, the order every
 * guarded write takes them, so a round never deadlocks with one; a row deleted meanwhile is
 * skipped.
 * @param at when the round sampled (Attempt.usageAt, AttemptUsage.updatedAt).
 * @returns how many attempts were written.
 */
export async function recordUsage(store: StoreScope, rows: readonly UsageWrite[], at: Date): Promise<number> {
  if (rows.length === 0) return 0;
  const ts = pgTimestamp(at);
  // Per attempt, its totals and its series write: `add` (appended to the part, which is created
  // when new), `merge`, `set` (the whole series as parts, `n` of them: those past it are deleted).
  const json = JSON.stringify(
    [...rows]
      .sort((a, b) => a.id - b.id)
      .map((r) => {
        const totals = { id: r.id, c: r.cpuMs, r: r.rssBytes, pr: r.peakRssBytes, pp: r.peakProcs };
        if (r.op !== 'replace') return { ...totals, op: r.op === 'append' ? 'add' : 'merge', part: r.part, p: r.points, n: 0 };
        const parts = seriesParts(r.points);
        return { ...totals, op: 'set', part: 0, p: parts, n: parts.length };
      }),
  );
  // Every series write is driven by `upd` (one row per attempt written, looked up by the primary
  // key): a join against a jsonb_to_recordset CTE, which the planner takes for 1–100 rows, became
  // a nested loop of every attempt against every other (270 ms for 1,000).
  const written = await store.prisma.$queryRaw<Array<{ n: number }>>(Prisma.sql`
    WITH v AS (SELECT * FROM jsonb_to_recordset(${json}::jsonb) AS v(id int, c float8, r float8, pr float8, pp int, op text, part int, p jsonb, n int)),
    locked AS (SELECT a."id" FROM "Attempt" a WHERE a."id" IN (SELECT id FROM v) ORDER BY a."id" FOR NO KEY UPDATE),
    upd AS (
      UPDATE "Attempt" a SET "cpuMs" = v.c, "rssBytes" = v.r, "peakRssBytes" = v.pr, "peakProcs" = v.pp, "usageAt" = ${ts}::timestamp(3)
      FROM v WHERE a."id" = v.id AND a."id" IN (SELECT id FROM locked)
      RETURNING a."id", v.op, v.part, v.p, v.n),
    added AS (
      INSERT INTO "AttemptUsage" ("attemptId", "part", "points", "updatedAt")
      SELECT upd."id", upd.part, upd.p, ${ts}::timestamp(3) FROM upd WHERE upd.op = 'add'
      ON CONFLICT ("attemptId", "part") DO UPDATE SET "points" = "AttemptUsage"."points" || EXCLUDED."points", "updatedAt" = EXCLUDED."updatedAt"
      RETURNING 1),
    whole AS (
      INSERT INTO "AttemptUsage" ("attemptId", "part", "points", "updatedAt")
      SELECT upd."id", (x.i - 1)::int, x.points, ${ts}::timestamp(3) FROM upd CROSS JOIN LATERAL jsonb_array_elements(upd.p) WITH ORDINALITY AS x(points, i) WHERE upd.op = 'set'
      ON CONFLICT ("attemptId", "part") DO UPDATE SET "points" = EXCLUDED."points", "updatedAt" = EXCLUDED."updatedAt"
      RETURNING 1),
    changed AS (
      UPDATE "AttemptUsage" u SET "updatedAt" = ${ts}::timestamp(3), "points" = (u."points" - (-1)) || upd.p
      FROM upd WHERE upd.op = 'merge' AND u."attemptId" = upd."id" AND u."part" = upd.part
      RETURNING 1),
    trimmed AS (
      DELETE FROM "AttemptUsage" u USING upd WHERE upd.op = 'set' AND u."attemptId" = upd."id" AND u."part" >= upd.n
      RETURNING 1)
    SELECT (SELECT count(*) FROM upd)::int AS n, (SELECT count(*) FROM added) + (SELECT count(*) FROM whole) + (SELECT count(*) FROM changed) + (SELECT count(*) FROM trimmed) AS parts`);
  return written[0]?.n ?? 0;
}

/** The tables a usage round rewrites rows of (recordUsage): every live attempt's, every round. */
export const USAGE_TABLES = ['Attempt', 'AttemptUsage'] as const;

/**
 * Whether a table is due a VACUUM: PostgreSQL autovacuum's own default trigger, more dead row
 * versions than `autovacuum_vacuum_threshold` (50) + `autovacuum_vacuum_scale_factor` (0.2) × its
 * live rows.
 */
export function vacuumDue(liveRows: number, deadRows: number): boolean {
  return deadRows > 50 + 0.2 * liveRows;
}

/**
 * Where no autovacuum runs — PGlite, the database's one session in this process — VACUUMs each of
 * USAGE_TABLES that vacuumDue() says is due (counts from pg_stat_user_tables), so that the row
 * versions every round leaves dead are reused instead of the data folder growing by each round's
 * (docs/design.md §7 "Resource usage", §9 "PGlite's folder"; bench/README.md). On PostgreSQL, autovacuum does it:
 * nothing runs. A VACUUM that fails (a role that does not own the table) is skipped, as
 * foldStatusDeltas does. Not inside a transaction (VACUUM cannot run in one).
 * @returns the tables vacuumed.
 */
export async function vacuumUsageTables(store: Store): Promise<string[]> {
  if (!isSingleSession(store.prisma)) return [];
  // PGlite's own counts reach pg_stat at most once a second unless forced; the rounds' own
  // writes are what the decision is about.
  await store.prisma.$executeRawUnsafe('SELECT pg_stat_force_next_flush()');
  const rows = await store.prisma.$queryRaw<Array<{ relname: string; live: number; dead: number }>>(Prisma.sql`
    SELECT relname, n_live_tup::float8 AS live, n_dead_tup::float8 AS dead FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname IN (${Prisma.join([...USAGE_TABLES])})`);
  const done: string[] = [];
  for (const table of USAGE_TABLES) {
    const r = rows.find((x) => x.relname === table);
    if (!r || !vacuumDue(r.live, r.dead)) continue;
    const ok = await store.prisma.$executeRawUnsafe(`VACUUM "${table}"`).then(() => true, () => false);
    if (ok) done.push(table);
  }
  return done;
}
