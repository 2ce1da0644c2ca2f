/**
 * GPU statements (docs/design.md §6 "GPUs"): the devices granted to the jobs that hold them (what
 * admission must not grant again — read back after any restart, so a device is never granted
 * twice), and GPU-seconds by user and queue (Insights, /metrics): each attempt's GPUs × its run
 * time, read through the index Attempt(gpus, endedAt), so only the attempts that held GPUs.
 */
import { Prisma } from '../generated/prisma/client';
import { ACTIVE_JOB_STATUSES } from '../jobs/capacity';
import { readGrant, type GpuGrant } from '../jobs/gpus';
import { pgTimestamp } from './sql';
import type { StoreScope } from './handle';

/**
 * The device grants (Job.gpuGrant) of `executor`'s jobs that hold GPUs: active ones
 * (STARTING, RUNNING, RECOVERING, CANCELLING) and those of `alsoJobIds` (ended, leftovers still
 * being stopped). With `hostId` (several servers on one database), only this host's jobs: an
 * attempt that recorded the host, or an owner that is a server of it (as lib/store hostCpus).
 */
export async function heldGpuGrants(store: StoreScope, executor: string, o: { hostId?: string | null; alsoJobIds?: readonly number[] } = {}): Promise<GpuGrant[]> {
  const host = o.hostId
    ? Prisma.sql` AND (EXISTS (SELECT FROM "Attempt" a WHERE a."jobId" = j."id" AND a."status" IN ('STARTING', 'RUNNING', 'CANCELLING') AND a."hostId" = ${o.hostId})
        OR EXISTS (SELECT FROM "Server" s WHERE s."id" = j."ownerId" AND s."hostId" = ${o.hostId}))`
    : Prisma.empty;
  const also = o.alsoJobIds?.length ? Prisma.sql` OR j."id" IN (${Prisma.join([...o.alsoJobIds])})` : Prisma.empty;
  const rows = await store.prisma.$queryRaw<Array<{ gpuGrant: unknown }>>(Prisma.sql`
    SELECT j."gpuGrant" FROM "Job" j
    WHERE j."executor" = ${executor} AND j."gpuGrant" IS NOT NULL
      AND (j."status"::text IN (${Prisma.join([...ACTIVE_JOB_STATUSES])})${also})${host}`);
  return rows.map((r) => readGrant(r.gpuGrant)).filter((g): g is GpuGrant => g !== null);
}

/** GPU use of one user in one queue (user null: a job without a known submitter). */
export interface GpuSecondsRow {
  user: string | null;
  queue: string;
  /** GPUs × seconds the attempts held them, within the range asked for. */
  gpuSeconds: number;
  /** GPUs the attempts still running hold now. */
  gpusNow: number;
}

/**
 * GPU-seconds by user and queue: per attempt that held GPUs (Attempt.gpus > 0), its GPUs × the
 * part of its run (startedAt → endedAt, or now while it runs) inside [since, until); both bounds
 * optional (all time). One statement.
 */
export async function gpuSecondsByUser(store: StoreScope, range: { since?: Date; until?: Date } = {}): Promise<GpuSecondsRow[]> {
  const lo = range.since ? Prisma.sql`GREATEST(a."startedAt", ${pgTimestamp(range.since)}::timestamp(3))` : Prisma.sql`a."startedAt"`;
  const end = Prisma.sql`COALESCE(a."endedAt", (now() AT TIME ZONE 'UTC')::timestamp(3))`;
  const hi = range.until ? Prisma.sql`LEAST(${end}, ${pgTimestamp(range.until)}::timestamp(3))` : end;
  const since = range.since ? Prisma.sql` AND (a."endedAt" IS NULL OR a."endedAt" >= ${pgTimestamp(range.since)}::timestamp(3))` : Prisma.empty;
  const rows = await store.prisma.$queryRaw<Array<{ user: string | null; queue: string; gpuSeconds: number | string; gpusNow: number | string }>>(Prisma.sql`
    SELECT u."name" AS "user", j."queue" AS "queue",
      COALESCE(sum(a."gpus" * GREATEST(0, extract(epoch FROM ${hi} - ${lo}))), 0)::float8 AS "gpuSeconds",
      COALESCE(sum(a."gpus") FILTER (WHERE a."endedAt" IS NULL), 0)::float8 AS "gpusNow"
    FROM "Attempt" a JOIN "Job" j ON j."id" = a."jobId" LEFT JOIN "User" u ON u."id" = j."userId"
    WHERE a."gpus" > 0 AND a."startedAt" IS NOT NULL${since}
    GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2`);
  return rows.map((r) => ({ user: r.user, queue: r.queue, gpuSeconds: Number(r.gpuSeconds), gpusNow: Number(r.gpusNow) }));
}
