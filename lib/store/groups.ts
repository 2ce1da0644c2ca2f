/**
 * The statements of job groups (docs/design.md §17 "Groups"): an array's jobs written with their
 * group in one transaction, and the group reads — its slots (the latest job of each), counts by
 * status, its jobs.
 */
import { Prisma, type Job, type JobGroup, type Task } from '../generated/prisma/client';
import type { Store, StoreScope } from './handle';
import { announceNewJob } from './submit';
import { insertMany, newJobEntry, QueueGoneError, SUBMIT_BATCH_MAX, type NewJob } from './submit-queue';
import { uniqueViolationAsP2002 } from './sql';

/** A group as submitGroup() stores it. */
export interface NewGroup {
  name: string;
  /** `{ numJobs, params }` as submitted. */
  array: Prisma.InputJsonValue;
  userId: number | null;
  tokenId: number | null;
}

/**
 * Writes a group and its jobs — all or none, in one transaction (statements of up to
 * SUBMIT_BATCH_MAX jobs) — then announces each job as `created` (the monitor admits each one).
 * Job k gets slot k; job 0 stands for the group in a folded list.
 * @returns the group's id and its jobs in slot order.
 * @throws QueueGoneError when the jobs' queue was deleted meanwhile (nothing written); Error when
 *   `jobs` is empty; database errors as Prisma raises them (P2002 for a taken submissionId).
 */
export async function submitGroup(store: Store, group: NewGroup, jobs: readonly Omit<NewJob, 'group'>[]): Promise<{ groupId: number; jobs: Array<Job & { tasks: Task[] }> }> {
  if (jobs.length === 0) throw new Error('a group needs at least one job');
  let written;
  try {
    written = await store.prisma.$transaction(
      async (tx) => {
        const g = await tx.jobGroup.create({ data: { name: group.name, size: jobs.length, array: group.array, userId: group.userId, tokenId: group.tokenId }, select: { id: true } });
        const entries = jobs.map((j, index) => newJobEntry({ ...j, group: { id: g.id, index, lead: index === 0 } }));
        const ids = [];
        for (let i = 0; i < entries.length; i += SUBMIT_BATCH_MAX) {
          const chunk = entries.slice(i, i + SUBMIT_BATCH_MAX);
          const got = await insertMany(tx, chunk);
          for (const [k, one] of got.entries()) {
            if (!one) throw new QueueGoneError(chunk[k].job.queue ?? 'default');
            ids.push(one);
          }
        }
        return { groupId: g.id, entries, ids };
      },
      { timeout: 60_000 },
    );
  } catch (err) {
    throw uniqueViolationAsP2002(err);
  }
  return { groupId: written.groupId, jobs: written.entries.map((e, i) => announceNewJob(store, e, written.ids[i])) };
}

/** A group's row, or null. */
export function groupRow(store: StoreScope, id: number): Promise<JobGroup | null> {
  return store.prisma.jobGroup.findUnique({ where: { id } });
}

/** A group's slot: the latest job of each index (a re-run takes its slot's place). */
export interface GroupSlot {
  index: number;
  jobId: number;
  name: string;
  status: string;
  userId: number | null;
  /** Jobs the slot has had (1 + its re-runs). */
  runs: number;
}

/** The slots of a group in index order. */
export async function groupSlots(store: StoreScope, groupId: number): Promise<GroupSlot[]> {
  const rows = await store.prisma.$queryRaw<Array<{ index: number; jobId: number; name: string; status: string; userId: number | null; runs: number }>>(Prisma.sql`
    SELECT DISTINCT ON ("groupIndex") "groupIndex" AS "index", "id" AS "jobId", "name", "status"::text AS "status", "userId",
           (count(*) OVER (PARTITION BY "groupIndex"))::int AS "runs"
    FROM "Job" WHERE "groupId" = ${groupId}
    ORDER BY "groupIndex", "id" DESC`);
  return rows;
}

/** Per group of `groupIds`, its slots' latest jobs counted by status (`{ RUNNING: 3, … }`). */
export async function groupStatusCounts(store: StoreScope, groupIds: readonly number[]): Promise<Map<number, Record<string, number>>> {
  const out = new Map<number, Record<string, number>>();
  if (!groupIds.length) return out;
  const rows = await store.prisma.$queryRaw<Array<{ groupId: number; status: string; n: number }>>(Prisma.sql`
    SELECT s."groupId", s."status", count(*)::int AS "n" FROM (
      SELECT DISTINCT ON ("groupId", "groupIndex") "groupId", "status"::text AS "status"
      FROM "Job" WHERE "groupId" IN (${Prisma.join([...groupIds])})
      ORDER BY "groupId", "groupIndex", "id" DESC
    ) s GROUP BY 1, 2`);
  for (const r of rows) {
    const c = out.get(r.groupId) ?? {};
    c[r.status] = r.n;
    out.set(r.groupId, c);
  }
  return out;
}

/** The rows of groups, by id. */
export async function groupRows(store: StoreScope, ids: readonly number[]): Promise<Map<number, JobGroup>> {
  if (!ids.length) return new Map();
  const rows = await store.prisma.jobGroup.findMany({ where: { id: { in: [...ids] } } });
  return new Map(rows.map((r) => [r.id, r]));
}

/** Every job of a group (all runs of every slot), ascending by id. */
export async function groupJobIds(store: StoreScope, groupId: number): Promise<number[]> {
  return (await store.prisma.job.findMany({ where: { groupId }, select: { id: true }, orderBy: { id: 'asc' } })).map((r) => r.id);
}

/** The group's row removed (after its jobs were deleted); true when it was there. */
export async function deleteGroupRow(store: StoreScope, id: number): Promise<boolean> {
  return (await store.prisma.jobGroup.deleteMany({ where: { id } })).count > 0;
}

/** Groups newest first, `before` an id (keyset), optionally one user's; at most `take`. */
export function listGroupRows(store: StoreScope, o: { take: number; before?: number; userId?: number }): Promise<JobGroup[]> {
  return store.prisma.jobGroup.findMany({
    where: { ...(o.before !== undefined ? { id: { lt: o.before } } : {}), ...(o.userId !== undefined ? { userId: o.userId } : {}) },
    orderBy: { id: 'desc' },
    take: o.take,
  });
}

/** The first job (Job.groupLead) of each of these groups, by group id. */
export async function groupLeadJobs(store: StoreScope, groupIds: readonly number[]): Promise<Map<number, number>> {
  if (!groupIds.length) return new Map();
  const rows = await store.prisma.job.findMany({ where: { groupId: { in: [...groupIds] }, groupLead: true }, select: { id: true, groupId: true } });
  return new Map(rows.map((r) => [r.groupId!, r.id]));
}
