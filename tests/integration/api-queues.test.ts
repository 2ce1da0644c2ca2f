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
import { parsePutQueueRequest, parseQueueName } from '../../lib/api/request';
import { getJobSummary } from '../../lib/api/views';
import { cachedQueueRows, QUEUE_CACHE_MS, type Store } from '../../lib/store';

async function apiError(p: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const put = (body: unknown) => new Request('http://x/api/queues/gpu', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(DB_KINDS)('queue API (lib) on %s', (kind) => {
  const t = useDatabase(kind, `api-queues-${kind}`);
  let db: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma: db, store } = t);
  });

  it('lists the default queue first, creates, replaces and reads a queue; the default one cannot be set', async () => {
    expect(await listQueues(store)).toEqual({ queues: [{ name: 'default', maxRunning: null, maxCpus: null, defaultPriority: null, pending: 0, running: 0, cpus: 0 }] });
    expect(await setQueue(store, 'gpu', await parsePutQueueRequest(put({ maxRunning: 2, maxCpus: 8, defaultPriority: 800 })))).toEqual({
      name: 'gpu', maxRunning: 2, maxCpus: 8, defaultPriority: 800, pending: 0, running: 0, cpus: 0,
    });
    // PUT replaces: a field left out is no limit.
    expect(await setQueue(store, 'gpu', await parsePutQueueRequest(put({ maxRunning: 3 })))).toMatchObject({ maxRunning: 3, maxCpus: null, defaultPriority: null });
    await setQueue(store, 'batch', { maxCpus: 0.5 });
    expect((await listQueues(store)).queues.map((q) => q.name)).toEqual(['default', 'batch', 'gpu']);
    expect(await getQueue(store, 'batch')).toMatchObject({ maxCpus: 0.5 });
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
