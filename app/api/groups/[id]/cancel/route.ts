import { cancelGroupJobs } from '@/lib/api/groups';
import { parseGroupId } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/groups/:id/cancel → CancelResult over every job of the group not finished yet. */
export const POST = route<{ id: string }>(async (_req, { id }, { actor }) => Response.json(await cancelGroupJobs(services().store, parseGroupId(id), actor ?? undefined)));
