/**
 * The pure part of schedules (docs/design.md §19 "Schedules"): the cron rule (croner — 5 fields,
 * minute precision; 6 with seconds only where the server allows it), the time zone, the overlap
 * and catch-up policies (Temporal's words: overlap skip / allow all / cancel other; catch-up
 * window "last missed run" or none), and what a server does when a schedule is due.
 */
import { Cron } from 'croner';
import { setting, type Env } from '../config';

/** What a fire does while an earlier run of the schedule is live. */
export const OVERLAP_POLICIES = ['skip', 'allow', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** After fire times passed with no server to fire them: run the last of them once, or none. */
export const CATCH_UP_RULES = ['last', 'none'] as const;
export type CatchUpRule = (typeof CATCH_UP_RULES)[number];

/** A schedule name: the rule of queue names (1–63 characters, a–z, 0–9, - and _). */
export const SCHEDULE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Most characters of a cron expression. */
export const MAX_CRON_LENGTH = 200;

function cronOf(expr: string, timezone: string, allowSeconds: boolean): Cron {
  return new Cron(expr, { paused: true, timezone, mode: allowSeconds ? '5-or-6-parts' : '5-part' });
}

/** null when `tz` is an IANA time zone this runtime knows (`UTC`, `Europe/Berlin`), else what is wrong. */
export function timezoneProblem(tz: string): string | null {
  if (tz.length === 0 || tz.length > 64) return 'expected an IANA time zone such as UTC or Europe/Berlin';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return null;
  } catch {
    return `"${tz}" is not a time zone this server knows (expected an IANA name such as UTC or Europe/Berlin)`;
  }
}

/**
 * null when `expr` is a cron expression that fires (5 fields: minute hour day month weekday; 6 with
 * a leading seconds field when `allowSeconds`), else what is wrong, as croner says it.
 */
export function cronProblem(expr: string, timezone: string, allowSeconds = false): string | null {
  if (expr.length === 0 || expr.length > MAX_CRON_LENGTH) return `expected a cron expression of 1–${MAX_CRON_LENGTH} characters, e.g. "0 3 * * *"`;
  const fields = expr.trim().split(/\s+/).length;
  if (fields === 6 && !allowSeconds) return 'expected 5 fields (minute hour day month weekday): a seconds field is not allowed on this server';
  try {
    if (cronOf(expr, timezone, allowSeconds).nextRun(new Date()) === null) return 'the expression never fires';
    return null;
  } catch (err) {
    return `not a cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

/** The first fire time strictly after `afterMs` (ms), or null when there is none. */
export function nextFireAfter(expr: string, timezone: string, afterMs: number, allowSeconds = false): number | null {
  return cronOf(expr, timezone, allowSeconds).nextRun(new Date(afterMs))?.getTime() ?? null;
}

/** What a due schedule does now (planFire). */
export interface FirePlan {
  /** The cron time to fire (ms), or null: fire nothing. */
  fireAtMs: number | null;
  /** "cron": on time; "catch_up": the last of the times missed (more than `graceMs` ago). */
  kind: 'cron' | 'catch_up';
  /** Cron times passed and not fired (the ones before the fired one, or all of them). */
  missed: number;
  /** The schedule's next fire time after now (ms), or null. */
  nextMs: number | null;
}

/** Cron times counted at most when telling how many were missed. */
const MISSED_COUNT_MAX = 10_000;

/**
 * What a schedule whose next fire time `nextFireAtMs` has come (≤ `nowMs`) does: the times due
 * are those from it to now. The latest of them is fired when it is at most `graceMs` old (on
 * time) — and, by the catch-up rule `last`, also when it is older (the server was down: the last
 * missed time is run once); by `none`, an old one is not. Earlier ones are never run. The next
 * fire time is the first one after now.
 */
export function planFire(s: { cron: string; timezone: string; nextFireAtMs: number; catchUp: CatchUpRule }, nowMs: number, graceMs: number, allowSeconds = false): FirePlan {
  const cron = cronOf(s.cron, s.timezone, allowSeconds);
  const prev = cron.previousRuns(1, new Date(nowMs + 1))[0]?.getTime() ?? s.nextFireAtMs;
  const lastMs = Math.max(prev, s.nextFireAtMs);
  let due = 1;
  for (let t = s.nextFireAtMs; due < MISSED_COUNT_MAX; due++) {
    const n = cron.nextRun(new Date(t))?.getTime();
    if (n === undefined || n > lastMs) break;
    t = n;
  }
  const nextMs = cron.nextRun(new Date(nowMs))?.getTime() ?? null;
  const onTime = nowMs - lastMs <= graceMs;
  if (onTime) return { fireAtMs: lastMs, kind: 'cron', missed: due - 1, nextMs };
  if (s.catchUp === 'last') return { fireAtMs: lastMs, kind: 'catch_up', missed: due - 1, nextMs };
  return { fireAtMs: null, kind: 'catch_up', missed: due, nextMs };
}

/** The server's schedule settings (docs/design.md §19; the README's configuration table). */
export interface ScheduleSettings {
  /** How often a server looks for due schedules (ms; JOBDECK_SCHEDULE_TICK_MS, default 1000). */
  tickMs: number;
  /** A fire time at most this old is on time; older ones follow the catch-up rule (ms; JOBDECK_SCHEDULE_GRACE_MS, default 60 s). */
  graceMs: number;
  /** Cron expressions may have a leading seconds field (JOBDECK_SCHEDULE_SECONDS=1; default off). */
  allowSeconds: boolean;
}

/**
 * The schedule settings from the environment.
 * @throws ConfigError naming a malformed variable.
 */
export function scheduleSettingsFromEnv(env: Env): ScheduleSettings {
  return {
    tickMs: setting('JOBDECK_SCHEDULE_TICK_MS', env),
    graceMs: setting('JOBDECK_SCHEDULE_GRACE_MS', env),
    allowSeconds: setting('JOBDECK_SCHEDULE_SECONDS', env),
  };
}
