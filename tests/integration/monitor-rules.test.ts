/**
 * docs/design.md §5 rules 1–7 (Ray's "Guard recovered monitors against stale job state"), each
 * with its interleaving FORCED through the monitor's seams: the afterScan hook (right after the
 * start-up recovery scan), the beforeWrite hook (between a read/probe and the guarded write),
 * failNextRead (a temporary database failure) and an injected executor. Real database (both
 * kinds), real processes.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import type { Executor } from '../../lib/executors/types';
import { requestCancel } from '../../lib/control';
import { transitionMany, type StoreEvent } from '../../lib/store';
import { storeOf } from '../helpers/store';
import { openDatabase } from '../../lib/db/client';
import { isTransientDbError } from '../../lib/monitor/errors';
import type { Monitor, WriteContext } from '../../lib/monitor/monitor';
import { Fixture, groupAlive, jobTree, story, submit, waitFor, waitStatus, waitTerminal, wrapExecutor } from './monitor-helpers';

/** A one-task job whose run waits for `gate` to exist, then exits with `code`. */
const gated = (gate: string, code = 0, name = 'gated') => `name: ${name}\nrun: |\n  while [ ! -f ${gate} ]; do sleep 0.05; done\n  exit ${code}\n`;

describe.each(DB_KINDS)('monitor rules on %s', (kind) => {
  const t = useDatabase(kind, `monitor-rules-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  /** Starts `yaml` under a first monitor until its attempt RUNS, then stops that monitor. */
  async function runningThenAbandoned(yaml: string): Promise<{ id: number; pid: number }> {
    const m0 = fx.monitor(db);
    await m0.start();
    const id = await submit(db, yaml);
    const j = await waitFor(async () => {
      const x = await jobTree(db, id);
      return x?.status === 'RUNNING' && x.tasks[0].attempts[0]?.status === 'RUNNING' ? x : null;
    }, 'attempt running');
    await m0.stop();
    return { id, pid: j.tasks[0].attempts[0].pid! };
  }

  /** A second monitor with its own executor instance (not the parent: as after a restart). */
  function secondMonitor(opts: Parameters<Fixture['monitor']>[1] = {}): Monitor {
    return fx.monitor(db, { executor: createLocalExecutor({ cpus: 4, pollMs: 200 }), ...opts });
  }

  function eventsFor(id: number): { list: StoreEvent[]; off: () => void } {
    const list: StoreEvent[] = [];
    const l = (e: StoreEvent) => e.jobId === id && list.push(e);
    storeOf(db).bus.on('change', l);
    return { list, off: () => storeOf(db).bus.off('change', l) };
  }

  // ── rule 2: row gone → stop, never re-create ──

  it('rule 2: a job deleted right after the recovery scan is not monitored and never re-created', async () => {
    fx = new Fixture();
    const { id, pid } = await runningThenAbandoned(gated(`${fx.home}/gate`));
    let scanned: number[] = [];
    const m1 = secondMonitor({
      hooks: {
        afterScan: async (ids) => {
          scanned = ids;
          await db.job.delete({ where: { id } }); // deleted between the scan and the monitor's pass
        },
      },
    });
    const seen = eventsFor(id);
    await m1.start();
    await m1.reconcileNow();
    await m1.idle();
    seen.off();
    expect(scanned).toContain(id);
    expect(await db.job.findUnique({ where: { id } })).toBeNull();
    expect(await db.jobEvent.count({ where: { jobId: id } })).toBe(0);
    expect(await db.task.count({ where: { jobId: id } })).toBe(0);
    expect(seen.list).toEqual([]); // no write of any kind for it
    expect(m1.state().jobsWatched).toBe(0);
    process.kill(-pid, 'SIGKILL'); // the orphan of the deleted job (deleted by force in this test)
  });

  it('rule 2: a job deleted between the read and the write: the write finds it gone, the monitor stops', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id } = await runningThenAbandoned(gated(gate, 1));
    writeFileSync(gate, '');
    const phases: string[] = [];
    const m1 = secondMonitor({
      hooks: {
        beforeWrite: async (ctx: WriteContext) => {
          phases.push(ctx.phase);
          if (ctx.jobId === id && ctx.observed?.state === 'exited') await db.job.delete({ where: { id } });
        },
      },
    });
    await waitFor(async () => !groupAlive((await db.attempt.findFirst({ where: { jobId: id } }))!.pid!), 'attempt exit');
    await m1.start();
    await m1.idle();
    await m1.reconcileNow();
    expect(phases.length).toBeGreaterThan(0);
    expect(await db.job.findUnique({ where: { id } })).toBeNull();
    expect(await db.attempt.count({ where: { jobId: id } })).toBe(0);
    expect(m1.state().jobsWatched).toBe(0);
  });

  // ── rule 3: terminal → keep, no second terminal write ──

  it('rule 3: SUCCEEDED written right after the recovery scan is kept; the monitor writes nothing', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id } = await runningThenAbandoned(gated(gate, 1)); // it will exit 1: the monitor would restart it
    const j = (await jobTree(db, id))!;
    const m1 = secondMonitor({
      hooks: {
        afterScan: async () => {
          // another writer settles the job SUCCEEDED between the scan and the monitor's pass
          const r = await transitionMany(storeOf(db), [
            { entity: 'attempt', id: j.tasks[0].attempts[0].id, from: 'RUNNING', to: 'SUCCEEDED' },
            { entity: 'task', id: j.tasks[0].id, from: 'RUNNING', to: 'SUCCEEDED' },
            { entity: 'job', id, from: 'RUNNING', to: 'SUCCEEDED', reason: 'settled elsewhere' },
          ]);
          expect(r.outcome).toBe('applied');
          writeFileSync(gate, '');
        },
      },
    });
    const before = await story(db, id);
    await m1.start();
    await waitFor(async () => !groupAlive(j.tasks[0].attempts[0].pid!), 'process exit');
    await m1.reconcileNow();
    await m1.idle();
    const after = (await jobTree(db, id))!;
    expect(after.status).toBe('SUCCEEDED');
    expect(after.statusReason).toBe('settled elsewhere');
    expect(after.tasks[0].attempts).toHaveLength(1); // no restart
    expect(await story(db, id)).toEqual([...before, 't0a1 RUNNING>SUCCEEDED', 't0 RUNNING>SUCCEEDED', 'job RUNNING>SUCCEEDED']);
  });

  it('rule 3: SUCCEEDED written between the read and the write: the write loses "terminal", nothing else is written', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id } = await runningThenAbandoned(gated(gate, 1));
    writeFileSync(gate, '');
    const j = (await jobTree(db, id))!;
    await waitFor(async () => !groupAlive(j.tasks[0].attempts[0].pid!), 'process exit');
    let hit: WriteContext | null = null;
    const m1 = secondMonitor({
      hooks: {
        beforeWrite: async (ctx) => {
          if (ctx.jobId !== id || hit) return;
          hit = ctx; // the monitor saw exit 1 and is about to restart the task
          await transitionMany(storeOf(db), [
            { entity: 'attempt', id: j.tasks[0].attempts[0].id, from: 'RUNNING', to: 'SUCCEEDED' },
            { entity: 'task', id: j.tasks[0].id, from: 'RUNNING', to: 'SUCCEEDED' },
            { entity: 'job', id, from: 'RUNNING', to: 'SUCCEEDED', reason: 'settled elsewhere' },
          ]);
        },
      },
    });
    const before = await story(db, id);
    await m1.start();
    await m1.idle();
    expect(hit).toMatchObject({ phase: 'settle', observed: { state: 'exited', exitCode: 1 } });
    const after = (await jobTree(db, id))!;
    expect(after.status).toBe('SUCCEEDED');
    expect(after.tasks[0].attempts).toHaveLength(1);
    expect(after.restartCount).toBe(0);
    expect(await story(db, id)).toEqual([...before, 't0a1 RUNNING>SUCCEEDED', 't0 RUNNING>SUCCEEDED', 'job RUNNING>SUCCEEDED']);
  });

  // ── rule 6: temporary read failures are retried, never FAILED ──

  it('rule 6: a temporary failure of the admission read while PENDING is retried; the job runs', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { maxStepErrors: 1 });
    await m.start();
    m.failNextRead('admission');
    const id = await submit(db, 'name: t6a\nrun: echo ok\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(m.state().transientRetries).toBeGreaterThanOrEqual(1);
    expect((await story(db, id)).some((s) => s.includes('FAILED'))).toBe(false);
  });

  it('rule 6: a temporary failure of the job read while PENDING (even with maxStepErrors 1) is retried, never FAILED_CONTROLLER', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { maxStepErrors: 1 });
    const id = await submit(db, 'name: t6b\nrun: echo ok\n');
    m.failNextRead('job');
    m.failNextRead('job');
    await m.admitNow(); // admits it; its step's read fails (twice), each retried with backoff
    expect((await jobTree(db, id))!.status).toBe('PENDING');
    await m.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(m.state().transientRetries).toBeGreaterThanOrEqual(2);
    expect(m.state().controllerFailures).toBe(0);
  });

  it('rule 6 (control): the same step failing with a non-temporary error does end FAILED_CONTROLLER', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { maxStepErrors: 1 });
    const id = await submit(db, 'name: t6c\nrun: echo ok\n');
    m.failNextRead('job', new TypeError('a bug in the monitor'));
    await m.admitNow();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED_CONTROLLER');
    expect(j.statusReason).toBe('monitor error: a bug in the monitor');
    expect(j.tasks[0].status).toBe('FAILED_CONTROLLER');
  });

  if (kind === 'postgresql') {
    it('rule 6: a real unreachable PostgreSQL server is classified as temporary', async () => {
      const dead = await openDatabase({ databaseUrl: 'postgresql://jobdeck:jobdeck@127.0.0.1:1/none', migrate: false });
      const err = await dead.prisma.job.findMany().then(
        () => null,
        (e: unknown) => e,
      );
      await dead.close();
      expect(err).not.toBeNull();
      expect(isTransientDbError(err)).toBe(true);
    });
  }

  // ── rules 4–5: lost race to a non-terminal change → continue with the fresh row, drop the stale observation ──

  it('rules 4–5: PENDING → RUNNING raced by another monitor before a "no resource" verdict is written: verdict dropped, job monitored', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    // Monitor A sees a machine too small for the job (0.5 CPU): its verdict is FAILED_NO_RESOURCE.
    const small = wrapExecutor(fx.executor, { capacity: () => ({ cpus: 0.5 }) });
    const b = fx.monitor(db); // monitor B (e.g. a second server on the same database) can run it
    let raced = false;
    const a = fx.monitor(db, {
      executor: small,
      hooks: {
        beforeWrite: async (ctx) => {
          if (ctx.phase === 'no-resource' && !raced) {
            raced = true;
            expect(ctx.job.status).toBe('PENDING');
            await b.admitNow(); // B admits and launches it: PENDING → STARTING → RUNNING
            await b.idle();
            await b.stop();
          }
        },
      },
    });
    const id = await submit(db, gated(gate, 0, 'raced'));
    await a.admitNow();
    await a.idle();
    expect(raced).toBe(true);
    const j = (await jobTree(db, id))!;
    expect(j.status).toBe('RUNNING'); // not FAILED_NO_RESOURCE: the stale verdict was dropped
    expect(a.state().jobsWatched).toBe(1); // and A kept monitoring it (continue, not return)
    expect(a.state().attemptsWatched).toBe(1);
    writeFileSync(gate, '');
    await a.start();
    const end = await waitTerminal(db, id);
    expect(end.status).toBe('SUCCEEDED');
    expect((await story(db, id)).some((s) => s.includes('NO_RESOURCE'))).toBe(false);
  });

  it('rules 4–5: a "lost" probe taken under RUNNING is dropped when the job moved to CANCELLING before the write', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    // A probe that (wrongly) says "lost" for the running attempt.
    const liar = wrapExecutor(fx.executor, { probe: async () => ({ state: 'lost', reason: 'probe says lost' }) });
    let raced = false;
    const m = fx.monitor(db, {
      executor: liar,
      hooks: {
        beforeWrite: async (ctx) => {
          if (ctx.phase === 'lost' && !raced) {
            raced = true;
            expect(ctx.observed).toEqual({ state: 'lost', reason: 'probe says lost' });
            const r = await requestCancel(storeOf(db), [ctx.jobId]); // RUNNING → CANCELLING, exactly here
            expect(r.cancelling).toEqual([ctx.jobId]);
          }
        },
      },
    });
    await m.start();
    const id = await submit(db, `name: stale\nrun: trap '' TERM; while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    const j = await waitTerminal(db, id);
    expect(raced).toBe(true);
    expect(j.status).toBe('CANCELLED');
    expect(j.recoveryCount).toBe(0); // the stale "lost" never became a recovery
    expect(j.tasks[0].recoveries).toBe(0);
    expect(j.tasks[0].attempts.map((x) => x.status)).toEqual(['CANCELLED']);
    const s = await story(db, id);
    expect(s.some((x) => x.includes('LOST') || x.includes('RECOVERING'))).toBe(false);
    expect(groupAlive(j.tasks[0].attempts[0].pid!)).toBe(false);
  });

  // ── rule 7: the exception path applies the same checks ──

  it('rule 7: exception path on a deleted row: no FAILED_CONTROLLER, no re-creation', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, pid } = await runningThenAbandoned(gated(gate));
    const seen = eventsFor(id);
    let thrown = false;
    const m1 = secondMonitor({
      maxStepErrors: 1,
      hooks: {
        beforeWrite: async (ctx) => {
          if (ctx.jobId === id && ctx.phase !== 'exception' && !thrown) {
            thrown = true;
            await db.job.delete({ where: { id } });
            throw new Error('boom after the delete');
          }
        },
      },
    });
    // make the monitor want to write: the attempt exits
    writeFileSync(gate, '');
    await waitFor(async () => !groupAlive(pid), 'exit');
    await m1.start();
    await m1.idle();
    await m1.reconcileNow();
    seen.off();
    expect(thrown).toBe(true);
    expect(await db.job.findUnique({ where: { id } })).toBeNull();
    expect(await db.jobEvent.count({ where: { jobId: id } })).toBe(0);
    expect(seen.list).toEqual([]);
    expect(m1.state().controllerFailures).toBe(0);
  });

  it('rule 7: exception path on a row that turned terminal: kept as it is', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, pid } = await runningThenAbandoned(gated(gate));
    const j = (await jobTree(db, id))!;
    let thrown = false;
    const m1 = secondMonitor({
      maxStepErrors: 1,
      hooks: {
        beforeWrite: async (ctx) => {
          if (ctx.jobId === id && ctx.phase !== 'exception' && !thrown) {
            thrown = true;
            await transitionMany(storeOf(db), [
              { entity: 'attempt', id: j.tasks[0].attempts[0].id, from: 'RUNNING', to: 'SUCCEEDED' },
              { entity: 'task', id: j.tasks[0].id, from: 'RUNNING', to: 'SUCCEEDED' },
              { entity: 'job', id, from: 'RUNNING', to: 'SUCCEEDED' },
            ]);
            throw new Error('boom after the terminal write');
          }
        },
      },
    });
    writeFileSync(gate, '');
    await waitFor(async () => !groupAlive(pid), 'exit');
    const before = await story(db, id);
    await m1.start();
    await m1.idle();
    expect(thrown).toBe(true);
    expect((await jobTree(db, id))!.status).toBe('SUCCEEDED');
    expect(await story(db, id)).toEqual([...before, 't0a1 RUNNING>SUCCEEDED', 't0 RUNNING>SUCCEEDED', 'job RUNNING>SUCCEEDED']);
    expect(m1.state().controllerFailures).toBe(0);
  });

  it('rule 7 (control): exception path on a live row writes FAILED_CONTROLLER and stops the process group', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, pid } = await runningThenAbandoned(gated(gate));
    const m1 = secondMonitor({
      maxStepErrors: 1,
      executor: wrapExecutor(createLocalExecutor({ cpus: 4 }), {
        probe: async () => {
          throw new Error('probe exploded');
        },
      }),
    });
    await m1.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED_CONTROLLER');
    expect(j.statusReason).toBe('monitor error: probe exploded');
    expect(j.tasks[0].attempts[0].status).toBe('CANCELLED');
    expect(groupAlive(pid)).toBe(false);
    expect(m1.state().controllerFailures).toBe(1);
  });

  it('rule 1: two monitors racing on one job launch exactly one attempt per step', async () => {
    fx = new Fixture();
    // The race is the guarded write's; the launch grace (what a slow launch gets: the next test)
    // is generous, so that a launch slowed by a busy machine is not taken for lost.
    const m1 = fx.monitor(db, { launchGraceMs: 60_000 });
    const m2 = fx.monitor(db, { launchGraceMs: 60_000 });
    const id = await submit(db, 'name: duel\nrun: echo once\n---\nrun: echo twice\n');
    await Promise.all([m1.admitNow(), m2.admitNow()]);
    await Promise.all([m1.start(), m2.start()]);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => x.attempts.length)).toEqual([1, 1]);
    const s = await story(db, id);
    expect(s.filter((x) => x === 'job RUNNING>SUCCEEDED')).toHaveLength(1);
  });

  it('rule 1, slow launch: a second monitor waits out the launch grace instead of calling the attempt lost', async () => {
    // The executor call takes 1.5 s (sbatch on a busy controller): the other monitor sees a
    // STARTING attempt with no handle anywhere for that long, and must not recover it meanwhile.
    fx = new Fixture();
    const ex = fx.executor;
    const slow: Executor = { ...ex, launch: async (req) => (await new Promise((r) => setTimeout(r, 1500)), ex.launch(req)) };
    const m1 = fx.monitor(db, { executor: slow, launchGraceMs: 60_000 });
    const m2 = fx.monitor(db, { executor: slow, launchGraceMs: 60_000 });
    const id = await submit(db, 'name: slow-duel\nrun: echo once\n');
    await Promise.all([m1.admitNow(), m2.admitNow()]);
    await Promise.all([m1.start(), m2.start()]);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => x.attempts.map((a) => [a.status, a.cause]))).toEqual([[['SUCCEEDED', 'first']]]);
  });

  void waitStatus;
});
