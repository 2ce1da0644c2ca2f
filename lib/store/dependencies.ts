/**
 * The statements of job-level dependencies (docs/design.md §18 "Dependencies"): resolving what a
 * `depends_on` names, a dependent's edges with the statuses they wait on, who waits for a job,
 * and the write that lets a dependent join its executor's line.
 */
import { Prisma } from '../generated/prisma/client';
import type { AfterMode } from '../jobs/spec/flow';
import { JOB_TERMINAL } from '../jobs/status';
import type { Store, StoreScope } from './handle';

/** A job a `depends_on` may name: what the submit checks of it. */
export interface DependencyTarget {
  id: number;
  name: string;
  status: string;
  userId: number | null;
}

/** What a name of a `depends_on` resolved to: a job, or a group's jobs (the latest of each slot). */
export type NamedTarget = { kind: 'job'; job: DependencyTarget } | { kind: 'group'; groupId: number; jobs: DependencyTarget[] };

/**
 * The jobs `ids` name, and per name of `names` the most recent job (highest id) with exactly that
 * name submitted by `userId` (undefined: by anyone) — else the most recent such group, standing
 * for the latest job of each of its slots. The rule of docs/spec.md "depends_on".
 */
export async function dependencyTargets(store: StoreScope, ids: readonly number[], names: readonly string[], userId: number | undefined): Promise<{ byId: Map<number, DependencyTarget>; byName: Map<string, NamedTarget> }> {
  const select = { id: true, name: true, status: true, userId: true } as const;
  const byId = new Map<number, DependencyTarget>();
  if (ids.length) for (const r of await store.prisma.job.findMany({ where: { id: { in: [...ids] } }, select })) byId.set(r.id, r);
  const byName = new Map<string, NamedTarget>();
  const mine = userId !== undefined ? { userId } : {};
  for (const name of new Set(names)) {
    const r = await store.prisma.job.findFirst({ where: { name, ...mine }, select, orderBy: { id: 'desc' } });
    if (r) {
      byName.set(name, { kind: 'job', job: r });
      continue;
    }
    const g = await store.prisma.jobGroup.findFirst({ where: { name, ...mine }, select: { id: true }, orderBy: { id: 'desc' } });
    if (!g) continue;
    const slots = await store.prisma.$queryRaw<DependencyTarget[]>(Prisma.sql`
      SELECT DISTINCT ON ("groupIndex") "id", "name", "status"::text AS "status", "userId"
      FROM "Job" WHERE "groupId" = ${g.id} ORDER BY "groupIndex", "id" DESC`);
    byName.set(name, { kind: 'group', groupId: g.id, jobs: slots });
  }
  return { byId, byName };
}

/** A dependent's edges, each with the status of the job it waits for now (null: that row is gone). */
export async function dependencyStates(store: StoreScope, jobId: number): Promise<Array<{ onJobId: number; after: AfterMode; status: string | null }>> {
  const rows = await store.prisma.$queryRaw<Array<{ onJobId: number; after: string; status: string | null }>>(Prisma.sql`
    SELECT d."onJobId", d."after", j."status"::text AS "status"
    FROM "JobDependency" d LEFT JOIN "Job" j ON j."id" = d."onJobId"
    WHERE d."jobId" = ${jobId} ORDER BY d."onJobId"`);
  return rows.map((r) => ({ onJobId: r.onJobId, after: r.after as AfterMode, status: r.status }));
}

/** The edges of jobs (as stored), by dependent id — the views' `dependsOn`. */
export async function dependenciesOf(store: StoreScope, jobIds: readonly number[]): Promise<Map<number, Array<{ onJobId: number; after: string }>>> {
  const out = new Map<number, Array<{ onJobId: number; after: string }>>();
  if (!jobIds.length) return out;
  const rows = await store.prisma.jobDependency.findMany({ where: { jobId: { in: [...jobIds] } }, orderBy: [{ jobId: 'asc' }, { onJobId: 'asc' }] });
  for (const r of rows) {
    const list = out.get(r.jobId) ?? [];
    list.push({ onJobId: r.onJobId, after: r.after });
    out.set(r.jobId, list);
  }
  return out;
}

/** Most dependents one read answers (the sweep comes again). */
const DEPENDENTS_MAX = 1000;

/**
 * Jobs still waiting (PENDING, depsWaiting) that have something to decide: one of the jobs they
 * wait for is among `onJobIds` (a job that just ended), or — without `onJobIds`, the sweep — is
 * terminal or gone. Only those owned by `owner` when given.
 */
export async function dependentsToDecide(store: StoreScope, onJobIds: readonly number[] | null, owner: string | null): Promise<number[]> {
  const terminal = [...JOB_TERMINAL];
  const which = onJobIds
    ? Prisma.sql`d."onJobId" IN (${Prisma.join(onJobIds.length ? [...onJobIds] : [0])})`
    : Prisma.sql`(u."id" IS NULL OR u."status"::text IN (${Prisma.join(terminal)}))`;
  const rows = await store.prisma.$queryRaw<Array<{ id: number }>>(Prisma.sql`
    SELECT DISTINCT j."id" FROM "Job" j
    JOIN "JobDependency" d ON d."jobId" = j."id"
    LEFT JOIN "Job" u ON u."id" = d."onJobId"
    WHERE j."depsWaiting" AND j."status" = 'PENDING' AND ${which}
    ${owner !== null ? Prisma.sql`AND j."ownerId" = ${owner}` : Prisma.empty}
    ORDER BY j."id" LIMIT ${DEPENDENTS_MAX}`);
  return rows.map((r) => r.id);
}

/**
 * A dependent's dependencies are met: it leaves the wait (depsWaiting false, readyAt = `at`, its
 * reason cleared) if it is still PENDING and waiting; announced as `updated` (`deps`) so that an
 * admission pass takes it into its line. Answers whether it was written.
 */
export async function markDependenciesMet(store: Store, jobId: number, at: Date): Promise<boolean> {
  const n = await store.prisma.job.updateMany({ where: { id: jobId, status: 'PENDING', depsWaiting: true }, data: { depsWaiting: false, readyAt: at, pendingReason: null } });
  if (n.count) store.bus.emit({ type: 'updated', jobId, changed: 'deps' });
  return n.count > 0;
}
