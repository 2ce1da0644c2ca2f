import { describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { jobListRows, listJobRows, startAttempt, submitJob } from '../../lib/store';

/**
 * jobListRows (lib/store/list-rows.ts) reads jobs by id in one statement of jsonb rows decoded by
 * the column table: it must answer exactly what a page read through Prisma (listJobRows: the
 * summary columns, the tasks by index, attempt counts, the latest attempt's nodes, the
 * submitter's name) answers for the same jobs — DateTime, Json, Float and NULLs included — in the
 * order of the ids asked for, skipping ids that are gone.
 */

// A zone far from UTC for this test process: a DateTime read or written as local time shows.
process.env.TZ = 'Pacific/Chatham';

describe.each(DB_KINDS)('jobListRows on %s', (kind) => {
  const t = useDatabase(kind, `store-list-rows-${kind}`);

  it('answers what a page read by Prisma answers, in the order of the ids, without the ids that are gone', async () => {
    const { store, prisma } = t;
    const user = await prisma.user.create({ data: { name: 'list-rows-ü', role: 'member' } });
    const a = await submitJob(store, {
      name: 'rows "quoted" ü',
      specYaml: 'name: rows\n',
      spec: { name: 'rows' },
      specHash: 'h',
      cpus: 0.5,
      gpus: 1,
      labels: [{ accelerator: 'A100' }, {}],
      userId: user.id,
      tasks: [0, 1, 2].map((i) => ({ name: i === 1 ? null : `t${i}`, spec: { run: `echo ${i}`, envs: { K: "it's" }, deep: { list: [1, 2.5, null] } } })),
    });
    const b = await submitJob(store, { name: 'plain', specYaml: 'x: 1\n', spec: {}, specHash: 'h', cpus: 1, tasks: [{ name: 't', spec: {} }] });
    const gone = await submitJob(store, { name: 'gone', specYaml: 'x: 1\n', spec: {}, specHash: 'h', cpus: 1, tasks: [{ name: 't', spec: {} }] });
    // Task 0: attempts 1 and 2 (the latest's nodes answer); task 1: one attempt without nodes; task 2: none.
    const [t0, t1] = a.tasks;
    expect((await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', executor: 'local', logPath: '/tmp/r1.log', reason: 'launch' })).outcome).toBe('applied');
    await prisma.attempt.create({ data: { jobId: a.id, taskId: t0.id, number: 2, status: 'RUNNING', cause: 'restart', executor: 'local', nodes: ['node1', 'node2'] } });
    await prisma.attempt.create({ data: { jobId: a.id, taskId: t1.id, number: 1, status: 'STARTING', executor: 'slurm' } });
    await prisma.job.update({ where: { id: a.id }, data: { startedAt: new Date('2026-01-02T03:04:06.001Z'), statusReason: "it's", pendingPlace: { line: 3, queue: 1 }, priority: -2 } });
    await prisma.job.delete({ where: { id: gone.id } });

    const page = (await listJobRows(store, { sort: 'oldest', limit: 100 })).jobs;
    const byId = new Map(page.map((r) => [r.job.id, r]));
    const got = await jobListRows(store, [b.id, gone.id, a.id, b.id]);
    expect(got).toStrictEqual([byId.get(b.id), byId.get(a.id), byId.get(b.id)]);
    expect(got[1].tasks.map((x) => [x.attempts, x.nodes])).toEqual([[2, ['node1', 'node2']], [1, null], [0, null]]);
    expect(got[1].owner).toBe('list-rows-ü');
    // Read again: the same answer (PGlite: the prepared statement's later runs); none for no ids.
    for (let i = 0; i < 6; i++) expect(await jobListRows(store, [b.id, a.id])).toStrictEqual([byId.get(b.id), byId.get(a.id)]);
    expect(await jobListRows(store, [])).toEqual([]);
  });
});
