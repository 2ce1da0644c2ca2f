import { jobLogResponse } from '@/lib/api/job-log';
import { parseJobId } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/jobs/:id/logs/all — the whole job's logs as one file (`job-12-train.log`): every task
 * and attempt in order, every rank of a multi-node attempt, each under a header line, streamed.
 * 400 a bad id, 404 an unknown job.
 */
export const GET = route<{ id: string }>(async (_req, { id }) => jobLogResponse(services().store, parseJobId(id)));
