import { getQueue, removeQueue, setQueue } from '@/lib/api/queues';
import { parseQueueName, parsePutQueueRequest } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/queues/:name — the Queue; 404 when not defined. */
export const GET = route<{ name: string }>(async (_req, { name }) => {
  return Response.json(await getQueue(services().store, parseQueueName(name)), { headers: { 'cache-control': 'no-store' } });
});

/** PUT /api/queues/:name {maxRunning?, maxCpus?, defaultPriority?} — creates or replaces it; 400 for "default". */
export const PUT = route<{ name: string }>(async (req, { name }, { actor }) => {
  const queue = parseQueueName(name);
  return Response.json(await setQueue(services().store, queue, await parsePutQueueRequest(req), actor));
});

/** DELETE /api/queues/:name — 204; 404 when not defined; 409 while unfinished jobs are in it. */
export const DELETE = route<{ name: string }>(async (_req, { name }, { actor }) => {
  await removeQueue(services().store, parseQueueName(name), actor);
  return new Response(null, { status: 204 });
});
