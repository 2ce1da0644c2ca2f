import { rerun } from '@/lib/api/jobs';
import { parseJobId, parseRerunRequest } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs/:id/rerun — body optional JSON `{ origin?, name?, envs?, priority? }` → 201
 * SubmitResult of the new job, submitted with what job :id was submitted with, the overrides
 * changed. 404 unknown job.
 */
export const POST = route<{ id: string }>(async (req, { id }, { actor }) => {
  const jobId = parseJobId(id);
  const { origin, overrides } = await parseRerunRequest(req);
  const out = await rerun(services().store, jobId, origin, actor ?? undefined, overrides);
  return Response.json(out.result, { status: 201, headers: { location: `/api/jobs/${out.result.id}` } });
});
