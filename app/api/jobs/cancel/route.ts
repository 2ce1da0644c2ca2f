import { cancelMany } from '@/lib/api/jobs';
import { parseCancelRequest } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs/cancel — JSON `{ ids }` or a filter `{ status?, q?, all?: true }` (jobs not yet
 * terminal) → CancelResult. An empty filter is refused with 400.
 */
export const POST = route(async (req, _params, { actor }) => {
  const selection = await parseCancelRequest(req);
  return Response.json(await cancelMany(services().store, selection, actor ?? undefined));
});
