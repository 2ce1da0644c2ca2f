import { cancelOne } from '@/lib/api/jobs';
import { parseJobId } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs/:id/cancel → CancelResult (PENDING: cancelled at once; running: cancelling).
 * 404 unknown job; 409 "job 12 is already SUCCEEDED".
 */
export const POST = route<{ id: string }>(async (_req, { id }, { actor }) => Response.json(await cancelOne(services().store, parseJobId(id), actor ?? undefined)));
