/**
 * The pipeline rules (SkyPilot's "retry each task", docs/design.md §5 rules 9–10) against a real
 * database (both kinds) and real processes: a monitor runs in-process with the local executor.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { example, Fixture, jobTree, story, submit, waitFor, waitStatus, waitTerminal, wrapExecutor } from './monitor-helpers';
import { existsSync, readFileSync } from 'node:fs';

describe.each(DB_KINDS)('monitor pipelines on %s', (kind) => {
  const t = useDatabase(kind, `monitor-pipeline-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('runs a one-command job: SUCCEEDED, one attempt, log at Attempt.logPath, times and pid recorded', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, example('hello'));
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.startedAt).not.toBeNull();
    expect(j.endedAt).not.toBeNull();
    const [task] = j.tasks;
    expect(task).toMatchObject({ status: 'SUCCEEDED', exitCode: 0, restarts: 0 });
    expect(task.attempts).toHaveLength(1);
    const a = task.attempts[0];
    expect(a).toMatchObject({ number: 1, status: 'SUCCEEDED', exitCode: 0, cause: 'first' });
    expect(a.pid).toBeGreaterThan(0);
    expect(a.executorRef).toMatch(/^\d+:\d+$/);
    expect(a.startedAt).not.toBeNull();
    expect(a.endedAt).not.toBeNull();
    expect(a.logPath).toBe(`${fx.home}/jobs/${id}/task-0/attempt-1/run.log`);
    expect(readFileSync(a.logPath!, 'utf8')).toContain('hello from jobdeck');
    expect(await story(db, id)).toEqual([
      'job >PENDING',
      't0 PENDING>STARTING',
      't0a1 >STARTING',
      'job PENDING>STARTING',
      't0a1 STARTING>RUNNING',
      't0 STARTING>RUNNING',
      'job STARTING>RUNNING',
      't0a1 RUNNING>SUCCEEDED',
      't0 RUNNING>SUCCEEDED',
      'job RUNNING>SUCCEEDED',
    ]);
  });

  it('seed pipeline: task 1 `exit 1` with 1 restart runs twice, job FAILED, task 2 CANCELLED with no attempt', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, example('seed-retry-pipeline'));
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    expect(j.restartCount).toBe(1);
    const [t1, t2] = j.tasks;
    expect(t1).toMatchObject({ status: 'FAILED', exitCode: 1, restarts: 1 });
    expect(t1.attempts.map((a) => [a.number, a.status, a.exitCode, a.cause])).toEqual([
      [1, 'FAILED', 1, 'first'],
      [2, 'FAILED', 1, 'restart'],
    ]);
    expect(t2.status).toBe('CANCELLED');
    expect(t2.attempts).toHaveLength(0);
    const s = await story(db, id);
    expect(s.filter((x) => x.startsWith('t1'))).toEqual(['t1 PENDING>CANCELLED']);
    expect(s.at(-1)).toBe('job RUNNING>FAILED');
    expect(readFileSync(t1.attempts[1].logPath!, 'utf8')).toContain('task 1, attempt 2');
    expect(m.state().restarts).toBe(1);
  });

  it('the same with the failure in setup ends FAILED_SETUP after two attempts; run never executes', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, example('setup-fails'));
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED_SETUP');
    const [t1] = j.tasks;
    expect(t1).toMatchObject({ status: 'FAILED_SETUP', exitCode: 2, restarts: 1 });
    expect(t1.attempts.map((a) => [a.status, a.exitCode])).toEqual([
      ['FAILED_SETUP', 2],
      ['FAILED_SETUP', 2],
    ]);
    const log = readFileSync(t1.attempts[0].logPath!, 'utf8');
    expect(log).toContain('installing dependencies');
    expect(log).not.toContain('never printed');
  });

  it('with 0 restarts: one attempt, no relaunch', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, 'name: once\nrun: exit 1\n---\nrun: exit 0\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j.tasks[1]).toMatchObject({ status: 'CANCELLED' });
    expect(j.tasks[1].attempts).toHaveLength(0);
    // and nothing relaunches later
    await m.reconcileNow();
    expect((await jobTree(db, id))!.tasks[0].attempts).toHaveLength(1);
  });

  it('3-task pipeline whose MIDDLE task fails once with 1 restart: SUCCEEDED, 4 attempts in all', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, example('middle-task-retry'));
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => [x.status, x.attempts.length, x.restarts])).toEqual([
      ['SUCCEEDED', 1, 0],
      ['SUCCEEDED', 2, 1],
      ['SUCCEEDED', 1, 0],
    ]);
    expect(j.tasks[1].attempts.map((a) => [a.status, a.exitCode, a.cause])).toEqual([
      ['FAILED', 3, 'first'],
      ['SUCCEEDED', 0, 'restart'],
    ]);
    expect(j.restartCount).toBe(1);
    expect(j.currentTask).toBe(2);
    const s = await story(db, id);
    // task 1's restart happens before task 2 ever starts
    expect(s.indexOf('t1a2 >STARTING')).toBeLessThan(s.indexOf('t2 PENDING>STARTING'));
  });

  it('an exit code in recover_on_exit_codes restarts without spending the budget', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    // exits 42 twice (recover_on_exit_codes), then 1 (counted: the single restart), then 1 again → FAILED
    const yaml = [
      'name: codes',
      'job_recovery:',
      '  max_restarts_on_errors: 1',
      '  recover_on_exit_codes: [42]',
      'run: |',
      '  if [ "$JOBDECK_ATTEMPT" -le 2 ]; then exit 42; fi',
      '  exit 1',
      '',
    ].join('\n');
    const id = await submit(db, yaml);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    const [task] = j.tasks;
    expect(task.attempts.map((a) => a.exitCode)).toEqual([42, 42, 1, 1]);
    expect(task.restarts).toBe(1);
    expect(j.restartCount).toBe(1);
    expect(task.attempts.map((a) => a.cause)).toEqual(['first', 'restart', 'restart', 'restart']);
  });

  it('a task without run (and without setup) succeeds at once, without an attempt', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, 'name: gap\n---\nname: first\nenvs:\n  A: "1"\n---\nname: second\nrun: echo second\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts).toHaveLength(0);
    expect(j.tasks[0].status).toBe('SUCCEEDED');
    expect(j.tasks[1].attempts).toHaveLength(1);
  });

  it('a job asking more CPUs than the machine has ends FAILED_NO_RESOURCE with the reason; its later tasks CANCELLED', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, 'name: big\nresources:\n  cpus: 64\nrun: echo never\n---\nrun: echo never\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED_NO_RESOURCE');
    expect(j.statusReason).toBe('asks for 64 CPUs but the local executor has 4 in all');
    expect(j.tasks.map((x) => x.status)).toEqual(['FAILED_NO_RESOURCE', 'CANCELLED']);
    expect(j.tasks[0].attempts).toHaveLength(0);
  });

  it('jobs wait PENDING while their CPUs do not fit, then start in submission order', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db);
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 3\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    const a = await submit(db, 'name: a\nresources:\n  cpus: 2\nrun: echo a\n');
    const b = await submit(db, 'name: b\nresources:\n  cpus: 1\nrun: echo b\n');
    await m.reconcileNow();
    // a (2 CPUs) does not fit next to holder (3 of 4); b (1 CPU) would, but waits behind a.
    expect((await jobTree(db, a))!.status).toBe('PENDING');
    expect((await jobTree(db, b))!.status).toBe('PENDING');
    expect(m.state()).toMatchObject({ jobsWaiting: 2, capacity: { used: 3, total: 4 } });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(gate, '');
    const ja = await waitTerminal(db, a);
    const jb = await waitTerminal(db, b);
    expect([ja.status, jb.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    // b never started beside holder (no backfill past a): both start once holder ended, admitted
    // by one pass in line order — their launches then run side by side, so which one's start is
    // written first (to the millisecond) is not the order's to say.
    const endedAt = (await jobTree(db, holder))!.endedAt!.getTime();
    expect(ja.startedAt!.getTime()).toBeGreaterThanOrEqual(endedAt);
    expect(jb.startedAt!.getTime()).toBeGreaterThanOrEqual(endedAt);
  });

  it('a job that cannot start within the start timeout ends FAILED_NO_RESOURCE (injected clock)', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    let offset = 0;
    const m = fx.monitor(db, { clock: { now: () => Date.now() + offset }, startTimeoutMs: 60_000 });
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    const w = await submit(db, 'name: waits\nrun: echo x\n');
    await m.reconcileNow();
    expect((await jobTree(db, w))!.status).toBe('PENDING');
    offset = 61_000; // a minute passes
    await m.reconcileNow();
    const j = await waitTerminal(db, w);
    expect(j.status).toBe('FAILED_NO_RESOURCE');
    expect(j.statusReason).toMatch(/could not start within 60 s/);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(gate, '');
    expect((await waitTerminal(db, holder)).status).toBe('SUCCEEDED');
    void existsSync;
  });

  // docs/design.md §6 "The monitor's systems": the attach of a one-task job arms the deadline
  // itself; the read after it (with its probe) is not made.
  it('a one-task job is probed once from its launch to RUNNING, and its max_duration still holds', async () => {
    fx = new Fixture();
    const probes = new Map<string, number>();
    const executor = wrapExecutor(fx.executor, {
      probe: (h) => {
        probes.set(h.ref, (probes.get(h.ref) ?? 0) + 1);
        return fx.executor.probe(h);
      },
    });
    // No reconcile pass during the test: every step is one the job's own events asked for.
    const m = fx.monitor(db, { executor, reconcileMs: 600_000 });
    await m.start();
    const id = await submit(db, ['name: probed-once', 'max_duration: 3s', 'run: sleep 30', ''].join('\n'));
    await waitStatus(db, id, 'RUNNING');
    await new Promise((r) => setTimeout(r, 500));
    expect([...probes.values()]).toEqual([1]);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    expect(j.tasks[0].attempts[0].statusReason).toContain('max_duration');
  });
});
