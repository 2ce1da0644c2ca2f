/**
 * The statements of schedules (docs/design.md §19 "Schedules"): the rows, the due read, a
 * schedule's live and recent jobs, its fires — and the fire itself, the guarded write: a
 * compare-and-set on `nextFireAt`, the ScheduleFire row and the job, in one transaction.
 */
import { Prisma, type Schedule, type ScheduleFire } from '../generated/prisma/client';
import { JOB_TERMINAL } from '../jobs/status';
import type { Store, StoreScope } from './handle';
import { announceNewJob } from './submit';
import { pgTimestamp } from './sql';
import { insertOne, newJobEntry, type NewJob } from './submit-queue';

/** The fields of a schedule a create or an update writes. */
export type ScheduleFields = Pick<Prisma.ScheduleUncheckedCreateInput, 'name' | 'userId' | 'cron' | 'timezone' | 'specYaml' | 'launch' | 'jobId' | 'overlap' | 'catchUp' | 'paused' | 'nextFireAt'>;

/**
 * A new schedule.
 * @throws Prisma's P2002 when the name is taken.
 */
export function createScheduleRow(store: StoreScope, f: ScheduleFields): Promise<Schedule> {
  return store.prisma.schedule.create({ data: f });
}

/** A schedule by id or name, or null. */
export function scheduleRow(store: StoreScope, key: { id: number } | { name: string }): Promise<Schedule | null> {
  return store.prisma.schedule.findUnique({ where: key });
}

/** Schedules by name, optionally one owner's. */
export function listScheduleRows(store: StoreScope, userId?: number): Promise<Schedule[]> {
  return store.prisma.schedule.findMany({ where: userId !== undefined ? { userId } : {}, orderBy: { name: 'asc' }, take: 1000 });
}

/** Changes a schedule's fields; null when it is gone. */
export async function updateScheduleRow(store: StoreScope, id: number, f: Partial<ScheduleFields>): Promise<Schedule | null> {
  const n = await store.prisma.schedule.updateMany({ where: { id }, data: f });
  return n.count ? scheduleRow(store, { id }) : null;
}

/** Removes a schedule (its fires with it; its jobs stay); true when it was there. */
export async function deleteScheduleRow(store: StoreScope, id: number): Promise<boolean> {
  return (await store.prisma.schedule.deleteMany({ where: { id } })).count > 0;
}

/** Schedules not paused whose next fire time is at or before `now`, soonest first. */
export function dueSchedules(store: StoreScope, now: Date, take = 100): Promise<Schedule[]> {
  return store.prisma.schedule.findMany({ where: { paused: false, nextFireAt: { lte: now } }, orderBy: { nextFireAt: 'asc' }, take });
}

/** The soonest next fire time of a schedule not paused, or null. */
export async function soonestFire(store: StoreScope): Promise<Date | null> {
  const r = await store.prisma.schedule.findFirst({ where: { paused: false, nextFireAt: { not: null } }, orderBy: { nextFireAt: 'asc' }, select: { nextFireAt: true } });
  return r?.nextFireAt ?? null;
}

/** The schedule's jobs that are not terminal (the overlap policy's "earlier run"). */
export async function liveScheduleJobs(store: StoreScope, scheduleId: number): Promise<number[]> {
  const rows = await store.prisma.job.findMany({ where: { scheduleId, status: { notIn: [...JOB_TERMINAL] } }, select: { id: true }, orderBy: { id: 'asc' } });
  return rows.map((r) => r.id);
}

/** A schedule's latest fires, newest first. */
export function scheduleFires(store: StoreScope, scheduleId: number, take = 20): Promise<ScheduleFire[]> {
  return store.prisma.scheduleFire.findMany({ where: { scheduleId }, orderBy: { id: 'desc' }, take });
}

/** A fire to write (writeFire). */
export interface FireWrite {
  scheduleId: number;
  /**
   * The compare-and-set: the fire applies only while the schedule's nextFireAt is this (and it
   * is not paused); null for a "run now", which applies while the schedule exists.
   */
  expectedNextFireAt: Date | null;
  /** nextFireAt after the fire (ignored for a "run now", which leaves it). */
  nextFireAt: Date | null;
  fireAt: Date;
  kind: 'cron' | 'catch_up' | 'manual';
  outcome: 'submitted' | 'skipped' | 'error';
  detail: string | null;
  serverId: string | null;
  /** The job to submit (outcome "submitted"). */
  job: NewJob | null;
}

/** What writeFire() did: `applied` false — another server fired it, or it was paused, changed or deleted meanwhile. */
export type FireOutcome = { applied: false } | { applied: true; jobId: number | null };

/**
 * The fire, all or nothing in one transaction: the compare-and-set on Schedule.nextFireAt (its
 * row lock serializes servers firing the same time: the second finds nextFireAt moved and writes
 * nothing), the ScheduleFire row (unique per schedule, time and kind), the job (the submit's own
 * statement, lib/store submit-queue.ts) and the schedule's last fire. A crash anywhere before
 * the commit leaves none of them, so the next server fires that time again — exactly one job per
 * fire. The new job is announced (`created`) after the commit.
 * @throws QueueGoneError when the job's queue vanished (nothing written); database errors.
 */
export async function writeFire(store: Store, w: FireWrite): Promise<FireOutcome> {
  const entry = w.job ? newJobEntry({ ...w.job, scheduleId: w.scheduleId }) : null;
  const out = await store.prisma.$transaction(
    async (tx) => {
      const guard =
        w.expectedNextFireAt === null
          ? Prisma.sql`"id" = ${w.scheduleId}`
          : Prisma.sql`"id" = ${w.scheduleId} AND NOT "paused" AND "nextFireAt" = ${pgTimestamp(w.expectedNextFireAt)}::timestamp(3)`;
      const next = w.expectedNextFireAt === null ? Prisma.sql`"nextFireAt"` : Prisma.sql`${w.nextFireAt === null ? null : pgTimestamp(w.nextFireAt)}::timestamp(3)`;
      const won = await tx.$queryRaw<Array<{ id: number }>>(Prisma.sql`
        UPDATE "Schedule" SET "nextFireAt" = ${next}, "lastFireAt" = ${pgTimestamp(w.fireAt)}::timestamp(3), "lastOutcome" = ${w.outcome === 'submitted' ? 'submitted' : `${w.outcome}: ${w.detail ?? ''}`}, "updatedAt" = now()
        WHERE ${guard} RETURNING "id"`);
      if (won.length === 0) return null;
      const ids = entry ? await insertOne(tx, entry) : null;
      await tx.scheduleFire.create({ data: { scheduleId: w.scheduleId, fireAt: w.fireAt, kind: w.kind, outcome: w.outcome, jobId: ids?.jobId ?? null, detail: w.detail, serverId: w.serverId } });
      if (ids) await tx.schedule.update({ where: { id: w.scheduleId }, data: { lastJobId: ids.jobId } });
      return { ids };
    },
    { timeout: 30_000 },
  );
  if (!out) return { applied: false };
  if (out.ids && entry) announceNewJob(store, entry, out.ids);
  return { applied: true, jobId: out.ids?.jobId ?? null };
}
