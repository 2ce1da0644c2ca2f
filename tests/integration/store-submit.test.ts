import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { storeBus, submitJob, type StoreEvent } from '../../lib/jobs/store';
import type { PrismaClient } from '../../lib/generated/prisma/client';

/**
 * store.submitJob writes job, tasks and the first event in one statement and builds the rows it
 * answers from its input: they must be exactly what the database holds, and a taken
 * submissionId must surface as Prisma's P2002 with nothing written.
 */
describe.each(DB_KINDS)('store.submitJob on %s', (kind) => {
  let t: TestDatabase;
  let prisma: PrismaClient;
  beforeAll(async () => {
    t = await createTestDatabase(kind, `store-submit-${kind}`);
    prisma = t.db.prisma;
  });
  afterAll(async () => {
    await t?.dispose();
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
    storeBus().on('change', listener);
    let job: Awaited<ReturnType<typeof submitJob>>;
    try {
      job = await submitJob(prisma, input('exact-1'));
    } finally {
      storeBus().off('change', listener);
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
    const job = await submitJob(prisma, rest);
    const stored = await prisma.job.findUniqueOrThrow({ where: { id: job.id }, include: { tasks: { orderBy: { index: 'asc' } } } });
    expect(job).toEqual(stored);
    expect(stored.metadata).toBeNull();
    expect(stored.executor).toBe('local');
  });

  it('raises P2002 for a taken submissionId and writes nothing', async () => {
    const first = await submitJob(prisma, input('dup-1', 2));
    const [jobs, tasks, events] = await Promise.all([prisma.job.count(), prisma.task.count(), prisma.jobEvent.count()]);
    const err = await submitJob(prisma, input('dup-1', 2)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'P2002', meta: { target: ['submissionId'] } });
    expect(await Promise.all([prisma.job.count(), prisma.task.count(), prisma.jobEvent.count()])).toEqual([jobs, tasks, events]);
    expect((await prisma.job.findUniqueOrThrow({ where: { submissionId: 'dup-1' } })).id).toBe(first.id);
  });

  it('refuses a job without tasks before writing', async () => {
    await expect(submitJob(prisma, input(null, 0))).rejects.toThrow('a job needs at least one task');
  });
});
