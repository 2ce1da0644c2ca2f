import { apiRoute } from '@/lib/api/handler';
import { deleteOne, detail, store } from '@/lib/api/jobs';
import { parseJobId } from '@/lib/api/request';

export const dynamic = 'force-dynamic';

/** GET /api/jobs/:id — JobDetail (tasks, attempts with log sizes, events); 404 when unknown. */
export const GET = apiRoute<{ id: string }>(async (_req, { id }) => {
  const job = await detail(await store(), parseJobId(id));
  return Response.json(job, { headers: { 'cache-control': 'no-store' } });
});

/** DELETE /api/jobs/:id — 204 for a terminal job (rows and logs); 409 when not terminal; 404 unknown. */
export const DELETE = apiRoute<{ id: string }>(async (_req, { id }) => {
  await deleteOne(await store(), parseJobId(id));
  return new Response(null, { status: 204 });
});
