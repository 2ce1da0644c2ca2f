import { apiRoute } from '@/lib/api/handler';
import { cancelMany, store } from '@/lib/api/jobs';
import { parseCancelRequest } from '@/lib/api/request';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs/cancel — JSON `{ ids }` or a filter `{ status?, q?, all?: true }` (jobs not yet
 * terminal) → CancelResult. An empty filter is refused with 400.
 */
export const POST = apiRoute(async (req) => {
  const selection = await parseCancelRequest(req);
  return Response.json(await cancelMany(await store(), selection));
});
