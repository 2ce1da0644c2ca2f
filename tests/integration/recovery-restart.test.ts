/**
 * Start-up recovery, in-process (docs/design.md §5 rule 8): a first monitor is dropped while its job
 * runs (processes keep running: they are detached), a second monitor with a fresh executor (not
 * the parent, as after a restart) starts on the same database and data folder. Real database
 * (both kinds), real processes. The real-server kill -9 variant is recovery-server.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readExitRecord } from '../../lib/executors/attempt-record';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import { requestCancel } from '../../lib/control';
import { storeOf } from '../helpers/store';
import type { Monitor } from '../../lib/monitor/monitor';
import { Fixture, groupAlive, jobTree, story, submit, waitFor, waitTerminal, wrapExecutor } from './monitor-helpers';

/** A 2-task pipeline: task 0 quick, task 1 waits for `gate` then exits `code`. */
const pipeline = (gate: string, code = 0, extra = '') =>
  `name: two\n---\nrun: echo one\n---\n${extra}run: |\n  while [ ! -f ${gate} ]; do sleep 0.05; done\n  echo "task 2 attempt $JOBDECK_ATTEMPT exits ${code}"\n  exit ${code}\n`;

describe.each(DB_KINDS)('start-up recovery on %s', (kind) => {
  const t = useDatabase(kind, `recovery-restart-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  /** Runs the pipeline under a first monitor until task 1 RUNS, then drops that monitor. */
  async function runTask2ThenDrop(yaml: string) {
    const m1 = fx.monitor(db);
    await m1.start();
    const id = await submit(db, yaml);
    const a = await waitFor(async () => {
      const j = await jobTree(db, id);
      const x = j?.tasks[1].attempts[0];
      return x?.status === 'RUNNING' && x.pid ? x : null;
    }, 'task 2 running');
    await m1.stop(); // "crash": the monitor is gone; the attempt keeps running (detached)
    expect(groupAlive(a.pid!)).toBe(true);
    return { id, attempt: a };
  }

  function restarted(opts: Parameters<Fixture['monitor']>[1] = {}): Monitor {
    return fx.monitor(db, { executor: createLocalExecutor({ cpus: 4, pollMs: 100 }), ...opts });
  }

  it('reattaches to a task still running: it finishes, task 1 is not re-run, the job SUCCEEDS', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, attempt } = await runTask2ThenDrop(pipeline(gate));
    const before = await story(db, id);
    const m2 = restarted();
    await m2.start();
    expect(m2.state().readopted).toBe(1);
    expect(m2.state().attemptsWatched).toBe(1); // reattached: watched, not relaunched
    writeFileSync(gate, '');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => x.attempts.length)).toEqual([1, 1]);
    expect(j.tasks[1].attempts[0]).toMatchObject({ id: attempt.id, pid: attempt.pid, status: 'SUCCEEDED', exitCode: 0 });
    expect(await story(db, id)).toEqual([...before, 't1a1 RUNNING>SUCCEEDED', 't1 RUNNING>SUCCEEDED', 'job RUNNING>SUCCEEDED']);
    expect(readFileSync(j.tasks[1].attempts[0].logPath!, 'utf8')).toContain('task 2 attempt 1 exits 0');
  });

  it('a task that exited 0 while jobdeck was down is settled SUCCEEDED from its exit file, never re-run', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, attempt } = await runTask2ThenDrop(pipeline(gate));
    writeFileSync(gate, '');
    await waitFor(async () => readExitRecord(path.dirname(attempt.logPath!)) !== null, 'the exit record');
    const m2 = restarted();
    await m2.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => x.attempts.length)).toEqual([1, 1]);
    expect(j.recoveryCount).toBe(0);
  });

  it('a task that failed while jobdeck was down is restarted by the decision (budget 1), not recovered', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, attempt } = await runTask2ThenDrop(pipeline(gate, 5, 'job_recovery:\n  max_restarts_on_errors: 1\n'));
    writeFileSync(gate, '');
    await waitFor(async () => readExitRecord(path.dirname(attempt.logPath!)) !== null, 'the exit record');
    const m2 = restarted();
    await m2.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    expect(j.tasks[1].attempts.map((a) => [a.status, a.exitCode, a.cause])).toEqual([
      ['FAILED', 5, 'first'],
      ['FAILED', 5, 'restart'],
    ]);
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j).toMatchObject({ restartCount: 1, recoveryCount: 0 });
  });

  it('a task that vanished while jobdeck was down (killed, no exit status) is recovered with a new attempt', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, attempt } = await runTask2ThenDrop(pipeline(gate));
    process.kill(-attempt.pid!, 'SIGKILL');
    await waitFor(async () => !groupAlive(attempt.pid!), 'the group to die');
    writeFileSync(gate, '');
    const m2 = restarted();
    await m2.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[1].attempts.map((a) => [a.status, a.cause])).toEqual([
      ['LOST', 'first'],
      ['SUCCEEDED', 'recovery'],
    ]);
    expect(j.tasks[0].attempts).toHaveLength(1); // task 1 never re-run
    expect(j).toMatchObject({ recoveryCount: 1, restartCount: 0 });
  });

  it('a cancel requested while jobdeck was down is honoured after the restart', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, attempt } = await runTask2ThenDrop(pipeline(gate));
    const r = await requestCancel(storeOf(db), [id]); // no monitor runs: the request is only recorded
    expect(r.cancelling).toEqual([id]);
    expect(groupAlive(attempt.pid!)).toBe(true);
    const m2 = restarted();
    await m2.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('CANCELLED');
    expect(groupAlive(attempt.pid!)).toBe(false);
    expect(j.tasks.map((x) => x.status)).toEqual(['SUCCEEDED', 'CANCELLED']);
  });

  it('a crash between the spawn and the RUNNING write: the attempt is found through its handle file and reattached', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    let m1!: Monitor;
    m1 = fx.monitor(db, {
      hooks: {
        beforeWrite: async (ctx) => {
          if (ctx.phase === 'attach') {
            void m1.stop(); // the process dies here: spawned, but its pid never reached the row
            throw new Error('crash');
          }
        },
      },
    });
    await m1.start();
    const id = await submit(db, `name: crash\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    const a = await waitFor(async () => {
      const x = (await jobTree(db, id))?.tasks[0].attempts[0];
      return x && existsSync(path.join(path.dirname(x.logPath!), 'handle.json')) ? x : null;
    }, 'the spawn');
    await m1.idle();
    const row = (await jobTree(db, id))!.tasks[0].attempts[0];
    expect(row).toMatchObject({ status: 'STARTING', executorRef: null, pid: null });
    const m2 = restarted();
    await m2.start();
    await waitFor(async () => (await jobTree(db, id))?.tasks[0].attempts[0].status === 'RUNNING', 'reattached');
    writeFileSync(gate, '');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j.tasks[0].attempts[0].pid).toBeGreaterThan(0);
    expect(j.tasks[0].attempts[0].statusReason).toBe(null); // ended SUCCEEDED; its RUNNING event says why
    const ev = await db.jobEvent.findFirst({ where: { jobId: id, entity: 'attempt', to: 'RUNNING' } });
    expect(ev?.reason).toBe('found running after a restart of jobdeck');
    void a;
  });

  it('a crash after the attempt row was created but before the spawn: recovered (lost twice), not re-run blindly', async () => {
    fx = new Fixture();
    let m1!: Monitor;
    m1 = fx.monitor(db, {
      executor: wrapExecutor(fx.executor, {
        launch: async () => {
          void m1.stop(); // dies before spawning anything
          throw new Error('crash');
        },
      }),
    });
    await m1.start();
    const id = await submit(db, 'name: nospawn\nrun: echo finally\n');
    await waitFor(async () => (await jobTree(db, id))?.tasks[0].attempts.length === 1, 'attempt row');
    await m1.idle();
    expect((await jobTree(db, id))!.tasks[0].attempts[0].status).toBe('STARTING');
    const m2 = restarted();
    await m2.start();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts.map((x) => [x.status, x.cause, x.statusReason])).toEqual([
      ['LOST', 'first', 'never launched: no executor handle recorded'],
      ['SUCCEEDED', 'recovery', null],
    ]);
  });

  it('stop() leaves running attempts running; a PENDING job submitted while down starts after the restart', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const { id, attempt } = await runTask2ThenDrop(pipeline(gate));
    const later = await submit(db, 'name: later\nrun: echo later\n');
    expect(groupAlive(attempt.pid!)).toBe(true);
    const m2 = restarted();
    await m2.start();
    writeFileSync(gate, '');
    expect((await waitTerminal(db, later)).status).toBe('SUCCEEDED');
    expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
  });
});
