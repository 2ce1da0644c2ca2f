import { listQueues } from '@/lib/api/queues';
import { roleMaxPriority } from '@/lib/jobs/quotas';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/queues — QueueList: every queue ("default" first) with its limits and what it holds now, and the members' priority cap. */
export const GET = route(async () => Response.json(await listQueues(services().store, roleMaxPriority('member', services().settings.quotas)), { headers: { 'cache-control': 'no-store' } }));
