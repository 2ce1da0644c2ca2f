/**
 * Schedules (docs/design.md §19) on both databases with an injected clock — the loops' own
 * (ScheduleLoop.tick at a time the test sets), so three minutes of cron times take no minutes:
 * two loops on one database (on PostgreSQL: two clients, as two servers) fire each time once;
 * a loop stopped across fire times follows the catch-up rule; the overlap policies with a run
 * still live; pause, resume, run now; what is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { openDatabase, type Database } from '../../lib/db/client';
import { createStore, type Store } from '../../lib/store';
import { createSchedule, ScheduleInputError, setSchedulePaused, fireSchedule } from '../../lib/control';
import { requestCancel } from '../../lib/control/cancel';
import { SpecError } from '../../lib/jobs/spec';
import { logger } from '../../lib/log';
import { NO_ROLE_QUOTAS } from '../../lib/jobs/quotas';
import { ScheduleLoop } from '../../lib/server/schedules';
import type { Actor } from '../../lib/jobs/roles';

const SETTINGS = { tickMs: 1000, graceMs: 60_000, allowSeconds: false };
const T0 = Date.parse('2027-01-04T10:00:30Z');
const MIN = 60_000;
const ADMIN: Actor = { userId: 1, name: 'admin', role: 'admin', tokenId: null, tokenPrefix: null, ip: null };

describe.each(DB_KINDS)('schedules on %s', (kind) => {
  const t = useDatabase(kind, `schedules-${kind}`, { isolation: 'test' });
  let second: Database | null = null;
  let now = T0;
  const loop = (store: Store, settings = SETTINGS) => new ScheduleLoop({ store, settings, quotas: NO_ROLE_QUOTAS, serverId: null, log: logger(), clock: () => now });
  const jobsOf = (scheduleId: number) => t.prisma.job.findMany({ where: { scheduleId }, orderBy: { id: 'asc' } });
  const create = (name: string, extra: Partial<Parameters<typeof createSchedule>[1]> = {}) => createSchedule(t.store, { name, cron: '*/1 * * * *', yaml: `name: ${name}\nrun: "true"\n`, ...extra }, ADMIN, SETTINGS, now);

  beforeAll(async () => {
    if (kind === 'postgresql') second = await openDatabase({ databaseUrl: t.url, migrate: false });
  });
  afterAll(async () => {
    await second?.close();
  });

  it('two loops on one database: three minutes of */1 fire times give exactly three jobs, one per time', async () => {
    now = T0;
    const s = await create('every-minute', { overlap: 'allow' });
    expect(s.nextFireAt?.toISOString()).toBe('2027-01-04T10:01:00.000Z');
    const a = loop(t.store);
    const b = loop(second ? createStore(second.prisma) : t.store);
    for (let m = 1; m <= 3; m++) {
      now = T0 + m * MIN;
      // Both at once: the fire's compare-and-set lets one of them through.
      const [ra, rb] = await Promise.all([a.tick(), b.tick()]);
      expect([...ra, ...rb].filter((r) => r.applied)).toHaveLength(1);
    }
    const jobs = await jobsOf(s.id);
    expect(jobs).toHaveLength(3);
    expect(jobs.map((j) => j.origin)).toEqual(['schedule', 'schedule', 'schedule']);
    const fires = await t.prisma.scheduleFire.findMany({ where: { scheduleId: s.id }, orderBy: { fireAt: 'asc' } });
    expect(fires.map((f) => [f.fireAt.toISOString(), f.kind, f.outcome])).toEqual([
      ['2027-01-04T10:01:00.000Z', 'cron', 'submitted'],
      ['2027-01-04T10:02:00.000Z', 'cron', 'submitted'],
      ['2027-01-04T10:03:00.000Z', 'cron', 'submitted'],
    ]);
    expect(fires.map((f) => f.jobId)).toEqual(jobs.map((j) => j.id));
    expect((await t.prisma.schedule.findUnique({ where: { id: s.id } }))?.nextFireAt?.toISOString()).toBe('2027-01-04T10:04:00.000Z');
  });

  it('catch-up after downtime: "last" runs the last missed time once, "none" runs none and goes on', async () => {
    now = T0;
    const last = await create('catch-last', { overlap: 'allow' });
    const none = await create('catch-none', { overlap: 'allow', catchUp: 'none' });
    // No server from 10:00:30 to 10:06:31: six fire times passed (10:01 … 10:06), the last one
    // 31 s ago — past a grace of 10 s, so it is missed too.
    const short = { ...SETTINGS, graceMs: 10_000 };
    now = T0 + 6 * MIN + 1000;
    await loop(t.store, short).tick();
    const [lastJobs, noneJobs] = [await jobsOf(last.id), await jobsOf(none.id)];
    expect(lastJobs).toHaveLength(1);
    expect(noneJobs).toHaveLength(0);
    const lf = await t.prisma.scheduleFire.findMany({ where: { scheduleId: last.id } });
    expect(lf.map((f) => [f.fireAt.toISOString(), f.kind, f.outcome, f.detail])).toEqual([['2027-01-04T10:06:00.000Z', 'catch_up', 'submitted', 'catch-up of 2027-01-04T10:06:00.000Z; 5 earlier fire times missed while no server ran']]);
    const nf = await t.prisma.scheduleFire.findMany({ where: { scheduleId: none.id } });
    expect(nf.map((f) => [f.kind, f.outcome, f.detail])).toEqual([['catch_up', 'skipped', '6 earlier fire times missed while no server ran (catch_up: none)']]);
    // Both go on at the next time, on time (10:07:05).
    now = T0 + 7 * MIN - 25_000;
    await loop(t.store, short).tick();
    expect(await jobsOf(last.id)).toHaveLength(2);
    expect(await jobsOf(none.id)).toHaveLength(1);
  });

  it('overlap with a run still live: skip writes a skipped fire, allow runs both, cancel_previous cancels it first', async () => {
    now = T0;
    const skip = await create('ov-skip');
    const allow = await create('ov-allow', { overlap: 'allow' });
    const cancel = await create('ov-cancel', { overlap: 'cancel_previous' });
    const l = loop(t.store);
    now = T0 + MIN;
    await l.tick();
    // No monitor runs here: each first job stays PENDING — live, like a slow job.
    now = T0 + 2 * MIN;
    await l.tick();
    const [sj, aj, cj] = [await jobsOf(skip.id), await jobsOf(allow.id), await jobsOf(cancel.id)];
    expect(sj).toHaveLength(1);
    expect(aj.map((j) => j.status)).toEqual(['PENDING', 'PENDING']);
    expect(cj.map((j) => [j.status, j.statusReason])).toEqual([
      ['CANCELLED', 'cancelled by request before it started'],
      ['PENDING', null],
    ]);
    const sf = await t.prisma.scheduleFire.findMany({ where: { scheduleId: skip.id }, orderBy: { id: 'asc' } });
    expect(sf.map((f) => [f.outcome, f.detail])).toEqual([
      ['submitted', null],
      ['skipped', `job ${sj[0].id} of this schedule still running (overlap: skip)`],
    ]);
    // Once the run ended, the next fire submits again.
    await requestCancel(t.store, [sj[0].id]);
    now = T0 + 3 * MIN;
    await l.tick();
    expect(await jobsOf(skip.id)).toHaveLength(2);
  });

  it('pause stops the fires, resume starts from the next time (no catch-up of the pause), run now fires at once', async () => {
    now = T0;
    const s = await create('paused-one', { overlap: 'allow' });
    await setSchedulePaused(t.store, 'paused-one', true, ADMIN, SETTINGS, now);
    now = T0 + 5 * MIN;
    await loop(t.store).tick();
    expect(await jobsOf(s.id)).toHaveLength(0);
    const resumed = await setSchedulePaused(t.store, 'paused-one', false, ADMIN, SETTINGS, now);
    expect(resumed.nextFireAt?.toISOString()).toBe('2027-01-04T10:06:00.000Z');
    const l = loop(t.store);
    const r = await fireSchedule(t.store, resumed, { fireAtMs: now, kind: 'manual', nextMs: null }, l.fire);
    expect([r.applied, r.outcome]).toEqual([true, 'submitted']);
    expect((await t.prisma.schedule.findUnique({ where: { id: s.id } }))?.nextFireAt?.toISOString()).toBe('2027-01-04T10:06:00.000Z');
    expect(await jobsOf(s.id)).toHaveLength(1);
  });

  it('refuses a bad name, cron, time zone, a seconds field, an array, and a spec error at its line; a bad fire is an error fire, not a stop', async () => {
    const bad = (over: Record<string, unknown>) => createSchedule(t.store, { name: 'x', cron: '* * * * *', yaml: 'run: "true"\n', ...over } as never, ADMIN, SETTINGS, now).catch((e: unknown) => e);
    expect(((await bad({ name: 'Bad Name' })) as ScheduleInputError).field).toBe('name');
    expect(((await bad({ cron: '61 * * * *' })) as Error).message).toMatch(/^cron: not a cron expression/);
    expect(((await bad({ cron: '*/5 * * * * *' })) as Error).message).toBe('cron: expected 5 fields (minute hour day month weekday): a seconds field is not allowed on this server');
    expect(((await bad({ timezone: 'Mars/Olympus' })) as Error).message).toBe('timezone: "Mars/Olympus" is not a time zone this server knows (expected an IANA name such as UTC or Europe/Berlin)');
    expect(((await bad({ yaml: 'run: "true"\narray: {num_jobs: 2}\n' })) as SpecError).message).toBe('schedule.yaml array: a schedule submits one job per fire: an array cannot be scheduled (schedule a job that submits it)');
    expect(((await bad({ yaml: 'run: "true"\nnmae: x\n', filename: 'nightly.yaml' })) as SpecError).message).toBe('nightly.yaml:2 task[0].nmae: unknown key "nmae"; did you mean "name"?');
    // A queue deleted after the schedule was made: its fire is an error, the schedule goes on.
    await t.prisma.queue.create({ data: { name: 'gone-soon' } });
    t.store.queueCache = null;
    now = T0;
    const s = await create('queue-gone', { launch: { queue: 'gone-soon' } });
    await t.prisma.queue.delete({ where: { name: 'gone-soon' } });
    t.store.queueCache = null;
    now = T0 + MIN;
    const [r] = await loop(t.store).tick();
    expect([r.applied, r.outcome]).toEqual([true, 'error']);
    expect(r.detail).toMatch(/^the spec no longer validates: schedule queue-gone overrides.queue: queue "gone-soon" is not defined/);
    expect((await t.prisma.schedule.findUnique({ where: { id: s.id } }))?.nextFireAt?.toISOString()).toBe('2027-01-04T10:02:00.000Z');
  });
});
