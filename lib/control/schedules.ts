/**
 * The verbs of schedules (docs/design.md §19 "Schedules"): create, change, pause, resume,
 * delete. A schedule holds a spec (YAML, checked like a submit at create and again at each
 * fire) or names a stored job to re-run; who may manage it is its owner (or an admin), by
 * lib/jobs/roles.ts mayChangeJob — the rule of jobs.
 */
import type { Schedule } from '../generated/prisma/client';
import { mayChangeJob, type Actor } from '../jobs/roles';
import { CATCH_UP_RULES, cronProblem, nextFireAfter, OVERLAP_POLICIES, SCHEDULE_NAME, timezoneProblem, type CatchUpRule, type OverlapPolicy, type ScheduleSettings } from '../jobs/schedule';
import { issueAt, SpecError } from '../jobs/spec';
import { createScheduleRow, deleteScheduleRow, jobSubmission, scheduleRow, updateScheduleRow, type ScheduleFields, type Store } from '../store';
import { buildSpec } from './submit';
import { cachedQueueRows } from '../store';

/** What a create (or a change) gives. */
export interface ScheduleInput {
  name: string;
  cron: string;
  /** IANA time zone; default UTC. */
  timezone?: string;
  /** The spec to submit at each fire (YAML); or `jobId`. */
  yaml?: string;
  /** Shown in the spec's errors (default "schedule.yaml"). */
  filename?: string;
  /** Re-run this stored job at each fire; or `yaml`. */
  jobId?: number;
  /** Launch overrides of a `yaml` schedule: the job name, envs, queue, priority. */
  launch?: { name?: string; envs?: Record<string, string>; queue?: string; priority?: number };
  overlap?: OverlapPolicy;
  catchUp?: CatchUpRule;
  /** Created paused (no fire until resumed). */
  paused?: boolean;
}

/** A schedule's fields were refused (`field` names which). */
export class ScheduleInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'ScheduleInputError';
  }
}

/** No schedule has this name. */
export class ScheduleNotFoundError extends Error {
  constructor(readonly schedule: string) {
    super(`schedule ${schedule} not found`);
    this.name = 'ScheduleNotFoundError';
  }
}

/** The actor may not change this schedule (a member and another's, or a viewer). */
export class ForbiddenScheduleError extends Error {
  constructor(readonly schedule: string) {
    super(`schedule ${schedule} belongs to another user: a member manages only its own schedules`);
    this.name = 'ForbiddenScheduleError';
  }
}

/**
 * The checked fields of `input` (ScheduleFields), its next fire time computed from `nowMs`.
 * @throws ScheduleInputError for a bad name, cron, time zone, policy, or a missing/double source;
 *   SpecError when the YAML does not validate (file:line) or holds an `array`; Error from the
 *   job lookup when `jobId` names a job `actor` may not re-run (ForbiddenScheduleError).
 */
async function checkedFields(store: Store, input: ScheduleInput, actor: Actor | undefined, settings: ScheduleSettings, nowMs: number): Promise<ScheduleFields> {
  if (!SCHEDULE_NAME.test(input.name)) throw new ScheduleInputError('name', 'expected 1–63 characters: a–z, 0–9, - and _, starting with a letter or digit');
  const timezone = input.timezone ?? 'UTC';
  const tz = timezoneProblem(timezone);
  if (tz) throw new ScheduleInputError('timezone', tz);
  const cp = cronProblem(input.cron, timezone, settings.allowSeconds);
  if (cp) throw new ScheduleInputError('cron', cp);
  const overlap = input.overlap ?? 'skip';
  if (!OVERLAP_POLICIES.includes(overlap)) throw new ScheduleInputError('overlap', `expected one of ${OVERLAP_POLICIES.join(', ')}`);
  const catchUp = input.catchUp ?? 'last';
  if (!CATCH_UP_RULES.includes(catchUp)) throw new ScheduleInputError('catchUp', `expected one of ${CATCH_UP_RULES.join(', ')}`);
  if ((input.yaml === undefined) === (input.jobId === undefined)) throw new ScheduleInputError('yaml', 'give a spec (yaml) or a job to re-run (jobId), not both');
  if (input.yaml !== undefined) {
    const file = input.filename ?? 'schedule.yaml';
    const queues = (await cachedQueueRows(store)).map((q) => q.name);
    const built = buildSpec({ kind: 'yaml', text: input.yaml, filename: file }, input.launch ?? {}, queues);
    if (built.spec.array) throw new SpecError([issueAt(file, null, 'array', 'a schedule submits one job per fire: an array cannot be scheduled (schedule a job that submits it)')]);
  } else {
    const job = await jobSubmission(store, input.jobId!);
    if (!job) throw new ScheduleInputError('jobId', `job ${input.jobId} does not exist`);
    if (actor && !mayChangeJob(actor, job.userId)) throw new ScheduleInputError('jobId', `job ${input.jobId} was submitted by another user: a member schedules re-runs of its own jobs only`);
  }
  const paused = input.paused ?? false;
  const next = paused ? null : nextFireAfter(input.cron, timezone, nowMs, settings.allowSeconds);
  return {
    name: input.name,
    userId: actor?.userId ?? null,
    cron: input.cron,
    timezone,
    specYaml: input.yaml ?? null,
    launch: input.yaml !== undefined && input.launch ? (input.launch as never) : undefined,
    jobId: input.jobId ?? null,
    overlap,
    catchUp,
    paused,
    nextFireAt: next === null ? null : new Date(next),
  };
}

/**
 * Creates a schedule owned by `actor`.
 * @throws ScheduleInputError (a taken name too: field `name`), SpecError.
 */
export async function createSchedule(store: Store, input: ScheduleInput, actor: Actor | undefined, settings: ScheduleSettings, nowMs = Date.now()): Promise<Schedule> {
  const fields = await checkedFields(store, input, actor, settings, nowMs);
  if (await scheduleRow(store, { name: input.name })) throw new ScheduleInputError('name', `a schedule named ${input.name} exists`);
  try {
    return await createScheduleRow(store, fields);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'P2002') throw new ScheduleInputError('name', `a schedule named ${input.name} exists`);
    throw err;
  }
}

/** The schedule `name` if `actor` may change it. @throws ScheduleNotFoundError, ForbiddenScheduleError */
export async function ownedSchedule(store: Store, name: string, actor: Actor | undefined): Promise<Schedule> {
  const s = await scheduleRow(store, { name });
  if (!s) throw new ScheduleNotFoundError(name);
  if (actor && !mayChangeJob(actor, s.userId)) throw new ForbiddenScheduleError(name);
  return s;
}

/**
 * Changes a schedule: the fields given replace its own (the name stays; the owner stays — the
 * one who created it). A new cron or time zone moves its next fire time.
 * @throws ScheduleNotFoundError, ForbiddenScheduleError, ScheduleInputError, SpecError.
 */
export async function updateSchedule(store: Store, name: string, patch: Partial<Omit<ScheduleInput, 'name'>>, actor: Actor | undefined, settings: ScheduleSettings, nowMs = Date.now()): Promise<Schedule> {
  const s = await ownedSchedule(store, name, actor);
  const source = patch.yaml !== undefined ? { yaml: patch.yaml, jobId: undefined } : patch.jobId !== undefined ? { yaml: undefined, jobId: patch.jobId } : { yaml: s.specYaml ?? undefined, jobId: s.jobId ?? undefined };
  const merged: ScheduleInput = {
    name,
    cron: patch.cron ?? s.cron,
    timezone: patch.timezone ?? s.timezone,
    ...source,
    filename: patch.filename,
    launch: patch.launch ?? ((s.launch as ScheduleInput['launch']) || undefined),
    overlap: patch.overlap ?? (s.overlap as OverlapPolicy),
    catchUp: patch.catchUp ?? (s.catchUp as CatchUpRule),
    paused: patch.paused ?? s.paused,
  };
  const f = await checkedFields(store, merged, actor, settings, nowMs);
  const { userId: _owner, name: _name, ...rest } = f;
  // The next fire time stays unless what decides it changed (or it was paused).
  if (!s.paused && !merged.paused && merged.cron === s.cron && merged.timezone === s.timezone) rest.nextFireAt = s.nextFireAt;
  const out = await updateScheduleRow(store, s.id, rest);
  if (!out) throw new ScheduleNotFoundError(name);
  return out;
}

/** Pauses (no fire until resumed) or resumes (next fire: the first cron time after now; what passed while paused is not caught up). */
export async function setSchedulePaused(store: Store, name: string, paused: boolean, actor: Actor | undefined, settings: ScheduleSettings, nowMs = Date.now()): Promise<Schedule> {
  const s = await ownedSchedule(store, name, actor);
  if (s.paused === paused) return s;
  const next = paused ? null : nextFireAfter(s.cron, s.timezone, nowMs, settings.allowSeconds);
  const out = await updateScheduleRow(store, s.id, { paused, nextFireAt: next === null ? null : new Date(next) });
  if (!out) throw new ScheduleNotFoundError(name);
  return out;
}

/** Deletes a schedule (its jobs stay). @throws ScheduleNotFoundError, ForbiddenScheduleError */
export async function deleteSchedule(store: Store, name: string, actor: Actor | undefined): Promise<void> {
  const s = await ownedSchedule(store, name, actor);
  if (!(await deleteScheduleRow(store, s.id))) throw new ScheduleNotFoundError(name);
}
