/**
 * Servers and job leases (docs/design.md "Replicas"): several servers on one PostgreSQL each own
 * a share of the non-terminal jobs, and only a job's owner steps it. A lease is the job's
 * (`ownerId`, `leaseEpoch`, `leaseExpiresAt`); every time is the database's clock (`now()`), so
 * servers whose clocks differ still agree on what expired. One statement per verb.
 */
import { ACTIVE_JOB_STATUSES } from '../jobs/capacity';
import { JOB_STATUSES, JOB_TERMINAL } from '../jobs/status';
import type { Store, StoreScope } from './handle';

/** `"status" NOT IN (…terminal…)`: the SQL of "non-terminal" (the statuses are fixed words, not input). */
const LIVE = `"status" NOT IN (${[...JOB_TERMINAL].map((s) => `'${s}'`).join(', ')})`;
/** The same as `"status" IN (…non-terminal…)`: what the status index can answer without reading every job. */
const LIVE_IN = `"status" IN (${JOB_STATUSES.filter((s) => !JOB_TERMINAL.has(s)).map((s) => `'${s}'`).join(', ')})`;

/** What a server says of itself at start (Server row). */
export interface ServerInfo {
  /** New at every process start (lib/monitor/lease.ts newServerId). */
  id: string;
  /** The host name. */
  host: string;
  /** Host identity (host name + boot id): servers with the same one share /proc and the CPUs. */
  hostId: string;
  pid: number;
}

/** One claimed job: its id, the owner it was taken from (null: unowned), its new epoch. */
export interface Claimed {
  id: number;
  previousOwner: string | null;
  epoch: number;
}

/** A live server as the operator view lists it. */
export interface LiveServer {
  id: string;
  host: string;
  hostId: string;
  pid: number;
  startedAt: Date;
  heartbeatAt: Date;
  /** Milliseconds since its last heartbeat (database clock). */
  heartbeatAgeMs: number;
  jobsOwned: number;
  takeovers: number;
}

/** Writes this server's row (once per process start). */
export async function registerServer(store: StoreScope, s: ServerInfo): Promise<void> {
  await store.prisma.$executeRawUnsafe(
    `INSERT INTO "Server" ("id", "host", "hostId", "pid", "startedAt", "heartbeatAt") VALUES ($1, $2, $3, $4, now(), now())`,
    s.id,
    s.host,
    s.hostId,
    s.pid,
  );
}

/** What one renewal round found (renewLeases). */
export interface Renewal {
  /** Non-terminal jobs this server still owns, lease extended. */
  still: number[];
  /** Of the jobs the caller thought it owned: those another server owns now (taken over). */
  takenOver: number[];
}

/**
 * One renewal round: the server's heartbeat and every lease it holds, extended to now + leaseMs,
 * in ONE statement. `owned`: the jobs the caller thinks it owns. A job of `owned` missing from
 * `still` either finished or was deleted here (nothing to report), or is owned by another server
 * now: only those are `takenOver` (its lease had expired while this server was paused).
 */
export async function renewLeases(store: StoreScope, serverId: string, leaseMs: number, owned: readonly number[] = []): Promise<Renewal> {
  const rows = await store.prisma.$queryRawUnsafe<Array<{ id: number; mine: boolean }>>(
    `WITH s AS (UPDATE "Server" SET "heartbeatAt" = now(), "stoppedAt" = NULL WHERE "id" = $1 RETURNING 1),` +
      ` r AS (UPDATE "Job" SET "leaseExpiresAt" = now() + ($2::int * interval '1 millisecond')` +
      ` WHERE "ownerId" = $1 AND ${LIVE} AND EXISTS (SELECT FROM s) RETURNING "id")` +
      ` SELECT "id", true AS mine FROM r` +
      ` UNION ALL SELECT "id", false AS mine FROM "Job" WHERE "id" = ANY($3::int[]) AND "ownerId" IS DISTINCT FROM $1`,
    serverId,
    leaseMs,
    [...owned],
  );
  return { still: rows.filter((r) => r.mine).map((r) => Number(r.id)), takenOver: rows.filter((r) => !r.mine).map((r) => Number(r.id)) };
}

/**
 * Claims unowned or expired non-terminal jobs, oldest first, with `FOR UPDATE SKIP LOCKED` (two
 * servers claiming at once take different jobs; a job being written is skipped, not waited for).
 * The rule (least loaded): a server takes jobs only up to its fair share — ceil(non-terminal
 * jobs / live servers) minus those it owns — and at most `batch`. Each claim bumps the epoch, so
 * a write the previous owner still has in flight loses its fence. `only`: claim only these ids
 * (the jobs just submitted here). One statement; the takeovers are counted on the Server row.
 *
 * Its cost follows the live jobs, never the history (docs/design.md "Replicas"): the candidates
 * come from the status index (`LIVE_IN`; a `NOT IN` of the terminal statuses is a scan of every
 * job ever run), or by id for `only`; the jobs are counted only when there is a candidate and
 * another live server to share with (alone, the fair share is every candidate).
 */
export async function claimJobs(store: StoreScope, serverId: string, leaseMs: number, batch: number, only?: readonly number[]): Promise<Claimed[]> {
  const params: unknown[] = [serverId, leaseMs, batch];
  if (only) params.push([...only]);
  const free = `("ownerId" IS NULL OR "leaseExpiresAt" < now())`;
  const rows = await store.prisma.$queryRawUnsafe<Array<{ id: number; previousOwner: string | null; epoch: number }>>(
    `WITH cand AS MATERIALIZED (SELECT "id" FROM "Job" WHERE ${only ? `"id" = ANY($4::int[]) AND ${LIVE}` : LIVE_IN} AND ${free}),` +
      ` live AS (SELECT count(*)::int AS n FROM "Server" WHERE "stoppedAt" IS NULL AND "heartbeatAt" > now() - ($2::int * interval '1 millisecond')),` +
      ` quota AS (SELECT CASE WHEN NOT EXISTS (SELECT FROM cand) THEN 0 WHEN (SELECT n FROM live) <= 1 THEN $3::int` +
      ` ELSE (SELECT GREATEST(0, LEAST($3::int, CEIL(count(*)::float8 / (SELECT n FROM live))::int - (count(*) FILTER (WHERE "ownerId" = $1))::int)) FROM "Job" WHERE ${LIVE_IN}) END AS n),` +
      // By id from the candidates: a join here lets the planner walk the whole primary key.
      ` c AS (SELECT "id", "ownerId" AS prev FROM "Job" WHERE "id" = ANY (ARRAY(SELECT "id" FROM cand)) AND ${LIVE} AND ${free}` +
      ` ORDER BY "id" LIMIT (SELECT n FROM quota) FOR UPDATE SKIP LOCKED),` +
      ` u AS (UPDATE "Job" j SET "ownerId" = $1, "leaseEpoch" = j."leaseEpoch" + 1, "leaseExpiresAt" = now() + ($2::int * interval '1 millisecond')` +
      ` FROM c WHERE j."id" = c."id" RETURNING j."id", c.prev, j."leaseEpoch"),` +
      ` t AS (UPDATE "Server" SET "takeovers" = "takeovers" + (SELECT count(*)::int FROM u WHERE u.prev IS NOT NULL AND u.prev <> $1) WHERE "id" = $1 AND EXISTS (SELECT FROM u WHERE u.prev IS NOT NULL AND u.prev <> $1) RETURNING 1)` +
      ` SELECT u."id", u.prev AS "previousOwner", u."leaseEpoch" AS epoch FROM u ORDER BY u."id"`,
    ...params,
  );
  return rows.map((r) => ({ id: Number(r.id), previousOwner: r.previousOwner, epoch: Number(r.epoch) }));
}

/** At a clean stop: every lease of the server given up (owner null, expired now) and its row marked stopped, in one statement. Answers the released job ids. */
export async function releaseLeases(store: StoreScope, serverId: string): Promise<number[]> {
  const rows = await store.prisma.$queryRawUnsafe<Array<{ id: number }>>(
    `WITH s AS (UPDATE "Server" SET "stoppedAt" = now() WHERE "id" = $1 RETURNING 1)` +
      ` UPDATE "Job" SET "ownerId" = NULL, "leaseExpiresAt" = now() WHERE "ownerId" = $1 AND ${LIVE} AND EXISTS (SELECT FROM s) RETURNING "id"`,
    serverId,
  );
  return rows.map((r) => r.id);
}

/** The servers whose heartbeat is younger than `leaseMs` and that did not stop, by start time, with the jobs each owns. */
export async function liveServers(store: StoreScope, leaseMs: number): Promise<LiveServer[]> {
  const rows = await store.prisma.$queryRawUnsafe<Array<Omit<LiveServer, 'heartbeatAgeMs'> & { heartbeatAgeMs: number | string }>>(
    `SELECT s."id", s."host", s."hostId", s."pid", s."startedAt", s."heartbeatAt", s."takeovers",` +
      ` (EXTRACT(EPOCH FROM (now() - s."heartbeatAt")) * 1000)::float8 AS "heartbeatAgeMs",` +
      ` (SELECT count(*)::int FROM "Job" j WHERE j."ownerId" = s."id" AND ${LIVE.replace('"status"', 'j."status"')}) AS "jobsOwned"` +
      ` FROM "Server" s WHERE s."stoppedAt" IS NULL AND s."heartbeatAt" > now() - ($1::int * interval '1 millisecond') ORDER BY s."startedAt", s."id"`,
    leaseMs,
  );
  return rows.map((r) => ({ ...r, heartbeatAgeMs: Math.max(0, Math.round(Number(r.heartbeatAgeMs))), jobsOwned: Number(r.jobsOwned), takeovers: Number(r.takeovers) }));
}

/** Job statuses that hold CPUs (lib/jobs/capacity ACTIVE_JOB_STATUSES), as SQL. */
const HOLDING = `(${ACTIVE_JOB_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/**
 * CPUs held on host `hostId` by the active jobs (STARTING, RUNNING, RECOVERING, CANCELLING) of
 * `executors`, by executor (docs/design.md "Replicas", capacity): a job counts when one of its
 * attempts still running recorded this host (`Attempt.hostId`), or when its owner is a server of
 * this host (an attempt just started records its host only with the attach write). One statement.
 */
export async function hostCpus(store: StoreScope, hostId: string, executors: readonly string[]): Promise<Record<string, number>> {
  if (executors.length === 0) return {};
  const rows = await store.prisma.$queryRawUnsafe<Array<{ executor: string; cpus: number | string }>>(
    `SELECT j."executor", COALESCE(sum(j."cpus"), 0)::float8 AS cpus FROM "Job" j` +
      ` WHERE j."executor" = ANY($2::text[]) AND j."status"::text IN ${HOLDING}` +
      ` AND (EXISTS (SELECT FROM "Attempt" a WHERE a."jobId" = j."id" AND a."status" IN ('STARTING', 'RUNNING', 'CANCELLING') AND a."hostId" = $1)` +
      ` OR EXISTS (SELECT FROM "Server" s WHERE s."id" = j."ownerId" AND s."hostId" = $1))` +
      ` GROUP BY j."executor"`,
    hostId,
    [...executors],
  );
  return Object.fromEntries(rows.map((r) => [r.executor, Number(r.cpus)]));
}

/**
 * Runs `fn` while its database connection holds the admission lock of host `hostId`
 * (`pg_advisory_xact_lock(hashtext(hostId))`, in a transaction of its own that `fn` does not
 * use): the admission passes of the servers of one host run one at a time, each seeing what the
 * one before it committed (docs/design.md "Replicas"). The lock goes with the transaction:
 * after `fn`, or after `timeoutMs` (a hung pass cannot hold the host's admission for longer).
 * PostgreSQL only.
 * @throws what `fn` throws; Prisma's transaction errors (timeout, no connection).
 */
export async function withHostLock<T>(store: Store, hostId: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  return store.prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext($1))`, hostId);
      return fn();
    },
    { maxWait: timeoutMs, timeout: timeoutMs },
  );
}

/** Servers of host `hostId` not marked stopped, other than `self`: their ids and pids (the start-up check for dead ones). */
export async function hostServers(store: StoreScope, hostId: string, self: string): Promise<Array<{ id: string; pid: number }>> {
  return store.prisma.server.findMany({ where: { hostId, stoppedAt: null, id: { not: self } }, select: { id: true, pid: true } });
}

/**
 * Marks servers known to be dead (their process is gone from this host) stopped and expires
 * their leases now, so that they are claimed at once rather than after the lease length. One
 * statement.
 */
export async function expireServers(store: StoreScope, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await store.prisma.$executeRawUnsafe(
    `WITH s AS (UPDATE "Server" SET "stoppedAt" = now() WHERE "id" = ANY($1::text[]) RETURNING "id")` +
      ` UPDATE "Job" SET "leaseExpiresAt" = now() WHERE "ownerId" IN (SELECT "id" FROM s) AND ${LIVE}`,
    [...ids],
  );
}

/** The owner (Job.ownerId; null: unowned) of each of `ids` that exists. */
export async function jobOwners(store: StoreScope, ids: readonly number[]): Promise<Array<{ id: number; ownerId: string | null }>> {
  if (ids.length === 0) return [];
  return store.prisma.job.findMany({ where: { id: { in: [...ids] } }, select: { id: true, ownerId: true } });
}
