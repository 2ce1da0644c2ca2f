import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { SUBMIT_IN_FLIGHT, submitJob, submitStatementStats, type Store, type StoreEvent } from '../../lib/store';
import type { PrismaClient } from '../../lib/generated/prisma/client';

/**
 * store.submitJob writes job, tasks and the first event in one statement and builds the rows it
 * answers from its input: they must be exactly what the database holds, and a taken
 * submissionId must surface as Prisma's P2002 with nothing written.
 */
describe.each(DB_KINDS)('store.submitJob on %s', (kind) => {
  const t = useDatabase(kind, `store-submit-${kind}`);
  let prisma: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma, store } = t);
  });

  const input = (submissionId: string | null, tasks = 3) => ({
    name: 'pipeline',
    submissionId,
    specYaml: 'name: pipeline\nrun: echo "ü \'quoted\'"\n',
    spec: { name: 'pipeline', nested: { list: [1, 2.5, null, 'x'], deep: { b: true } }, empty: {} },
    specHash: 'abc',
    cpus: 0.25,
    executor: 'slurm',
    metadata: { owner: 'me', tags: ['a', 'b'] },
    tasks: Array.from({ length: tasks }, (_, i) => ({ name: i === 1 ? null : `t${i}`, spec: { run: `echo ${i}`, envs: { I: String(i) } } })),
  });

  it('answers the rows as stored (job, tasks in order) and announces one created event with the stored JobEvent', async () => {
    const seen: StoreEvent[] = [];
    const listener = (e: StoreEvent) => seen.push(e);
    store.bus.on('change', listener);
    let job: Awaited<ReturnType<typeof submitJob>>;
    try {
      job = await submitJob(store, input('exact-1'));
    } finally {
      store.bus.off('change', listener);
    }
    const stored = await prisma.job.findUniqueOrThrow({ where: { id: job.id }, include: { tasks: { orderBy: { index: 'asc' } } } });
    expect(job).toEqual(stored);
    expect(job.tasks.map((x) => [x.index, x.name, x.status])).toEqual([
      [0, 't0', 'PENDING'],
      [1, null, 'PENDING'],
      [2, 't2', 'PENDING'],
    ]);
    const events = await prisma.jobEvent.findMany({ where: { jobId: job.id } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ entity: 'job', from: null, to: 'PENDING', reason: 'submitted', taskIndex: null, attemptNumber: null });
    expect(events[0].at.getTime()).toBe(stored.submittedAt.getTime());
    const created = seen.filter((e) => e.type === 'created' && e.jobId === job.id);
    expect(created).toHaveLength(1);
    expect(created[0].event).toEqual(events[0]);
  });

  it('stores no metadata as NULL and defaults the executor to local', async () => {
    const { metadata: _m, executor: _e, ...rest } = input(null, 1);
    const job = await submitJob(store, rest);
    const stored = await prisma.job.findUniqueOrThrow({ where: { id: job.id }, include: { tasks: { orderBy: { index: 'asc' } } } });
    expect(job).toEqual(stored);
    expect(stored.metadata).toBeNull();
    expect(stored.executor).toBe('local');
  });

  it('raises P2002 for a taken submissionId and writes nothing', async () => {
    const first = await submitJob(store, input('dup-1', 2));
    const [jobs, tasks, events] = await Promise.all([prisma.job.count(), prisma.task.count(), prisma.jobEvent.count()]);
    const err = await submitJob(store, input('dup-1', 2)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'P2002', meta: { target: ['submissionId'] } });
    expect(await Promise.all([prisma.job.count(), prisma.task.count(), prisma.jobEvent.count()])).toEqual([jobs, tasks, events]);
    expect((await prisma.job.findUniqueOrThrow({ where: { submissionId: 'dup-1' } })).id).toBe(first.id);
  });

  it('refuses a job without tasks before writing', async () => {
    await expect(submitJob(store, input(null, 0))).rejects.toThrow('a job needs at least one task');
  });

  it('writes a burst of concurrent submits in few statements, each job as stored, ids in call order', async () => {
    const n = 40;
    const seen: StoreEvent[] = [];
    const listener = (e: StoreEvent) => seen.push(e);
    const before = submitStatementStats(store);
    store.bus.on('change', listener);
    let jobs: Array<Awaited<ReturnType<typeof submitJob>>>;
    try {
      jobs = await Promise.all(
        Array.from({ length: n }, (_, i) => {
          const one = { ...input(null, 1 + (i % 3)), name: `burst-${i}`, cpus: i / 8 };
          if (i % 4 === 0) delete (one as { metadata?: unknown }).metadata;
          return submitJob(store, one);
        }),
      );
    } finally {
      store.bus.off('change', listener);
    }
    const after = submitStatementStats(store);
    expect(after.jobs - before.jobs).toBe(n);
    // The first SUBMIT_IN_FLIGHT go alone at once; the rest wait for them and go together.
    expect(after.statements - before.statements).toBeLessThanOrEqual(SUBMIT_IN_FLIGHT + 1);
    const stored = await prisma.job.findMany({ where: { id: { in: jobs.map((j) => j.id) } }, include: { tasks: { orderBy: { index: 'asc' } } }, orderBy: { id: 'asc' } });
    expect(stored).toHaveLength(n);
    for (const job of jobs) expect(job).toEqual(stored.find((x) => x.id === job.id));
    expect(jobs.map((j) => j.name)).toEqual(Array.from({ length: n }, (_, i) => `burst-${i}`));
    expect(jobs.map((j) => j.tasks.length)).toEqual(Array.from({ length: n }, (_, i) => 1 + (i % 3)));
    expect(jobs.filter((_, i) => i % 4 === 0).every((j) => j.metadata === null)).toBe(true);
    const batched = jobs.slice(SUBMIT_IN_FLIGHT).map((j) => j.id);
    expect(batched).toEqual([...batched].sort((a, b) => a - b));
    const events = await prisma.jobEvent.findMany({ where: { jobId: { in: jobs.map((j) => j.id) } } });
    expect(events).toHaveLength(n);
    for (const job of jobs) {
      const ev = events.find((e) => e.jobId === job.id)!;
      expect(ev).toMatchObject({ entity: 'job', from: null, to: 'PENDING', reason: 'submitted' });
      expect(ev.at.getTime()).toBe(job.submittedAt.getTime());
      expect(seen.filter((e) => e.type === 'created' && e.jobId === job.id).map((e) => (e.type === 'created' ? e.event : null))).toEqual([ev]);
    }
  });

  it('a batch PostgreSQL refuses is sent again job by job: only the refused jobs fail, nothing of them is written', async () => {
    await submitJob(store, input('taken-1', 1));
    const counts = () => Promise.all([prisma.job.count(), prisma.task.count(), prisma.jobEvent.count()]);
    const [jobs0, tasks0, events0] = await counts();
    const stats0 = submitStatementStats(store);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => {
        // Two go alone (SUBMIT_IN_FLIGHT); 2..11 wait and go as one batch with both bad jobs in it.
        if (i === 5) return submitJob(store, input('taken-1', 2));
        if (i === 8) return submitJob(store, { ...input(null, 1), name: 'nul\u0000byte' });
        return submitJob(store, { ...input(null, 2), name: `ok-${i}` });
      }),
    );
    expect(outcomes[5]).toMatchObject({ status: 'rejected', reason: { code: 'P2002', meta: { target: ['submissionId'] } } });
    expect(outcomes[8].status).toBe('rejected');
    const ok = outcomes.filter((_o, i) => i !== 5 && i !== 8);
    expect(ok.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(await counts()).toEqual([jobs0 + 10, tasks0 + 20, events0 + 10]);
    // 2 alone, the batch of 10 (refused), then its 10 again one by one.
    const stats = submitStatementStats(store);
    expect([stats.statements - stats0.statements, stats.jobs - stats0.jobs]).toEqual([13, 22]);
    for (const o of ok) {
      const job = (o as PromiseFulfilledResult<Awaited<ReturnType<typeof submitJob>>>).value;
      expect(job).toEqual(await prisma.job.findUniqueOrThrow({ where: { id: job.id }, include: { tasks: { orderBy: { index: 'asc' } } } }));
    }
  });

  it('two submits of one new submissionId in one batch: one job, the other gets P2002', async () => {
    const outcomes = await Promise.allSettled([
      submitJob(store, input(null, 1)),
      submitJob(store, input(null, 1)),
      submitJob(store, input('twin-1', 1)),
      submitJob(store, input(null, 1)),
      submitJob(store, input('twin-1', 1)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(outcomes[4]).toMatchObject({ reason: { code: 'P2002', meta: { target: ['submissionId'] } } });
    expect(await prisma.job.count({ where: { submissionId: 'twin-1' } })).toBe(1);
  });
});
