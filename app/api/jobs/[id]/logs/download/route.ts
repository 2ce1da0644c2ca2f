import { logDownloadResponse, parseLogDownloadQuery } from '@/lib/api/logs';
import { parseJobId } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/jobs/:id/logs/download?task=&attempt=&rank= — the whole log of an attempt (of one rank
 * of a multi-node attempt), streamed as an attachment (`job-12-task-0-attempt-1.log`,
 * `…-attempt-1-rank-2.log`); a compressed log as it is, `Content-Encoding: gzip`, when the
 * client accepts gzip. 400 bad numbers, 404 unknown job/task/attempt/rank.
 */
export const GET = route<{ id: string }>(async (req, { id }) => {
  const jobId = parseJobId(id);
  const q = parseLogDownloadQuery(new URL(req.url));
  return logDownloadResponse(services().store, jobId, q, { acceptEncoding: req.headers.get('accept-encoding') });
});
