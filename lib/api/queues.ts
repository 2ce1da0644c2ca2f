/**
 * The queue API's operations (GET/PUT/DELETE /api/queues[/name]; docs/design.md §6
 * "Admission"): the Queue table through lib/store, with what each queue holds now. The default
 * queue is always listed and has no settings: a PUT or DELETE of it is refused (400).
 */
import { DEFAULT_QUEUE } from '../jobs/spec';
import type { Queue } from '../generated/prisma/client';
import { deleteQueue, listQueueRows, putQueue, queueRow, queueUse, userNames, type QueueSettings, type Store } from '../store';
import type { Actor } from '../jobs/roles';
import { record } from './audit';
import { badRequest, conflict, notFound } from './errors';
import type { QueueList, QueueView } from './types';

type Use = Awaited<ReturnType<typeof queueUse>>;

function view(name: string, s: QueueSettings, use: Use, owner: string | null): QueueView {
  const u = use.get(name) ?? { pending: 0, running: 0, cpus: 0, gpus: 0 };
  return { name, owner, maxRunning: s.maxRunning, maxCpus: s.maxCpus, maxGpus: s.maxGpus ?? null, startTimeoutMs: s.startTimeoutMs == null ? null : Math.round(s.startTimeoutMs), defaultPriority: s.defaultPriority, memberMaxPriority: s.memberMaxPriority, ...u };
}

const NONE: QueueSettings = { maxRunning: null, maxCpus: null, maxGpus: null, startTimeoutMs: null, defaultPriority: null, memberMaxPriority: null };

/** Queue rows as the API shows them, each with its creator's name (`owner`). */
async function views(store: Store, rows: Queue[], use: Use): Promise<QueueView[]> {
  const names = await userNames(store, rows.map((r) => r.userId));
  return rows.map((r) => view(r.name, r, use, r.userId === null ? null : (names.get(r.userId) ?? null)));
}

/**
 * Every queue, the default one first, and the members' priority cap over all of them
 * (`memberMaxPriority`: the server's JOBDECK_QUOTA_MEMBER_MAX_PRIORITY, null: none; a queue's own
 * may be lower: lib/jobs/priority-cap.ts).
 */
export async function listQueues(store: Store, memberMaxPriority: number | null = null): Promise<QueueList> {
  const [rows, use] = await Promise.all([listQueueRows(store), queueUse(store)]);
  return { queues: [view(DEFAULT_QUEUE, NONE, use, null), ...(await views(store, rows, use))], memberMaxPriority };
}

/** One queue. @throws ApiError 404 "queue gpu is not defined". */
export async function getQueue(store: Store, name: string): Promise<QueueView> {
  if (name === DEFAULT_QUEUE) return view(name, NONE, await queueUse(store), null);
  const row = await queueRow(store, name);
  if (!row) throw notFound(`queue ${name} is not defined`);
  return (await views(store, [row], await queueUse(store)))[0];
}

const refuseDefault = (name: string, what: string) => {
  if (name === DEFAULT_QUEUE) throw badRequest(`the ${DEFAULT_QUEUE} queue has no limits of its own: ${what} another queue`);
};

/**
 * Creates or replaces a queue (the admission pass applies the new limits at once); `actor` is
 * its creator and the audit row's (`queue.set`, with the settings).
 * @throws ApiError 400 for the default queue.
 */
export async function setQueue(store: Store, name: string, body: Partial<QueueSettings>, actor: Actor | null = null): Promise<QueueView> {
  refuseDefault(name, 'define');
  const settings = { ...NONE, ...body };
  const row = await putQueue(store, name, settings, actor?.userId ?? null);
  await record(store, actor, 'queue.set', `queue:${name}`, { ...settings });
  return (await views(store, [row], await queueUse(store)))[0];
}

/**
 * Deletes a queue (audited: `queue.delete`).
 * @throws ApiError 400 for the default queue; 404 when not defined; 409 while a job that has not
 *   finished is in it.
 */
export async function removeQueue(store: Store, name: string, actor: Actor | null = null): Promise<void> {
  refuseDefault(name, 'delete');
  const r = await deleteQueue(store, name);
  if (r.deleted) return record(store, actor, 'queue.delete', `queue:${name}`);
  if ('missing' in r) throw notFound(`queue ${name} is not defined`);
  throw conflict(`queue ${name} holds ${r.unfinished} job${r.unfinished === 1 ? '' : 's'} that did not finish: wait for them or cancel them first`, { unfinished: r.unfinished });
}
