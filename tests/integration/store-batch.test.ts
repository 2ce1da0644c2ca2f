import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { openDatabase, type Database } from '../../lib/db/client';
import { createStore, inTransaction, startAttempt, submitJob, transitionMany, type AnyTransition, type Store, type StoreEvent } from '../../lib/store';
import { Prisma, type Attempt, type Job, type PrismaClient, type Task } from '../../lib/generated/prisma/client';

/**
 * store.transitionMany / startAttempt write a whole batch in one SQL statement and decode the
 * rows it answers from `to_jsonb` with the store's own column table: those rows must be exactly
 * what Prisma reads back (every column of Job, Task and Attempt, DateTime / Json / Float /
 * nullable ones included), a batch that loses one guard must write nothing, and — on
 * PostgreSQL, with a second connection holding the row — two batches on one row must never both
 * apply.
 */

// A zone far from UTC for this test process: a DateTime read or written as local time shows.
process.env.TZ = 'Pacific/Chatham';

function newJob(name: string, tasks = 1) {
  return {
    name,
    specYaml: `name: ${name}\nrun: echo hi\n`,
    spec: { name },
    specHash: 'h',
    cpus: 1,
    tasks: Array.from({ length: tasks }, (_, i) => ({ name: `t${i}`, spec: { run: `echo ${i}` } })),
  };
}

/** Everything of a job the store writes: the job, its tasks, their attempts, its events. */
async function snapshot(prisma: PrismaClient, jobId: number) {
  return {
    job: await prisma.job.findUnique({ where: { id: jobId } }),
    tasks: await prisma.task.findMany({ where: { jobId }, orderBy: { id: 'asc' } }),
    attempts: await prisma.attempt.findMany({ where: { jobId }, orderBy: { id: 'asc' } }),
    events: await prisma.jobEvent.findMany({ where: { jobId }, orderBy: { id: 'asc' } }),
  };
}

/** Collects the store bus's announcements while `fn` runs. */
async function announced<T>(store: Store, fn: () => Promise<T>): Promise<{ value: T; seen: StoreEvent[] }> {
  const seen: StoreEvent[] = [];
  const listener = (e: StoreEvent) => seen.push(e);
  store.bus.on('change', listener);
  try {
    return { value: await fn(), seen };
  } finally {
    store.bus.off('change', listener);
  }
}

describe.each(DB_KINDS)('store batch statement on %s', (kind) => {
  const t = useDatabase(kind, `store-batch-${kind}`);
  let prisma: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma, store } = t);
  });

  it('answers every column of the written Job, Task and Attempt rows exactly as a fresh Prisma read', async () => {
    const job = await submitJob(store, newJob('columns', 2));
    const [t0] = job.tasks;
    const started = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', executor: 'slurm', logPath: '/tmp/a.log', reason: 'launch' });
    expect(started.outcome).toBe('applied');
    if (started.outcome !== 'applied') return;
    expect(started.row).toStrictEqual(await prisma.attempt.findUniqueOrThrow({ where: { id: started.row.id } }));

    const at = (s: string) => new Date(s);
    const spec = { name: 'ü "quoted"', list: [1, 2.5, -0.001, 1e300, null, 'x', true], deep: { empty: {}, arr: [] } };
    const tr: AnyTransition[] = [
      {
        entity: 'attempt',
        id: started.row.id,
        from: 'STARTING',
        to: 'RUNNING',
        reason: 'attached',
        data: {
          executorRef: '4242',
          pid: 2147483647,
          pidStartTime: '123456789',
          exitCode: null,
          logPath: null,
          cause: 'restart',
          executor: 'local',
          // DateTime as a Date, as an ISO string, and whole seconds (to_jsonb drops the fraction).
          createdAt: at('2026-01-02T03:04:05.678Z'),
          startedAt: '2026-01-02T03:04:06.001Z',
          endedAt: at('2026-01-02T03:04:07.000Z'),
        },
      },
      {
        entity: 'task',
        id: t0.id,
        from: 'STARTING',
        to: 'RUNNING',
        data: { name: null, spec, restarts: { increment: 2 }, recoveries: { set: 3 }, exitCode: -1, startedAt: at('1999-12-31T23:59:59.999Z'), endedAt: null },
      },
      {
        entity: 'job',
        id: job.id,
        from: 'PENDING',
        to: 'RUNNING',
        reason: null,
        data: {
          submissionId: `columns-${kind}`,
          name: 'renamed',
          specYaml: 'a: 1\n',
          spec: [1, 'two', { three: 3 }],
          specHash: 'h2',
          cpus: 1 / 3,
          metadata: { owner: 'me', n: 0.1 + 0.2 },
          executor: 'slurm',
          submittedAt: at('2026-02-03T04:05:06.789Z'),
          startedAt: at('2026-02-03T04:05:07.000Z'),
          endedAt: null,
          cancelRequestedAt: at('2026-02-03T04:05:08.123Z'),
          restartCount: { increment: 1 },
          recoveryCount: 7,
          currentTask: 1,
          taskCount: { set: 2 },
        },
      },
    ];
    const { value: r, seen } = await announced(store, () => transitionMany(store, tr));
    expect(r.outcome).toBe('applied');
    if (r.outcome !== 'applied') return;
    const [ra, rt, rj] = r.rows as [Attempt, Task, Job];
    expect(ra).toStrictEqual(await prisma.attempt.findUniqueOrThrow({ where: { id: started.row.id } }));
    expect(rt).toStrictEqual(await prisma.task.findUniqueOrThrow({ where: { id: t0.id } }));
    expect(rj).toStrictEqual(await prisma.job.findUniqueOrThrow({ where: { id: job.id } }));
    // The values written, read back through Prisma: not a shared decoding mistake.
    expect(rt).toMatchObject({ restarts: 2, recoveries: 3, exitCode: -1, spec, name: null });
    expect(rj).toMatchObject({ cpus: 1 / 3, restartCount: 1, taskCount: 2, statusReason: null, metadata: { owner: 'me', n: 0.1 + 0.2 } });
    expect(rj.updatedAt.getTime()).toBe(r.events[2].at.getTime());
    expect([ra.createdAt, ra.startedAt, rt.startedAt, rj.submittedAt].map((d) => d?.toISOString())).toEqual([
      '2026-01-02T03:04:05.678Z',
      '2026-01-02T03:04:06.001Z',
      '1999-12-31T23:59:59.999Z',
      '2026-02-03T04:05:06.789Z',
    ]);

    // Events: in transition order, serial ids ascending, equal to the stored rows; announced with the rows.
    const stored = await prisma.jobEvent.findMany({ where: { jobId: job.id }, orderBy: { id: 'asc' } });
    expect(r.events).toStrictEqual(stored.slice(-3));
    expect(r.events.map((e) => [e.entity, e.taskIndex, e.attemptNumber, e.from, e.to, e.reason])).toEqual([
      ['attempt', 0, 1, 'STARTING', 'RUNNING', 'attached'],
      ['task', 0, null, 'STARTING', 'RUNNING', null],
      ['job', null, null, 'PENDING', 'RUNNING', null],
    ]);
    expect(seen.filter((e) => e.jobId === job.id)).toStrictEqual(r.events.map((event, i) => ({ type: 'event', jobId: job.id, event, row: r.rows[i] })));

    // Json nulls: JSON null and SQL NULL in a nullable Json column; a float of no fraction.
    for (const metadata of [Prisma.JsonNull, Prisma.DbNull]) {
      const before = await prisma.job.findUniqueOrThrow({ where: { id: job.id } });
      const w = await transitionMany(store, [{ entity: 'job', id: job.id, from: before.status as 'RUNNING', to: 'RECOVERING', data: { metadata, cpus: 2 } }]);
      expect(w.outcome).toBe('applied');
      if (w.outcome !== 'applied') return;
      expect(w.rows[0]).toStrictEqual(await prisma.job.findUniqueOrThrow({ where: { id: job.id } }));
      await transitionMany(store, [{ entity: 'job', id: job.id, from: 'RECOVERING', to: 'RUNNING' }]);
    }
  });

  it('startAttempt answers its attempt, announces before / task / attempt / after in order, each write with its row', async () => {
    const job = await submitJob(store, newJob('start', 1));
    const [t0] = job.tasks;
    const first = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', after: [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' }] });
    if (first.outcome !== 'applied') throw new Error('first attempt lost');
    await transitionMany(store, [
      { entity: 'attempt', id: first.row.id, from: 'STARTING', to: 'RUNNING' },
      { entity: 'task', id: t0.id, from: 'STARTING', to: 'RUNNING' },
      { entity: 'job', id: job.id, from: 'STARTING', to: 'RUNNING' },
    ]);
    const { value: second, seen } = await announced(store, () =>
      startAttempt(store, {
        taskId: t0.id,
        taskFrom: 'RUNNING',
        number: 2,
        cause: 'restart',
        reason: 'task 0: restarting',
        taskData: { exitCode: 1, restarts: { increment: 1 } },
        before: [{ entity: 'attempt', id: first.row.id, from: 'RUNNING', to: 'FAILED', reason: 'exit code 1', data: { exitCode: 1, endedAt: new Date() } }],
        after: [{ entity: 'job', id: job.id, from: 'RUNNING', to: 'STARTING', reason: 'restarting', data: { restartCount: 1 } }],
      }),
    );
    expect(second.outcome).toBe('applied');
    if (second.outcome !== 'applied') return;
    const now = await snapshot(prisma, job.id);
    expect(second.row).toStrictEqual(now.attempts[1]);
    expect(second.event).toStrictEqual(now.events.at(-2));
    const mine = seen.filter((e) => e.jobId === job.id);
    expect(mine.map((e) => e.event)).toStrictEqual(now.events.slice(-4));
    expect(mine.map((e) => [e.event!.entity, e.event!.from, e.event!.to, e.event!.reason])).toEqual([
      ['attempt', 'RUNNING', 'FAILED', 'exit code 1'],
      ['task', 'RUNNING', 'STARTING', 'task 0: restarting'],
      ['attempt', null, 'STARTING', 'restart'],
      ['job', 'RUNNING', 'STARTING', 'restarting'],
    ]);
    expect(mine.map((e) => e.row)).toStrictEqual([now.attempts[0], now.tasks[0], undefined, now.job]);
    expect(now.tasks[0]).toMatchObject({ status: 'STARTING', restarts: 1, exitCode: 1, statusReason: 'task 0: restarting' });
  });

  it('a batch whose 2nd of 3 guards fails writes nothing and names that write with its fresh row', async () => {
    const job = await submitJob(store, newJob('second-guard', 2));
    const [t0, t1] = job.tasks;
    const before = await snapshot(prisma, job.id);
    const { value: r, seen } = await announced(store, () =>
      transitionMany(store, [
        { entity: 'task', id: t0.id, from: 'PENDING', to: 'CANCELLED', reason: 'would apply', data: { endedAt: new Date() } },
        { entity: 'task', id: t1.id, from: 'STARTING', to: 'RUNNING', data: { startedAt: new Date() } }, // t1 is PENDING
        { entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', reason: 'would apply', data: { currentTask: 1 } },
      ]),
    );
    expect(r).toStrictEqual({ outcome: 'lost', index: 1, reason: 'moved', row: before.tasks[1] });
    expect(await snapshot(prisma, job.id)).toStrictEqual(before);
    expect(seen.filter((e) => e.jobId === job.id)).toEqual([]);
  });

  it('names the first loser in transition order: gone before terminal', async () => {
    const live = await submitJob(store, newJob('live'));
    const done = await submitJob(store, newJob('done'));
    await transitionMany(store, [{ entity: 'job', id: done.id, from: 'PENDING', to: 'CANCELLED' }]);
    const before = await snapshot(prisma, live.id);
    const r = await transitionMany(store, [
      { entity: 'job', id: live.id, from: 'PENDING', to: 'STARTING' },
      { entity: 'task', id: 987_654_321, from: 'PENDING', to: 'STARTING' },
      { entity: 'job', id: done.id, from: 'PENDING', to: 'STARTING' },
    ]);
    expect(r).toStrictEqual({ outcome: 'lost', index: 1, reason: 'gone' });
    const r2 = await transitionMany(store, [
      { entity: 'job', id: live.id, from: 'PENDING', to: 'STARTING' },
      { entity: 'job', id: done.id, from: 'PENDING', to: 'STARTING' },
    ]);
    expect(r2).toMatchObject({ outcome: 'lost', index: 1, reason: 'terminal', row: { id: done.id, status: 'CANCELLED' } });
    expect(await snapshot(prisma, live.id)).toStrictEqual(before);
  });

  it('startAttempt with a taken attempt number raises P2002 and writes nothing', async () => {
    const job = await submitJob(store, newJob('taken'));
    const [t0] = job.tasks;
    const a = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first' });
    expect(a.outcome).toBe('applied');
    await transitionMany(store, [{ entity: 'task', id: t0.id, from: 'STARTING', to: 'RUNNING' }]);
    const before = await snapshot(prisma, job.id);
    const err = await startAttempt(store, {
      taskId: t0.id,
      taskFrom: 'RUNNING',
      number: 1,
      cause: 'restart',
      after: [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' }],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    expect(err).toMatchObject({ code: 'P2002', meta: { modelName: 'Attempt', target: ['taskId', 'number'] } });
    expect(await snapshot(prisma, job.id)).toStrictEqual(before);
  });

  it('refuses before any query: a row written twice, a column the entity does not have, a value its column cannot hold', async () => {
    const job = await submitJob(store, newJob('refused'));
    const before = await snapshot(prisma, job.id);
    await expect(
      transitionMany(store, [
        { entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' },
        { entity: 'job', id: job.id, from: 'STARTING', to: 'RUNNING' },
      ]),
    ).rejects.toThrow(/writes job \d+ twice/);
    await expect(transitionMany(store, [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', data: { nope: 1 } as never }])).rejects.toThrow(/not a writable column/);
    await expect(transitionMany(store, [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', data: { id: 5 } as never }])).rejects.toThrow(/not a writable column/);
    await expect(transitionMany(store, [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', data: { currentTask: 1.5 } }])).rejects.toBeInstanceOf(TypeError);
    await expect(transitionMany(store, [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', data: { startedAt: new Date('nope') } }])).rejects.toBeInstanceOf(TypeError);
    // Data is never SQL text: a column value that looks like SQL is stored as it is.
    const sneaky = `x'); DELETE FROM "Job"; --`;
    const r = await transitionMany(store, [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', reason: sneaky, data: { name: sneaky } }]);
    expect(r).toMatchObject({ outcome: 'applied', rows: [{ name: sneaky, statusReason: sneaky }] });
    expect(await prisma.job.count({ where: { id: before.job!.id } })).toBe(1);
  });

  it('runs inside a caller transaction (composition): rolled back with it, announced by no one', async () => {
    const job = await submitJob(store, newJob('compose'));
    const before = await snapshot(prisma, job.id);
    const { seen } = await announced(store, async () => {
      const err = await prisma
        .$transaction(async (tx) => {
          const r = await transitionMany(inTransaction(store, tx), [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' }]);
          expect(r.outcome).toBe('applied');
          throw new Error('roll back');
        })
        .catch((e: Error) => e);
      expect(err).toMatchObject({ message: 'roll back' });
    });
    expect(seen.filter((e) => e.jobId === job.id)).toEqual([]);
    expect(await snapshot(prisma, job.id)).toStrictEqual(before);
  });
});

describe('store batch statement: concurrent writers on postgresql', () => {
  const t = useDatabase('postgresql', 'store-batch-race');
  let prisma: PrismaClient;
  let store: Store;
  let other: Database;
  let otherStore: Store;
  let admin: pg.Client;
  beforeAll(async () => {
    ({ prisma, store } = t);
    // A second Prisma client on the same database: its own connections.
    other = await openDatabase({ databaseUrl: t.url!, migrate: false });
    otherStore = createStore(other.prisma);
    admin = new pg.Client({ connectionString: t.url! });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await other?.close();
  });

  /** Resolves once `n` sessions of this database wait for a row lock. */
  async function lockWaiters(n: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      if (r.rows[0].n >= n) return;
      if (Date.now() > deadline) throw new Error('no session waits for the lock');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * Runs `first` in an open transaction of the second client (its batch holds its rows), starts
   * `second` on the main client, waits until it blocks on a row lock, runs `more` in the open
   * transaction, then commits it.
   */
  async function interleave<T>(first: AnyTransition[], second: () => Promise<T>, more: AnyTransition[] = []) {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const tx = other.prisma.$transaction(
      async (tx) => {
        const a = await transitionMany(inTransaction(otherStore, tx), first);
        held();
        await released;
        const b = more.length ? await transitionMany(inTransaction(otherStore, tx), more) : null;
        return { a, b };
      },
      { timeout: 120_000 },
    );
    await holding;
    const late = second();
    late.catch(() => undefined);
    await lockWaiters(1);
    release();
    const firstResult = await tx;
    return { firstResult, secondResult: await late };
  }

  it('two batches on one row: the one that waited for the lock loses (moved) with the fresh row and leaves no event', async () => {
    const job = await submitJob(store, newJob('race-moved', 2));
    const [t0, t1] = job.tasks;
    const { firstResult, secondResult } = await interleave(
      [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING', reason: 'first' }],
      () =>
        transitionMany(store, [
          { entity: 'task', id: t1.id, from: 'PENDING', to: 'CANCELLED', reason: 'second' },
          { entity: 'job', id: job.id, from: 'PENDING', to: 'CANCELLING', reason: 'second' },
          { entity: 'task', id: t0.id, from: 'PENDING', to: 'CANCELLED', reason: 'second' },
        ]),
    );
    expect(firstResult.a.outcome).toBe('applied');
    const now = await snapshot(prisma, job.id);
    expect(now.job).toMatchObject({ status: 'STARTING', statusReason: 'first' });
    expect(secondResult).toStrictEqual({ outcome: 'lost', index: 1, reason: 'moved', row: now.job });
    expect(now.tasks.map((x) => [x.status, x.statusReason])).toEqual([
      ['PENDING', null],
      ['PENDING', null],
    ]);
    expect(now.events.filter((e) => e.reason === 'second')).toEqual([]);
    expect(now.events.map((e) => e.to)).toEqual(['PENDING', 'STARTING']);
  });

  it('two batches on one row: a terminal winner makes the waiting batch lose (terminal) and write nothing', async () => {
    const job = await submitJob(store, newJob('race-terminal'));
    const [t0] = job.tasks;
    const { firstResult, secondResult } = await interleave(
      [
        { entity: 'task', id: t0.id, from: 'PENDING', to: 'CANCELLED', reason: 'first' },
        { entity: 'job', id: job.id, from: 'PENDING', to: 'CANCELLED', reason: 'first' },
      ],
      () => startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', reason: 'second', after: [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' }] }),
    );
    expect(firstResult.a.outcome).toBe('applied');
    const now = await snapshot(prisma, job.id);
    expect(secondResult).toStrictEqual({ outcome: 'lost', reason: 'terminal', row: now.tasks[0] });
    expect(now.attempts).toEqual([]);
    expect(now.events.map((e) => [e.entity, e.to, e.reason])).toEqual([
      ['job', 'PENDING', 'submitted'],
      ['task', 'CANCELLED', 'first'],
      ['job', 'CANCELLED', 'first'],
    ]);
  });

  it('a concurrent write that leaves the status alone: the waiting batch applies on top of it (newest row version)', async () => {
    const job = await submitJob(store, newJob('race-same-status'));
    const [t0] = job.tasks;
    const a = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first' });
    if (a.outcome !== 'applied') throw new Error('attempt lost');
    // The competitor changes the attempt's pid without a status change, in a plain UPDATE.
    const c = new pg.Client({ connectionString: t.url! });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query(`UPDATE "Attempt" SET "pid" = 777 WHERE "id" = $1`, [a.row.id]);
      const late = transitionMany(store, [
        { entity: 'task', id: t0.id, from: 'STARTING', to: 'RUNNING' },
        { entity: 'attempt', id: a.row.id, from: 'STARTING', to: 'RUNNING', data: { executorRef: 'ref' } },
      ]);
      late.catch(() => undefined);
      await lockWaiters(1);
      await c.query('COMMIT');
      const r = await late;
      expect(r.outcome).toBe('applied');
      if (r.outcome !== 'applied') return;
      const row = await prisma.attempt.findUniqueOrThrow({ where: { id: a.row.id } });
      expect(row).toMatchObject({ status: 'RUNNING', pid: 777, executorRef: 'ref' });
      expect(r.rows[1]).toStrictEqual(row);
    } finally {
      await c.end();
    }
  });

  it('batches lock jobs before tasks before attempts, whatever their order: no deadlock with a job-first writer', async () => {
    const job = await submitJob(store, newJob('lock-order'));
    const [t0] = job.tasks;
    const a = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', after: [{ entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' }] });
    if (a.outcome !== 'applied') throw new Error('attempt lost');
    // The open transaction holds the job, then (after the batch below waits) takes the attempt.
    // Locking in the batch's own order (attempt first) would deadlock the two.
    const { firstResult, secondResult } = await interleave(
      [{ entity: 'job', id: job.id, from: 'STARTING', to: 'CANCELLING', reason: 'first' }],
      () =>
        transitionMany(store, [
          { entity: 'attempt', id: a.row.id, from: 'STARTING', to: 'RUNNING' },
          { entity: 'task', id: t0.id, from: 'STARTING', to: 'RUNNING' },
          { entity: 'job', id: job.id, from: 'STARTING', to: 'RUNNING' },
        ]),
      [{ entity: 'attempt', id: a.row.id, from: 'STARTING', to: 'CANCELLING', reason: 'first' }],
    );
    expect(firstResult.a.outcome).toBe('applied');
    expect(firstResult.b?.outcome).toBe('applied');
    const now = await snapshot(prisma, job.id);
    expect(secondResult).toStrictEqual({ outcome: 'lost', index: 0, reason: 'moved', row: now.attempts[0] });
    expect(now.attempts[0].status).toBe('CANCELLING');
    expect(now.tasks[0].status).toBe('STARTING');
  });
});
