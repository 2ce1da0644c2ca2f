import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import {
  deleteTerminalJobs,
  startAttempt,
  submitJob,
  transition,
  transitionJob,
  transitionMany,
  transitionTask,
  type Store,
  type StoreEvent,
} from '../../lib/store';
import { IllegalTransitionError } from '../../lib/jobs/status';
import type { PrismaClient } from '../../lib/generated/prisma/client';

function newJob(name = 'job', tasks = 1) {
  return {
    name,
    specYaml: `name: ${name}\nrun: echo hi\n`,
    spec: { name, tasks: [] },
    specHash: 'h',
    cpus: 1,
    tasks: Array.from({ length: tasks }, (_, i) => ({ name: `t${i}`, spec: { run: 'echo hi' } })),
  };
}

async function eventCount(prisma: PrismaClient, jobId: number) {
  return prisma.jobEvent.count({ where: { jobId } });
}

describe.each(DB_KINDS)('guarded store on %s', (kind) => {
  const t = useDatabase(kind, `store-${kind}`);
  let prisma: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma, store } = t);
  });

  it('submits a job with its tasks and one PENDING event', async () => {
    const job = await submitJob(store, newJob('submit', 3));
    expect(job.status).toBe('PENDING');
    expect(job.tasks.map((x) => [x.index, x.status])).toEqual([
      [0, 'PENDING'],
      [1, 'PENDING'],
      [2, 'PENDING'],
    ]);
    const events = await prisma.jobEvent.findMany({ where: { jobId: job.id } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ entity: 'job', from: null, to: 'PENDING' });
  });

  it('applies a legal transition with exactly one JobEvent and announces it after commit', async () => {
    const job = await submitJob(store, newJob('apply'));
    const seen: StoreEvent[] = [];
    const listener = (e: StoreEvent) => seen.push(e);
    store.bus.on('change', listener);
    const r = await transitionJob(store, job.id, 'PENDING', 'STARTING', { reason: 'admitted', data: { startedAt: new Date() } });
    store.bus.off('change', listener);
    expect(r.outcome).toBe('applied');
    if (r.outcome !== 'applied') return;
    expect(r.row.status).toBe('STARTING');
    expect(r.row.statusReason).toBe('admitted');
    expect(r.row.startedAt).toBeInstanceOf(Date);
    expect(await eventCount(prisma, job.id)).toBe(2);
    expect(seen.filter((e) => e.jobId === job.id)).toEqual([expect.objectContaining({ type: 'event', event: expect.objectContaining({ from: 'PENDING', to: 'STARTING' }) })]);
  });

  it('20 concurrent transitions from one expected status: exactly one applied, the rest lost (moved)', async () => {
    const job = await submitJob(store, newJob('race'));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => transitionJob(store, job.id, 'PENDING', i % 2 ? 'STARTING' : 'CANCELLED', { reason: `racer ${i}` })),
    );
    const applied = results.filter((r) => r.outcome === 'applied');
    expect(applied).toHaveLength(1);
    const lost = results.filter((r) => r.outcome === 'lost');
    expect(lost).toHaveLength(19);
    const winner = (applied[0] as { row: { status: string } }).row.status;
    for (const l of lost) {
      expect(l).toMatchObject({ outcome: 'lost', reason: winner === 'CANCELLED' ? 'terminal' : 'moved' });
      expect((l as { row: { status: string } }).row.status).toBe(winner);
    }
    expect(await eventCount(prisma, job.id)).toBe(2);
  });

  it('never overwrites a terminal status', async () => {
    const job = await submitJob(store, newJob('terminal'));
    expect((await transitionJob(store, job.id, 'PENDING', 'STARTING')).outcome).toBe('applied');
    expect((await transitionJob(store, job.id, 'STARTING', 'RUNNING')).outcome).toBe('applied');
    expect((await transitionJob(store, job.id, 'RUNNING', 'SUCCEEDED')).outcome).toBe('applied');
    // A late monitor that still believes the job is RUNNING:
    const late = await transitionJob(store, job.id, 'RUNNING', 'FAILED', { reason: 'late' });
    expect(late).toMatchObject({ outcome: 'lost', reason: 'terminal', row: expect.objectContaining({ status: 'SUCCEEDED' }) });
    const row = await prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    expect(row.status).toBe('SUCCEEDED');
    expect(await eventCount(prisma, job.id)).toBe(4);
  });

  it('never re-creates a deleted job on a late write', async () => {
    const job = await submitJob(store, newJob('deleted'));
    await transitionJob(store, job.id, 'PENDING', 'CANCELLED');
    const del = await deleteTerminalJobs(store, [job.id]);
    expect(del.deleted).toEqual([job.id]);
    const late = await transitionJob(store, job.id, 'CANCELLED', 'FAILED').catch((e) => e);
    expect(late).toBeInstanceOf(IllegalTransitionError); // terminal → anything is refused before the DB
    const late2 = await transitionJob(store, job.id, 'RUNNING', 'FAILED_CONTROLLER');
    expect(late2).toEqual({ outcome: 'lost', reason: 'gone' });
    expect(await prisma.job.findUnique({ where: { id: job.id } })).toBeNull();
    expect(await prisma.jobEvent.count({ where: { jobId: job.id } })).toBe(0);
    expect(await prisma.task.count({ where: { jobId: job.id } })).toBe(0);
  });

  it('refuses an illegal transition before touching the database', async () => {
    const job = await submitJob(store, newJob('illegal'));
    await expect(transitionJob(store, job.id, 'PENDING', 'SUCCEEDED' as never).then(() => 'ok')).resolves.toBe('ok'); // legal: a job with nothing to run
    await expect(transitionJob(store, job.id, 'SUCCEEDED', 'RUNNING')).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(transitionTask(store, job.tasks[0].id, 'PENDING', 'RUNNING')).rejects.toBeInstanceOf(IllegalTransitionError);
    // An illegal write to a row that does not exist still throws (the table is checked first).
    await expect(transitionJob(store, 999_999_999, 'FAILED', 'RUNNING')).rejects.toBeInstanceOf(IllegalTransitionError);
    expect(await eventCount(prisma, job.id)).toBe(2);
  });

  it('reports a move to another non-terminal status with the fresh row', async () => {
    const job = await submitJob(store, newJob('moved'));
    await transitionJob(store, job.id, 'PENDING', 'STARTING');
    const r = await transitionJob(store, job.id, 'PENDING', 'CANCELLING');
    expect(r).toMatchObject({ outcome: 'lost', reason: 'moved', row: expect.objectContaining({ status: 'STARTING' }) });
  });

  it('applies several writes all-or-nothing; a loser rolls back the batch', async () => {
    const job = await submitJob(store, newJob('batch', 2));
    const [t0, t1] = job.tasks;
    const before = await eventCount(prisma, job.id);
    const bad = await transitionMany(store, [
      { entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' },
      { entity: 'task', id: t1.id, from: 'STARTING', to: 'RUNNING' }, // t1 is PENDING: loses
    ]);
    expect(bad).toMatchObject({ outcome: 'lost', index: 1, reason: 'moved' });
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe('PENDING');
    expect(await eventCount(prisma, job.id)).toBe(before);
    const good = await transitionMany(store, [
      { entity: 'job', id: job.id, from: 'PENDING', to: 'STARTING' },
      { entity: 'task', id: t0.id, from: 'PENDING', to: 'STARTING', data: { restarts: { increment: 0 } } },
    ]);
    expect(good.outcome).toBe('applied');
    expect(await eventCount(prisma, job.id)).toBe(before + 2);
    const ev = await prisma.jobEvent.findMany({ where: { jobId: job.id }, orderBy: { id: 'asc' } });
    expect(ev.at(-1)).toMatchObject({ entity: 'task', taskIndex: 0, from: 'PENDING', to: 'STARTING' });
  });

  it('starts an attempt with the task transition in one transaction; a terminal task gets none', async () => {
    const job = await submitJob(store, newJob('attempt', 2));
    const [t0, t1] = job.tasks;
    const a = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first', logPath: '/tmp/x.log' });
    expect(a.outcome).toBe('applied');
    if (a.outcome !== 'applied') return;
    expect(a.row).toMatchObject({ jobId: job.id, taskId: t0.id, number: 1, status: 'STARTING', cause: 'first', logPath: '/tmp/x.log' });
    const ar = await transition(store, { entity: 'attempt', id: a.row.id, from: 'STARTING', to: 'RUNNING', data: { pid: 123 } });
    expect(ar).toMatchObject({ outcome: 'applied', row: expect.objectContaining({ status: 'RUNNING', pid: 123 }) });
    const ev = await prisma.jobEvent.findMany({ where: { jobId: job.id, entity: 'attempt' }, orderBy: { id: 'asc' } });
    expect(ev.map((e) => [e.taskIndex, e.attemptNumber, e.from, e.to])).toEqual([
      [0, 1, null, 'STARTING'],
      [0, 1, 'STARTING', 'RUNNING'],
    ]);
    await transitionTask(store, t1.id, 'PENDING', 'CANCELLED');
    const none = await startAttempt(store, { taskId: t1.id, taskFrom: 'PENDING', number: 1, cause: 'first' });
    expect(none).toMatchObject({ outcome: 'lost', reason: 'terminal' });
    expect(await prisma.attempt.count({ where: { taskId: t1.id } })).toBe(0);
  });

  it('deletes only terminal jobs', async () => {
    const running = await submitJob(store, newJob('keep'));
    const done = await submitJob(store, newJob('drop'));
    await transitionJob(store, done.id, 'PENDING', 'CANCELLED');
    const r = await deleteTerminalJobs(store, [running.id, done.id, 987_654_321]);
    expect(r).toEqual({ deleted: [done.id], refused: [running.id, 987_654_321] });
    expect(await prisma.job.findUnique({ where: { id: running.id } })).not.toBeNull();
  });

  it('rejects a second job with the same submissionId', async () => {
    await submitJob(store, { ...newJob('idem'), submissionId: 'sub-1' });
    await expect(submitJob(store, { ...newJob('idem'), submissionId: 'sub-1' })).rejects.toMatchObject({ code: 'P2002' });
  });
});
