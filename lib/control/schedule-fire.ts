/**
 * A schedule's fire (docs/design.md §19 "Schedules"): what each server's schedule loop
 * (lib/server/schedules.ts) does with the schedules that are due, and "run now". The decision
 * (which time, catch-up) is lib/jobs/schedule.ts planFire; the overlap policy is applied here;
 * the job is prepared like any submit (lib/control/submit.ts prepareSubmit: the spec checked
 * again, `depends_on` resolved now) with the owner's rights; the write is lib/store writeFire —
 * the guarded write that makes a fire happen once across servers and crashes.
 */
import type { Schedule } from '../generated/prisma/client';
import { SCHEDULE_ORIGIN } from '../jobs/origin';
import type { Actor } from '../jobs/roles';
import { planFire, type CatchUpRule, type ScheduleSettings } from '../jobs/schedule';
import { SpecError } from '../jobs/spec';
import { logger } from '../log';
import { dueSchedules, jobSubmission, liveScheduleJobs, QueueGoneError, writeFire, type FireWrite, type Store } from '../store';
import { requestCancel } from './cancel';
import { checkPendingQuota, PendingQuotaError, prepareSubmit, type SubmitInput } from './submit';
import { UnknownUploadError } from './submit';
import { storedLaunch } from './rerun';

/** What a fire needs of the server it runs on. */
export interface FireContext {
  settings: ScheduleSettings;
  /** The server's id (Server.id, with leases) for the fire's row; null on one server. */
  serverId: string | null;
  /** The schedule owner as an actor (role, pending quota); null when that user is gone or disabled. */
  actorOf(userId: number | null): Promise<Actor | null>;
}

/** What one fire did. */
export interface FireResult {
  schedule: string;
  applied: boolean;
  outcome: FireWrite['outcome'];
  jobId: number | null;
  detail: string | null;
}

/** The submit a schedule makes: its spec and launch overrides, or the stored job's (as a re-run submits it). */
async function sourceOf(store: Store, s: Schedule): Promise<Omit<SubmitInput, 'actor' | 'origin'> | string> {
  if (s.specYaml !== null) {
    const l = (s.launch ?? {}) as { name?: string; envs?: Record<string, string>; queue?: string; priority?: number };
    return { source: { kind: 'yaml', text: s.specYaml, filename: `schedule ${s.name}` }, name: l.name, envs: l.envs, queue: l.queue, priority: l.priority };
  }
  const job = s.jobId === null ? null : await jobSubmission(store, s.jobId);
  if (!job) return `job ${s.jobId} to re-run no longer exists`;
  const launch = storedLaunch(job.launch);
  return {
    source: { kind: 'yaml', text: job.specYaml, filename: launch.filename },
    name: launch.name,
    envs: launch.envs,
    secrets: launch.secrets,
    workdirUpload: launch.workdirUpload,
    fileMountUploads: launch.fileMountUploads,
    queue: launch.queue,
    priority: launch.priority,
    metadata: job.metadata && typeof job.metadata === 'object' && !Array.isArray(job.metadata) ? (job.metadata as Record<string, unknown>) : null,
  };
}

/** The message of a submit refused at a fire (recorded on the fire, not thrown). */
function refusal(err: unknown): string | null {
  if (err instanceof SpecError) return `the spec no longer validates: ${err.message.split('\n')[0]}`;
  if (err instanceof PendingQuotaError || err instanceof QueueGoneError || err instanceof UnknownUploadError) return err.message;
  return null;
}

/**
 * Fires schedule `s` once: the `fireAt` time of `kind` (a "run now" is `manual`, at its moment,
 * without moving the next fire time). Applies the overlap policy (skip: a live earlier run skips
 * the fire; cancel_previous: the live runs are cancelled first; allow), prepares the job with the
 * owner's rights and writes the fire. A submit the spec or a quota refuses is recorded as the
 * fire's `error` (the schedule goes on); so is an owner that is gone or disabled.
 * @throws database errors (nothing written: the next tick tries again).
 */
export async function fireSchedule(store: Store, s: Schedule, fire: { fireAtMs: number; kind: FireWrite['kind']; nextMs: number | null; note?: string }, ctx: FireContext): Promise<FireResult> {
  const manual = fire.kind === 'manual';
  const base = {
    scheduleId: s.id,
    expectedNextFireAt: manual ? null : s.nextFireAt,
    nextFireAt: fire.nextMs === null ? null : new Date(fire.nextMs),
    fireAt: new Date(fire.fireAtMs),
    kind: fire.kind,
    serverId: ctx.serverId,
  };
  const record = async (outcome: FireWrite['outcome'], detail: string | null, job: FireWrite['job'] = null): Promise<FireResult> => {
    const r = await writeFire(store, { ...base, outcome, detail, job });
    return { schedule: s.name, applied: r.applied, outcome, jobId: r.applied ? r.jobId : null, detail };
  };
  const live = await liveScheduleJobs(store, s.id);
  if (live.length && s.overlap === 'skip') return record('skipped', `${fire.note ? `${fire.note}; ` : ''}job ${live.join(', ')} of this schedule still running (overlap: skip)`);
  const actor = await ctx.actorOf(s.userId);
  if (!actor) return record('error', `the schedule's owner (user ${s.userId ?? 'none'}) is gone or disabled`);
  const source = await sourceOf(store, s);
  if (typeof source === 'string') return record('error', source);
  let prepared;
  try {
    prepared = await prepareSubmit(store, { ...source, origin: SCHEDULE_ORIGIN, actor });
    if (prepared.array) return record('error', 'a schedule submits one job per fire: its spec holds an array');
    await checkPendingQuota(store, actor);
  } catch (err) {
    const why = refusal(err);
    if (why === null) throw err;
    return record('error', why);
  }
  if (live.length && s.overlap === 'cancel_previous') await requestCancel(store, live);
  const detail = [fire.note, live.length && s.overlap === 'cancel_previous' ? `cancelled job ${live.join(', ')} (overlap: cancel_previous)` : null].filter(Boolean).join('; ') || null;
  try {
    return await record('submitted', detail, prepared.job);
  } catch (err) {
    if (err instanceof QueueGoneError) return record('error', err.message);
    throw err;
  }
}

/**
 * One look at the due schedules at `nowMs`: each fires as planFire() says — the on-time fire, the
 * catch-up of the last missed time, or (catch-up `none`) a `skipped` fire that moves it on. A
 * fire another server wrote first comes back `applied: false`.
 */
export async function fireDueSchedules(store: Store, nowMs: number, ctx: FireContext): Promise<FireResult[]> {
  const out: FireResult[] = [];
  for (const s of await dueSchedules(store, new Date(nowMs))) {
    if (s.nextFireAt === null) continue;
    try {
      const plan = planFire({ cron: s.cron, timezone: s.timezone, nextFireAtMs: s.nextFireAt.getTime(), catchUp: s.catchUp as CatchUpRule }, nowMs, ctx.settings.graceMs, ctx.settings.allowSeconds);
      const missed = plan.missed ? `${plan.missed} earlier fire time${plan.missed === 1 ? '' : 's'} missed while no server ran` : undefined;
      if (plan.fireAtMs === null) {
        const r = await writeFire(store, { scheduleId: s.id, expectedNextFireAt: s.nextFireAt, nextFireAt: plan.nextMs === null ? null : new Date(plan.nextMs), fireAt: s.nextFireAt, kind: 'catch_up', outcome: 'skipped', detail: `${missed} (catch_up: none)`, serverId: ctx.serverId, job: null });
        out.push({ schedule: s.name, applied: r.applied, outcome: 'skipped', jobId: null, detail: missed ?? null });
        continue;
      }
      const note = plan.kind === 'catch_up' ? `catch-up of ${new Date(plan.fireAtMs).toISOString()}${missed ? `; ${missed}` : ''}` : missed;
      out.push(await fireSchedule(store, s, { fireAtMs: plan.fireAtMs, kind: plan.kind, nextMs: plan.nextMs, note }, ctx));
    } catch (err) {
      logger().error({ err, schedule: s.name }, `schedule ${s.name}: fire failed; the next look tries again`);
    }
  }
  return out;
}
