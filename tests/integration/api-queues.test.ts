/**
 * The queue API (lib/api/queues.ts with the request parsing of lib/api/request.ts) and the
 * submit rules that go with queues, on both databases: the default queue first and without
 * settings, PUT/GET/DELETE, bounded fields with a 400 naming them, an unknown queue refused at
 * submit with the list of queues, a queue's default priority, and no delete while unfinished
 * jobs are in a queue.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { ApiError } from '../../lib/api/errors';
import { cancelOne, submit } from '../../lib/api/jobs';
import { getQueue, listQueues, removeQueue, setQueue } from '../../lib/api/queues';
import { parsePutQueueRequest, parseQueueName, parseSubmitRequest } from '../../lib/api/request';
import { rerunJob } from '../../lib/control';
import { getJobSummary } from '../../lib/api/views';
import type { Actor } from '../../lib/jobs/roles';
import { cachedQueueRows, createStore, QUEUE_CACHE_MS, QueueGoneError, submitJob, submitStatementStats, type NewJob, type Store } from '../../lib/store';

async function apiError(p: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

/** A one-task job of `queue` as the store writes it. */
const newJob = (queue: string, name = `in-${queue}`): NewJob => ({ name, specYaml: 'run: echo\n', spec: { run: 'echo' }, specHash: name, cpus: 1, queue, tasks: [{ name: 't', spec: { run: 'echo' } }] });

/** The first admin through its token, as apiRoute() would hand it to a route. */
const ADMIN: Actor = { userId: 1, name: 'admin', role: 'admin', tokenId: null, tokenPrefix: 'jd_admintoke', ip: '127.0.0.1' };

const put = (body: unknown) => new Request('http://x/api/queues/gpu', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(DB_KINDS)('queue API (lib) on %s', (kind) => {
  const t = useDatabase(kind, `api-queues-${kind}`);
  let db: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma: db, store } = t);
  });

  it('writes an audit row for each change to a queue: who, from where, the settings', async () => {
    await setQueue(store, 'audited', { maxRunning: 4 }, ADMIN);
    await setQueue(store, 'audited', { maxCpus: 2 }, ADMIN);
    await removeQueue(store, 'audited', ADMIN);
    const rows = await db.auditEvent.findMany({ where: { target: 'queue:audited' }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => [r.action, r.userName, r.tokenPrefix, r.ip, r.detail])).toEqual([
      ['queue.set', 'admin', 'jd_admintoke', '127.0.0.1', { maxRunning: 4, maxCpus: null, maxGpus: null, startTimeoutMs: null, defaultPriority: null, memberMaxPriority: null }],
      ['queue.set', 'admin', 'jd_admintoke', '127.0.0.1', { maxRunning: null, maxCpus: 2, maxGpus: null, startTimeoutMs: null, defaultPriority: null, memberMaxPriority: null }],
      ['queue.delete', 'admin', 'jd_admintoke', '127.0.0.1', null],
    ]);
    // A refused change leaves none.
    await apiError(removeQueue(store, 'audited', ADMIN));
    expect(await db.auditEvent.count({ where: { target: 'queue:audited' } })).toBe(3);
  });

  it('lists the default queue first, creates, replaces and reads a queue; the default one cannot be set', async () => {
    expect(await listQueues(store)).toEqual({ queues: [{ name: 'default', owner: null, maxRunning: null, maxCpus: null, maxGpus: null, startTimeoutMs: null, defaultPriority: null, memberMaxPriority: null, pending: 0, running: 0, cpus: 0, gpus: 0 }], memberMaxPriority: null });
    expect((await listQueues(store, 950)).memberMaxPriority).toBe(950);
    expect(await setQueue(store, 'gpu', await parsePutQueueRequest(put({ maxRunning: 2, maxCpus: 8, defaultPriority: 800, memberMaxPriority: 600 })))).toEqual({
      name: 'gpu', owner: null, maxRunning: 2, maxCpus: 8, maxGpus: null, startTimeoutMs: null, defaultPriority: 800, memberMaxPriority: 600, pending: 0, running: 0, cpus: 0, gpus: 0,
    });
    // PUT replaces: a field left out is no limit.
    expect(await setQueue(store, 'gpu', await parsePutQueueRequest(put({ maxRunning: 3 })))).toMatchObject({ maxRunning: 3, maxCpus: null, defaultPriority: null, memberMaxPriority: null });
    expect((await apiError(parsePutQueueRequest(put({ memberMaxPriority: 1001 })))).detail).toMatch(/memberMaxPriority/);
    // Created by user 1 (the first admin): its view names it.
    expect(await setQueue(store, 'batch', { maxCpus: 0.5 }, ADMIN)).toMatchObject({ owner: 'admin' });
    expect((await listQueues(store)).queues.map((q) => [q.name, q.owner])).toEqual([
      ['default', null],
      ['batch', 'admin'],
      ['gpu', null],
    ]);
    expect(await getQueue(store, 'batch')).toMatchObject({ maxCpus: 0.5, owner: 'admin' });
    expect((await apiError(getQueue(store, 'nope'))).detail).toBe('queue nope is not defined');
    const d = await apiError(setQueue(store, 'default', { maxRunning: 1 }));
    expect([d.status, d.detail]).toEqual([400, 'the default queue has no limits of its own: define another queue']);
  });

  it('refuses bad fields and names with a 400 that names them', async () => {
    for (const [body, detail] of [
      [{ maxRunning: 0 }, 'request body: maxRunning: expected an integer from 1 to 100000, or null'],
      [{ maxRunning: 1.5 }, 'request body: maxRunning: expected an integer from 1 to 100000, or null'],
      [{ maxCpus: -1 }, 'request body: maxCpus: expected a CPU count above 0 and at most 1000000, or null'],
      [{ defaultPriority: 1001 }, 'request body: defaultPriority: expected a priority (an integer from 0 to 1000)'],
      [{ maxJobs: 1 }, 'request body: Unrecognized key: "maxJobs"'],
    ] as const) {
      const err = await apiError(parsePutQueueRequest(put(body)));
      expect([err.status, err.detail]).toEqual([400, detail]);
    }
    const name = await apiError(() => parseQueueName('GPU!'));
    expect([name.status, name.detail]).toEqual([400, 'queue name "GPU!": expected a queue name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit)']);
  });

  it("refuses a job in an unknown queue with the list of queues; a queue's default priority applies unless the job gives one", async () => {
    await setQueue(store, 'gpu', { defaultPriority: 800 });
    await setQueue(store, 'batch', {});
    const err = await apiError(submit(store, { source: { kind: 'yaml', text: 'queue: gpux\nrun: echo\n' } }));
    expect([err.status, err.detail]).toEqual([400, 'job.yaml:1 task[0].queue: queue "gpux" is not defined; the queues are: default, batch, gpu']);
    const inGpu = await submit(store, { source: { kind: 'yaml', text: 'queue: gpu\nrun: echo\n' } });
    const own = await submit(store, { source: { kind: 'yaml', text: 'queue: gpu\npriority: 100\nrun: echo\n' } });
    const plain = await submit(store, { source: { kind: 'cmd', cmd: 'echo' } });
    expect(await getJobSummary(store, inGpu.result.id)).toMatchObject({ queue: 'gpu', priority: 800 });
    expect(await getJobSummary(store, own.result.id)).toMatchObject({ queue: 'gpu', priority: 100 });
    expect(await getJobSummary(store, plain.result.id)).toMatchObject({ queue: 'default', priority: 500 });
    expect((await getQueue(store, 'gpu')).pending).toBe(2);
  });

  it('a submit may name its queue (the request\'s queue wins over the file\'s), refused like the file\'s when unknown; a re-run keeps it', async () => {
    await setQueue(store, 'gpu', { defaultPriority: 800 });
    const req = (body: unknown, query = '') => new Request(`http://x/api/jobs${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const given = await submit(store, await parseSubmitRequest(req({ yaml: 'queue: default\nrun: echo\n', queue: 'gpu' })));
    expect(await getJobSummary(store, given.result.id)).toMatchObject({ queue: 'gpu', priority: 800 });
    const again = await rerunJob(store, given.result.id, 'api');
    expect(await getJobSummary(store, again.result.id)).toMatchObject({ queue: 'gpu', priority: 800 });
    const unknown = await apiError(async () => submit(store, await parseSubmitRequest(req({ cmd: 'echo', queue: 'gpux' }))));
    expect([unknown.status, unknown.detail]).toEqual([400, 'command overrides.queue: queue "gpux" is not defined; the queues are: default, gpu']);
    const bad = await apiError(parseSubmitRequest(req({ cmd: 'echo', queue: 'GPU!' })));
    expect([bad.status, bad.detail]).toEqual([400, 'request body: queue: queue "GPU!": expected a queue name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit)']);
    const yaml = new Request('http://x/api/jobs?queue=gpu', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'run: echo\n' });
    expect(await getJobSummary(store, (await submit(store, await parseSubmitRequest(yaml))).result.id)).toMatchObject({ queue: 'gpu' });
  });

  it("submits use the store's copy of the queues: dropped by a change through the store, read again once older than QUEUE_CACHE_MS", async () => {
    const t0 = Date.now();
    store.queueCache = null; // the tables were emptied under it
    expect(await cachedQueueRows(store, t0)).toEqual([]);
    // A row another server wrote: not seen within QUEUE_CACHE_MS, seen after it.
    await db.queue.create({ data: { name: 'other' } });
    expect(await cachedQueueRows(store, t0 + QUEUE_CACHE_MS - 1)).toEqual([]);
    expect((await cachedQueueRows(store, t0 + QUEUE_CACHE_MS)).map((q) => q.name)).toEqual(['other']);
    // A change through this store is seen at once.
    await setQueue(store, 'gpu', {});
    expect((await cachedQueueRows(store, t0 + QUEUE_CACHE_MS)).map((q) => q.name)).toEqual(['gpu', 'other']);
    await removeQueue(store, 'gpu');
    expect((await cachedQueueRows(store, t0 + QUEUE_CACHE_MS)).map((q) => q.name)).toEqual(['other']);
    store.queueCache = null;
  });

  it('a queue deleted after a submit checked it: the job is not written into it, the submit is refused with the list (alone and in a batch)', async () => {
    await setQueue(store, 'gpu', { maxRunning: 1 });
    // This server's submit checks the queue (its copy of the Queue table has gpu)...
    expect((await cachedQueueRows(store)).map((q) => q.name)).toEqual(['gpu']);
    // ...another server on the same database deletes it: no job is in it yet...
    const other = createStore(db);
    await removeQueue(other, 'gpu');
    // ...and the submit goes on with the queue it checked.
    const err = await apiError(submit(store, { source: { kind: 'yaml', text: 'queue: gpu\nrun: echo\n' } }));
    expect([err.status, err.detail]).toEqual([400, 'job.yaml:1 task[0].queue: queue "gpu" is not defined; the queues are: default']);
    expect(await db.job.count({ where: { queue: 'gpu' } })).toBe(0);

    // A group commit: two statements of one job, then one of four; only the gpu jobs are refused.
    await setQueue(store, 'gpu', {});
    await setQueue(store, 'batch', {});
    await removeQueue(other, 'gpu');
    const names = ['gpu', 'default', 'gpu', 'batch', 'default', 'gpu'];
    const before = submitStatementStats(store);
    const results = await Promise.allSettled(names.map((q, i) => submitJob(store, newJob(q, `race-${i}`))));
    expect(results.map((r) => (r.status === 'fulfilled' ? 'written' : r.reason instanceof QueueGoneError ? `gone: ${r.reason.queue}` : String(r.reason)))).toEqual([
      'gone: gpu', 'written', 'gone: gpu', 'written', 'written', 'gone: gpu',
    ]);
    const rows = await db.job.findMany({ where: { name: { startsWith: 'race-' } }, orderBy: { name: 'asc' }, include: { tasks: true, events: true } });
    expect(rows.map((r) => [r.name, r.queue, r.tasks.length, r.events.length])).toEqual([
      ['race-1', 'default', 1, 1], ['race-3', 'batch', 1, 1], ['race-4', 'default', 1, 1],
    ]);
    const after = submitStatementStats(store);
    expect({ statements: after.statements - before.statements, jobs: after.jobs - before.jobs }).toEqual({ statements: 3, jobs: 6 });
  });

  it.runIf(kind === 'postgresql')('a submit waits for a delete of its queue that holds the row, then writes nothing; a delete waits for a submit that holds it, then refuses (409)', async () => {
    await setQueue(store, 'gpu', {});
    // The delete holds the queue's row (locked, deleted, not committed yet) while a submit comes.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const deleting = db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM "Queue" WHERE "name" = 'gpu' FOR UPDATE`;
      await tx.$executeRaw`DELETE FROM "Queue" WHERE "name" = 'gpu'`;
      locked();
      await gate;
    });
    await holding;
    const submitting = submitJob(store, newJob('gpu', 'after-delete')).then(() => 'written', (e: unknown) => (e instanceof QueueGoneError ? 'gone' : String(e)));
    // The submit's statement is blocked on the row: it has not finished while the delete is open.
    const early = await Promise.race([submitting, new Promise((r) => setImmediate(() => r('waiting')))]);
    release();
    await deleting;
    expect([early, await submitting]).toEqual(['waiting', 'gone']);
    expect(await db.job.count({ where: { name: 'after-delete' } })).toBe(0);

    // A submit's statement holds the row (FOR KEY SHARE, its job written, not committed) while a delete comes.
    await setQueue(store, 'gpu', {});
    let release2!: () => void;
    const gate2 = new Promise<void>((r) => (release2 = r));
    let locked2!: () => void;
    const holding2 = new Promise<void>((r) => (locked2 = r));
    const inserting = db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM "Queue" WHERE "name" = 'gpu' FOR KEY SHARE`;
      await tx.job.create({ data: { name: 'held', specYaml: 'run: echo\n', spec: {}, specHash: 'h', cpus: 1, queue: 'gpu', executor: 'local', origin: 'api', taskCount: 0 } });
      locked2();
      await gate2;
    });
    await holding2;
    const removing = removeQueue(store, 'gpu').then(() => 'deleted', (e: unknown) => (e instanceof ApiError ? `${e.status} ${e.detail}` : String(e)));
    release2();
    await inserting;
    expect(await removing).toBe('409 queue gpu holds 1 job that did not finish: wait for them or cancel them first');
    expect(await db.queue.count({ where: { name: 'gpu' } })).toBe(1);
    await db.job.deleteMany({ where: { name: 'held' } });
    await removeQueue(store, 'gpu');
  });

  it('deletes a queue only when no unfinished job is in it; the default one never', async () => {
    await setQueue(store, 'gpu', { maxRunning: 1 });
    const job = await submit(store, { source: { kind: 'yaml', text: 'queue: gpu\nrun: echo\n' } });
    const busy = await apiError(removeQueue(store, 'gpu'));
    expect([busy.status, busy.detail]).toEqual([409, 'queue gpu holds 1 job that did not finish: wait for them or cancel them first']);
    await cancelOne(store, job.result.id);
    await removeQueue(store, 'gpu');
    expect(await db.queue.count()).toBe(0);
    expect((await apiError(removeQueue(store, 'gpu'))).status).toBe(404);
    expect((await apiError(removeQueue(store, 'default'))).status).toBe(400);
  });
});
