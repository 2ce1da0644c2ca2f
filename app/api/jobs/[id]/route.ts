import { deleteOne, detail, patchOne } from '@/lib/api/jobs';
import { parseJobId, parsePatchRequest } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/jobs/:id — JobDetail (tasks, attempts with log sizes, events); 404 when unknown. */
export const GET = route<{ id: string }>(async (_req, { id }, { actor }) => {
  const job = await detail(services().store, parseJobId(id), actor ?? undefined);
  return Response.json(job, { headers: { 'cache-control': 'no-store' } });
});

/** PATCH /api/jobs/:id {"priority": N} — the JobSummary; 409 when the job is not PENDING; 404 unknown. */
export const PATCH = route<{ id: string }>(async (req, { id }, { actor }) => {
  const jobId = parseJobId(id);
  const job = await patchOne(services().store, jobId, await parsePatchRequest(req), actor ?? undefined);
  return Response.json(job, { headers: { 'cache-control': 'no-store' } });
});

/** DELETE /api/jobs/:id — 204 for a terminal job (rows and logs); 409 when not terminal; 404 unknown. */
export const DELETE = route<{ id: string }>(async (_req, { id }, { actor }) => {
  const s = services();
  const deps = { home: s.config.home, executor: (name: string) => s.executors.get(name), leftoverGraceMs: s.settings.leftoverGraceMs };
  await deleteOne(s.store, parseJobId(id), deps, actor ?? undefined);
  return new Response(null, { status: 204 });
});
