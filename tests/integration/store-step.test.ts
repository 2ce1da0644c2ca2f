import { describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { startAttempt, stepJob, submitJob } from '../../lib/store';
import type { PrismaClient } from '../../lib/generated/prisma/client';

/**
 * stepJob (lib/store/reconcile.ts) reads a job, its tasks and each task's latest attempt in one
 * statement of `to_jsonb` rows decoded by the column table: it must answer exactly what Prisma's
 * include read answers — every column, DateTime, Json, Float and NULLs included, tasks by index,
 * the attempt with the highest number — and null for a job that is gone.
 */

// A zone far from UTC for this test process: a DateTime read or written as local time shows.
process.env.TZ = 'Pacific/Chatham';

function prismaStep(prisma: PrismaClient, id: number) {
  return prisma.job.findUnique({ where: { id }, include: { tasks: { orderBy: { index: 'asc' }, include: { attempts: { orderBy: { number: 'desc' }, take: 1 } } } } });
}

describe.each(DB_KINDS)('stepJob on %s', (kind) => {
  const t = useDatabase(kind, `store-step-${kind}`);

  it('answers the job, its tasks by index and their latest attempts exactly as Prisma reads them', async () => {
    const { store, prisma } = t;
    const job = await submitJob(store, {
      name: 'step ü "quoted"',
      specYaml: 'name: step\n',
      spec: { name: 'step', list: [1, 2.5, -0.001, 1e300, null, 'x', true], deep: { empty: {}, arr: [] } },
      specHash: 'h',
      cpus: 0.5,
      gpus: 1,
      metadata: { team: 'vision', n: '3' },
      labels: [{ accelerator: 'A100' }, {}],
      tasks: [0, 1, 2].map((i) => ({ name: i === 1 ? null : `t${i}`, spec: { run: `echo ${i}` } })),
    });
    // Task 0: attempts 1 and 2 (the latest answers); task 1: one attempt; task 2: none.
    const [t0, t1] = job.tasks;
    const a1 = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', executor: 'local', logPath: '/tmp/a1.log', reason: 'launch' });
    expect(a1.outcome).toBe('applied');
    await prisma.attempt.create({
      data: { jobId: job.id, taskId: t0.id, number: 2, status: 'RUNNING', cause: 'restart', executor: 'local', pid: 2147483647, nodes: ['node1', 'node2'], cpuMs: 12.25, rssBytes: 1e10, startedAt: new Date('1999-12-31T23:59:59.999Z'), usageAt: new Date('2026-01-02T03:04:05.678Z') },
    });
    await prisma.attempt.create({ data: { jobId: job.id, taskId: t1.id, number: 1, status: 'STARTING', executor: 'slurm', logPath: null } });
    await prisma.job.update({ where: { id: job.id }, data: { startedAt: new Date('2026-01-02T03:04:06.001Z'), statusReason: "it's" } });

    const got = await stepJob(store, job.id);
    expect(got).toStrictEqual(await prismaStep(prisma, job.id));
    expect(got!.tasks.map((x) => x.attempts.map((a) => a.number))).toEqual([[2], [1], []]);
    // Read again: the same answer (PGlite: the prepared statement's later runs).
    for (let i = 0; i < 6; i++) expect(await stepJob(store, job.id)).toStrictEqual(got);
  });

  it('answers a job without tasks read yet and null for a job that is gone', async () => {
    const { store, prisma } = t;
    const job = await submitJob(store, { name: 'gone', specYaml: 'x: 1\n', spec: {}, specHash: 'h', cpus: 1, tasks: [{ name: 't', spec: {} }] });
    expect(await stepJob(store, job.id)).toStrictEqual(await prismaStep(prisma, job.id));
    await prisma.job.delete({ where: { id: job.id } });
    expect(await stepJob(store, job.id)).toBeNull();
  });
});
