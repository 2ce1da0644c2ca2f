import { getLogRange, parseLogRangeQuery } from '@/lib/api/logs';
import { parseJobId } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/jobs/:id/logs?task=&attempt=&rank=&offset=&limit= — one bounded byte range of an
 * attempt's log, or of one rank's of a multi-node attempt (LogRange). 400 bad numbers, 404
 * unknown job/task/attempt/rank, 416 offset past the end.
 */
export const GET = route<{ id: string }>(async (req, { id }) => {
  const jobId = parseJobId(id);
  const q = parseLogRangeQuery(new URL(req.url));
  const range = await getLogRange(services().store, jobId, q);
  return Response.json(range, { headers: { 'cache-control': 'no-store' } });
});
