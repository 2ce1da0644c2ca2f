import { rerunFailed } from '@/lib/api/groups';
import { parseRerunRequest } from '@/lib/api/request';
import { parseGroupId } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/groups/:id/rerun-failed `{origin?}` → `{rerun: [{index, from, jobId}]}`: a new job in each slot that ended without succeeding. */
export const POST = route<{ id: string }>(async (req, { id }, { actor }) => {
  const groupId = parseGroupId(id);
  const { origin } = await parseRerunRequest(req);
  return Response.json(await rerunFailed(services().store, groupId, origin, actor ?? undefined), { status: 201 });
});
