import { counts } from '@/lib/api/jobs';
import { parseCountsQuery } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/jobs/counts?q= — JobCounts: jobs per status among those the search finds. */
export const GET = route(async (req) => Response.json(await counts(services().store, parseCountsQuery(new URL(req.url))), { headers: { 'cache-control': 'no-store' } }));
