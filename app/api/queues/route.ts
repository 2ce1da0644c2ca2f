import { listQueues } from '@/lib/api/queues';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/queues — QueueList: every queue ("default" first) with its limits and what it holds now. */
export const GET = route(async () => Response.json(await listQueues(services().store), { headers: { 'cache-control': 'no-store' } }));
