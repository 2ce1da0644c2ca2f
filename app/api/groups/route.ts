import { listGroups } from '@/lib/api/groups';
import { parseGroupListQuery } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/groups?limit=&before=&mine=1 — groups (arrays, sweeps) newest first, each with its counts by status. */
export const GET = route(async (req, _params, { actor }) => {
  return Response.json(await listGroups(services().store, parseGroupListQuery(new URL(req.url)), actor ?? undefined), { headers: { 'cache-control': 'no-store' } });
});
