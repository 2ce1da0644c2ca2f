/**
 * Cancel and delete (lib/control) with the monitor: PENDING → CANCELLED at once;
 * running → CANCELLING → SIGTERM to the process group, SIGKILL after the grace → CANCELLED, with
 * no process of the job left; hundreds of PENDING jobs in one batch; delete only for terminal
 * jobs, rows and folder. Real database (both kinds), real processes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { deleteJobs, requestCancel } from '../../lib/control';
import { recordCancelRequest, submitJob } from '../../lib/store';
import { storeOf } from '../helpers/store';
import { Fixture, groupAlive, jobTree, story, submit, waitFor, waitTerminal } from './monitor-helpers';

describe.each(DB_KINDS)('cancel and delete on %s', (kind) => {
  const t = useDatabase(kind, `monitor-cancel-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('a SIGTERM-trapping process gets its grace period, then SIGKILL; no process of the job remains', async () => {
    fx = new Fixture();
    const graceMs = 1500;
    const m = fx.monitor(db, { cancelGraceMs: graceMs });
    await m.start();
    const ready = `${fx.home}/ready`;
    // traps TERM (prints and carries on), and keeps a background child in the group
    const yaml = [
      'name: stubborn',
      'run: |',
      "  trap 'echo got TERM' TERM",
      '  sleep 1000 &',
      `  touch ${ready}`,
      '  while true; do sleep 0.1; done',
      '---',
      'run: echo never',
      '',
    ].join('\n');
    const id = await submit(db, yaml);
    await waitFor(async () => existsSync(ready), 'the attempt to be ready');
    const running = await waitFor(async () => (await jobTree(db, id))?.tasks[0].attempts.find((a) => a.status === 'RUNNING' && a.pid), 'attempt RUNNING');
    const pid = running.pid!;
    expect(groupAlive(pid)).toBe(true);
    const t0 = Date.now();
    const r = await requestCancel(storeOf(db), [id]);
    expect(r).toEqual({ cancelled: [], cancelling: [id], alreadyTerminal: [], notFound: [] });
    expect((await jobTree(db, id))!.cancelRequestedAt).not.toBeNull();
    const j = await waitTerminal(db, id);
    const took = Date.now() - t0;
    expect(j.status).toBe('CANCELLED');
    expect(took).toBeGreaterThanOrEqual(graceMs - 50); // SIGKILL only after the grace
    expect(groupAlive(pid)).toBe(false);
    expect(j.tasks.map((x) => x.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(j.tasks[0].attempts.map((a) => a.status)).toEqual(['CANCELLED']);
    expect(j.tasks[1].attempts).toHaveLength(0);
    expect(readFileSync(j.tasks[0].attempts[0].logPath!, 'utf8')).toContain('got TERM');
    const s = await story(db, id);
    expect(s.slice(s.indexOf('job RUNNING>CANCELLING'))).toEqual([
      'job RUNNING>CANCELLING',
      't0a1 RUNNING>CANCELLING',
      't0 RUNNING>CANCELLING',
      't0a1 CANCELLING>CANCELLED',
      't0 CANCELLING>CANCELLED',
      't1 PENDING>CANCELLED',
      'job CANCELLING>CANCELLED',
    ]);
  });

  it('a process that exits on SIGTERM is cancelled without waiting for the grace', async () => {
    fx = new Fixture();
    // A grace far longer than the test may run: the job ending at all means the cancel did not
    // wait for it (no clock in the test).
    const m = fx.monitor(db, { cancelGraceMs: 3_600_000 });
    await m.start();
    const id = await submit(db, 'name: polite\nrun: sleep 1000\n');
    const a = await waitFor(async () => (await jobTree(db, id))?.tasks[0].attempts.find((x) => x.status === 'RUNNING'), 'running');
    await requestCancel(storeOf(db), [id]);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('CANCELLED');
    expect(groupAlive(a.pid!)).toBe(false);
  });

  // A cancel that keeps losing its race against a busy job is recorded durably without a status
  // write (lib/control requestCancel's last resort). That write must wake the monitor like any
  // other: a RUNNING job with a live exit subscription is stepped by the reconcile pass only every
  // 30th pass (~30 s at the default 1 s), which left one of two bulk-cancelled jobs CANCELLING.
  // The reconcile interval here is an hour: only a wake-up from the write can end the job.
  it('a durable cancel request wakes the monitor at once; a watched RUNNING job does not wait for a full pass', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { reconcileMs: 3_600_000, cancelGraceMs: 2000 });
    await m.start();
    const ids = await Promise.all([1, 2].map((i) => submit(db, `name: bulk-${i}\nrun: sleep 300\n`)));
    for (const id of ids) await waitFor(async () => (await jobTree(db, id))?.status === 'RUNNING', `job ${id} RUNNING`);
    expect(await recordCancelRequest(storeOf(db), ids)).toBe(2);
    for (const id of ids) expect((await waitTerminal(db, id, 20_000)).status).toBe('CANCELLED');
  });

  // Two RUNNING jobs cancelled in one request, several times over: each ends CANCELLED, woken by
  // the request itself (no reconcile pass runs: its interval is an hour).
  it('a bulk cancel of two RUNNING jobs ends both CANCELLED, every time', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { reconcileMs: 3_600_000, cancelGraceMs: 2000 });
    await m.start();
    for (let round = 0; round < 5; round++) {
      const ids = await Promise.all([1, 2].map((i) => submit(db, `name: pair-${round}-${i}\nrun: sleep 300\n`)));
      for (const id of ids) await waitFor(async () => (await jobTree(db, id))?.status === 'RUNNING', `job ${id} RUNNING`);
      const r = await requestCancel(storeOf(db), ids);
      expect(r.cancelling).toEqual(ids.sort((a, b) => a - b));
      for (const id of ids) expect((await waitTerminal(db, id, 20_000)).status).toBe('CANCELLED');
    }
  });

  it('PENDING jobs are CANCELLED at once, with all their tasks; a terminal job is reported, nothing written', async () => {
    fx = new Fixture();
    const id = await submit(db, 'name: waits\nrun: echo no\n---\nrun: echo no\n');
    const r = await requestCancel(storeOf(db), [id, 987654321]);
    expect(r).toEqual({ cancelled: [id], cancelling: [], alreadyTerminal: [], notFound: [987654321] });
    const j = (await jobTree(db, id))!;
    expect(j.status).toBe('CANCELLED');
    expect(j.endedAt).not.toBeNull();
    expect(j.tasks.map((x) => x.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(await story(db, id)).toEqual(['job >PENDING', 't0 PENDING>CANCELLED', 't1 PENDING>CANCELLED', 'job PENDING>CANCELLED']);
    const again = await requestCancel(storeOf(db), [id]);
    expect(again).toEqual({ cancelled: [], cancelling: [], alreadyTerminal: [{ id, status: 'CANCELLED' }], notFound: [] });
    expect(await story(db, id)).toHaveLength(4);
    // a monitor started later never runs it
    const m = fx.monitor(db);
    await m.start();
    await m.reconcileNow();
    expect((await jobTree(db, id))!.tasks[0].attempts).toHaveLength(0);
  });

  it('cancels hundreds of PENDING jobs in one batch (every job and task CANCELLED, one event each)', async () => {
    fx = new Fixture();
    const n = 300;
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const job = await submitJob(storeOf(db), {
        name: `bulk-${i}`,
        specYaml: 'run: echo x\n---\nrun: echo y\n',
        spec: { name: `bulk-${i}`, tasks: [] },
        specHash: 'h',
        cpus: 1,
        tasks: [{ spec: { run: 'echo x' } }, { spec: { run: 'echo y' } }],
      });
      ids.push(job.id);
    }
    const done = await submitJob(storeOf(db), { name: 'done', specYaml: 'run: x', spec: {}, specHash: 'h', cpus: 1, tasks: [{ spec: {} }] });
    await requestCancel(storeOf(db), [done.id]);
    const r = await requestCancel(storeOf(db), [...ids, done.id, ids[0], 2_000_000_000]);
    expect(r.cancelled).toEqual(ids);
    expect(r.cancelling).toEqual([]);
    expect(r.alreadyTerminal).toEqual([{ id: done.id, status: 'CANCELLED' }]);
    expect(r.notFound).toEqual([2_000_000_000]);
    expect(await db.job.count({ where: { id: { in: ids }, status: 'CANCELLED' } })).toBe(n);
    expect(await db.task.count({ where: { jobId: { in: ids }, status: 'CANCELLED' } })).toBe(2 * n);
    expect(await db.jobEvent.count({ where: { jobId: { in: ids } } })).toBe(n * (1 + 3)); // submitted + 2 tasks + job
    expect(await db.job.count({ where: { id: { in: ids }, endedAt: null } })).toBe(0);
  });

  it('a running pipeline cancelled between tasks ends CANCELLED; the next task never starts', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    let paused = false;
    const m = fx.monitor(db, {
      hooks: {
        beforeWrite: async (ctx) => {
          // right when task 1 is about to launch, a cancel arrives
          if (ctx.phase === 'launch' && !paused) {
            paused = true;
            await requestCancel(storeOf(db), [ctx.jobId]);
          }
        },
      },
    });
    await m.start();
    const id = await submit(db, `name: between\nrun: echo first\n---\nrun: touch ${gate}\n`);
    const j = await waitTerminal(db, id);
    expect(paused).toBe(true);
    expect(j.status).toBe('CANCELLED');
    expect(j.tasks.map((x) => [x.status, x.attempts.length])).toEqual([
      ['SUCCEEDED', 1],
      ['CANCELLED', 0],
    ]);
    expect(existsSync(gate)).toBe(false);
  });

  it('a cancel while the job waits for capacity (PENDING) is immediate', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    // A blocker holds all 4 CPUs of the fixture, so the 3-CPU job really waits PENDING.
    const blocker = await submit(db, 'name: blocker\nresources:\n  cpus: 4\nrun: sleep 30\n');
    await waitFor(async () => (await jobTree(db, blocker))?.status === 'RUNNING', 'blocker running');
    const id = await submit(db, 'name: huge\nresources:\n  cpus: 3\nrun: echo x\n');
    expect((await jobTree(db, id))?.status).toBe('PENDING');
    const r = await requestCancel(storeOf(db), [id]);
    expect(r).toMatchObject({ cancelled: [id], cancelling: [] }); // immediate: no process to stop
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('CANCELLED');
    expect(j.tasks[0].attempts).toHaveLength(0);
    await requestCancel(storeOf(db), [blocker]);
    await waitTerminal(db, blocker);
  });

  it('delete: only terminal jobs; removes rows and the job folder; refuses running ones with their status', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db);
    await m.start();
    const done = await submit(db, 'name: done\nrun: echo bye\n');
    const running = await submit(db, `name: running\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    const jd = await waitTerminal(db, done);
    await waitFor(async () => (await jobTree(db, running))?.status === 'RUNNING', 'running');
    const folder = `${fx.home}/jobs/${done}`;
    expect(existsSync(jd.tasks[0].attempts[0].logPath!)).toBe(true);
    const r = await deleteJobs(storeOf(db), [done, running, 123456789], { home: fx.home, executor: () => fx.executor });
    expect(r).toEqual({
      deleted: [done],
      refused: [
        { id: running, status: 'RUNNING' },
        { id: 123456789, status: null },
      ],
    });
    expect(await db.job.findUnique({ where: { id: done } })).toBeNull();
    expect(await db.attempt.count({ where: { jobId: done } })).toBe(0);
    expect(await db.jobEvent.count({ where: { jobId: done } })).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect(existsSync(`${fx.home}/jobs/${running}`)).toBe(true);
    writeFileSync(gate, '');
    expect((await waitTerminal(db, running)).status).toBe('SUCCEEDED');
  });
});
