import { apiRoute } from '@/lib/api/handler';
import { cancelOne, store } from '@/lib/api/jobs';
import { parseJobId } from '@/lib/api/request';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs/:id/cancel → CancelResult (PENDING: cancelled at once; running: cancelling).
 * 404 unknown job; 409 "job 12 is already SUCCEEDED".
 */
export const POST = apiRoute<{ id: string }>(async (_req, { id }) => Response.json(await cancelOne(await store(), parseJobId(id))));
