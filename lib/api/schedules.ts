/**
 * The schedule API's operations (docs/design.md §19 "Schedules"): list, show, create, change,
 * pause, resume, run now, delete — lib/control/schedules.ts and schedule-fire.ts with their
 * domain outcomes as HTTP answers, each change recorded in the audit log.
 */
import { createSchedule, deleteSchedule, fireSchedule, ForbiddenScheduleError, ownedSchedule, ScheduleInputError, ScheduleNotFoundError, setSchedulePaused, updateSchedule, type FireContext, type FireResult, type ScheduleInput } from '../control';
import type { Actor } from '../jobs/roles';
import type { ScheduleSettings } from '../jobs/schedule';
import { SpecError } from '../jobs/spec';
import { listScheduleRows, scheduleFires, scheduleRow, userNames, type Store } from '../store';
import { record } from './audit';
import { badRequest, forbidden, notFound } from './errors';
import { toScheduleView } from './group-views';
import { specProblem } from './jobs';
import type { ScheduleView } from './types';

/** What the schedule routes need of the server: its settings, its clock, how a fire runs here. */
export interface ScheduleDeps {
  settings: ScheduleSettings;
  now(): number;
  fire: FireContext;
}

function problemOf(err: unknown): unknown {
  if (err instanceof ScheduleNotFoundError) return notFound(err.message);
  if (err instanceof ForbiddenScheduleError) return forbidden(err.message, { schedule: err.schedule });
  if (err instanceof ScheduleInputError) return badRequest(err.message, { issues: [{ path: err.field, message: err.message.slice(err.field.length + 2) }] });
  if (err instanceof SpecError) return specProblem(err.issues);
  return err;
}

async function view(store: Store, name: string, withFires: boolean): Promise<ScheduleView> {
  const s = await scheduleRow(store, { name });
  if (!s) throw notFound(`schedule ${name} not found`);
  const owner = s.userId === null ? null : ((await userNames(store, [s.userId])).get(s.userId) ?? null);
  return toScheduleView(s, owner, withFires ? await scheduleFires(store, s.id) : []);
}

/** GET /api/schedules (`mine`: the caller's). */
export async function listSchedules(store: Store, mine: boolean, actor?: Actor): Promise<{ schedules: ScheduleView[] }> {
  const rows = await listScheduleRows(store, mine && actor ? actor.userId : undefined);
  const names = await userNames(store, rows.map((r) => r.userId));
  return { schedules: rows.map((s) => toScheduleView(s, s.userId === null ? null : (names.get(s.userId) ?? null))) };
}

/** GET /api/schedules/:name, with its latest fires. @throws ApiError 404 */
export function getSchedule(store: Store, name: string): Promise<ScheduleView> {
  return view(store, name, true);
}

/** POST /api/schedules. @throws ApiError 400 (a field, the spec's file:line) */
export async function addSchedule(store: Store, input: ScheduleInput, deps: ScheduleDeps, actor?: Actor): Promise<ScheduleView> {
  try {
    const s = await createSchedule(store, input, actor, deps.settings, deps.now());
    await record(store, actor ?? null, 'schedule.create', `schedule:${s.name}`, { cron: s.cron, timezone: s.timezone, overlap: s.overlap, catchUp: s.catchUp, jobId: s.jobId });
    return await view(store, s.name, true);
  } catch (err) {
    throw problemOf(err);
  }
}

/** PATCH /api/schedules/:name. @throws ApiError 400, 403, 404 */
export async function changeSchedule(store: Store, name: string, patch: Partial<Omit<ScheduleInput, 'name'>>, deps: ScheduleDeps, actor?: Actor): Promise<ScheduleView> {
  try {
    await updateSchedule(store, name, patch, actor, deps.settings, deps.now());
    await record(store, actor ?? null, 'schedule.update', `schedule:${name}`, { fields: Object.keys(patch).sort() });
    return await view(store, name, true);
  } catch (err) {
    throw problemOf(err);
  }
}

/** POST /api/schedules/:name/pause and /resume. @throws ApiError 403, 404 */
export async function pauseSchedule(store: Store, name: string, paused: boolean, deps: ScheduleDeps, actor?: Actor): Promise<ScheduleView> {
  try {
    await setSchedulePaused(store, name, paused, actor, deps.settings, deps.now());
    await record(store, actor ?? null, paused ? 'schedule.pause' : 'schedule.resume', `schedule:${name}`);
    return await view(store, name, true);
  } catch (err) {
    throw problemOf(err);
  }
}

/** POST /api/schedules/:name/run: fires it now (the overlap policy applies); its next fire time stays. @throws ApiError 403, 404 */
export async function runScheduleNow(store: Store, name: string, deps: ScheduleDeps, actor?: Actor): Promise<FireResult> {
  try {
    const s = await ownedSchedule(store, name, actor);
    const r = await fireSchedule(store, s, { fireAtMs: deps.now(), kind: 'manual', nextMs: null, note: 'run now' }, deps.fire);
    await record(store, actor ?? null, 'schedule.run', `schedule:${name}`, { outcome: r.outcome, jobId: r.jobId });
    return r;
  } catch (err) {
    throw problemOf(err);
  }
}

/** DELETE /api/schedules/:name (its jobs stay). @throws ApiError 403, 404 */
export async function removeSchedule(store: Store, name: string, actor?: Actor): Promise<void> {
  try {
    await deleteSchedule(store, name, actor);
    await record(store, actor ?? null, 'schedule.delete', `schedule:${name}`);
  } catch (err) {
    throw problemOf(err);
  }
}
