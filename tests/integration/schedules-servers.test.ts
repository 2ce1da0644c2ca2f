/**
 * One real check of the fire's guarded write (docs/design.md §19): two jobdeck servers on one
 * PostgreSQL database both run their schedule loop (every 100 ms) on a schedule that fires every
 * 2 s — a seconds cron, allowed here by JOBDECK_SCHEDULE_SECONDS=1, so that the minutes of the
 * issue take seconds; the fire logic is the same. Every fire time gives exactly one job, also
 * after one server is killed (-9) between fires; the fires' rows and the jobs match one to one.
 * Then, on the server left, the overlap policies with a slow job really running: "run now" fires
 * while the schedule's first job runs `sleep` — skip records a skipped fire and no job,
 * cancel_previous stops the running job (its attempt CANCELLED) before it submits the next.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { JobDetail, ScheduleView } from '../../lib/api/types';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { waitFor } from './monitor-helpers';

const ENV = { JOBDECK_SCHEDULE_SECONDS: '1', JOBDECK_SCHEDULE_TICK_MS: '100', JOBDECK_USAGE_INTERVAL_MS: '0', JOBDECK_LEASE_MS: '3000' };

describe('a schedule on two servers sharing PostgreSQL', () => {
  const t = useServerDatabase('postgresql', 'schedules-servers');
  const servers: ServerProcess[] = [];
  const json = { 'content-type': 'application/json' };
  afterAll(async () => {
    for (const s of servers) await s.api('/api/jobs/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ all: true }) }).catch(() => undefined);
  });

  it('fires every time once: one job per fire time, also across a kill -9 of one server', async () => {
    const a = await t.start({ env: ENV });
    const b = await t.start({ home: a.home, token: a.token, env: ENV });
    servers.push(a, b);
    const created = await a.api('/api/schedules', { method: 'POST', headers: json, body: JSON.stringify({ name: 'every-2s', cron: '*/2 * * * * *', yaml: 'name: tick\nrun: "true"\n', overlap: 'allow' }) });
    expect(created.status, await created.clone().text()).toBe(201);
    const fires = async () => ((await (await b.api('/api/schedules/every-2s')).json()) as ScheduleView).fires;
    await waitFor(async () => (await fires()).length >= 3, 'three fires');
    await a.kill9();
    const before = (await fires()).length;
    await waitFor(async () => (await fires()).length >= before + 2, 'two more fires on the survivor');
    expect((await b.api('/api/schedules/every-2s/pause', { method: 'POST', headers: json, body: '{}' })).status).toBe(200);
    const all = await t.db!.prisma.scheduleFire.findMany({ orderBy: { fireAt: 'asc' } });
    const jobs = await t.db!.prisma.job.findMany({ where: { origin: 'schedule' }, orderBy: { id: 'asc' } });
    expect(all.length).toBeGreaterThanOrEqual(5);
    // Distinct cron times (every one a whole even second), each fired once, each with its own job.
    const times = all.map((f) => f.fireAt.getTime());
    expect(new Set(times).size).toBe(times.length);
    for (const ms of times) expect(ms % 2000).toBe(0);
    expect(all.every((f) => f.outcome === 'submitted' && f.jobId !== null)).toBe(true);
    expect(jobs.map((j) => j.id).sort((x, y) => x - y)).toEqual(all.map((f) => f.jobId!).sort((x, y) => x - y));
    expect(jobs.every((j) => j.scheduleId === all[0].scheduleId)).toBe(true);
  });

  it('overlap with a slow job running: skip skips the fire, cancel_previous cancels the running job first', async () => {
    const b = servers[1];
    const post = async (p: string, body: unknown = {}) => {
      const r = await b.api(p, { method: 'POST', headers: json, body: JSON.stringify(body) });
      expect(r.status, `${p}: ${await r.clone().text()}`).toBeLessThan(300);
      return (await r.json()) as { outcome: string; jobId: number | null; detail: string | null };
    };
    const job = async (id: number) => (await (await b.api(`/api/jobs/${id}`)).json()) as JobDetail;
    const running = (id: number) => waitFor(async () => (await job(id)).status === 'RUNNING', `job ${id} to run`);
    // A fire time far away: only "run now" fires here, and it applies the overlap policy too.
    for (const overlap of ['skip', 'cancel_previous']) await post('/api/schedules', { name: `slow-${overlap.replace('_', '-')}`, cron: '0 3 1 1 *', yaml: 'name: slow\nresources: {cpus: 0.1}\nrun: exec sleep 600\n', overlap });

    const s1 = await post('/api/schedules/slow-skip/run');
    expect(s1.outcome).toBe('submitted');
    await running(s1.jobId!);
    expect(await post('/api/schedules/slow-skip/run')).toEqual({ outcome: 'skipped', jobId: null, detail: `run now; job ${s1.jobId} of this schedule still running (overlap: skip)` });
    expect((await job(s1.jobId!)).status).toBe('RUNNING');

    const c1 = await post('/api/schedules/slow-cancel-previous/run');
    await running(c1.jobId!);
    const c2 = await post('/api/schedules/slow-cancel-previous/run');
    expect([c2.outcome, c2.detail]).toEqual(['submitted', `run now; cancelled job ${c1.jobId} (overlap: cancel_previous)`]);
    await waitFor(async () => (await job(c1.jobId!)).status === 'CANCELLED', `job ${c1.jobId} to be cancelled`);
    expect((await job(c1.jobId!)).tasks[0].attemptList.map((x) => x.status)).toEqual(['CANCELLED']);
    expect((await job(c2.jobId!)).status).not.toMatch(/CANCELLED|SUCCEEDED|FAILED/);
  });
});
