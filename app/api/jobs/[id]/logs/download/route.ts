import { apiRoute } from '@/lib/api/handler';
import { parseJobId } from '@/lib/api/request';
import { getDatabase } from '@/lib/db';
import { logDownloadResponse, parseLogDownloadQuery } from '@/lib/logs/api';

export const dynamic = 'force-dynamic';

/**
 * GET /api/jobs/:id/logs/download?task=&attempt= — the whole log of an attempt, streamed as an
 * attachment (`job-12-task-0-attempt-1.log`). 400 bad numbers, 404 unknown job/task/attempt.
 */
export const GET = apiRoute<{ id: string }>(async (req, { id }) => {
  const jobId = parseJobId(id);
  const q = parseLogDownloadQuery(new URL(req.url));
  return logDownloadResponse((await getDatabase()).prisma, jobId, q);
});
