import { insights, parseInsightsQuery } from '@/lib/api/insights';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/insights?range=24h|7d|30d — InsightsView: the charts page's aggregates. */
export const GET = route(async (req) => Response.json(await insights(services().store, parseInsightsQuery(new URL(req.url)).range), { headers: { 'cache-control': 'no-store' } }));
