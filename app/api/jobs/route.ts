import { list, submit } from '@/lib/api/jobs';
import { parseListQuery, parseSubmitRequest } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs — submit a job: a YAML body (application/yaml, text/yaml, text/plain) or JSON
 * `{ yaml | spec | cmd, name?, envs?, submissionId?, metadata? }` → 201 SubmitResult, or 200 when
 * a repeated submissionId matched the same spec (409 for a different one).
 */
export const POST = route(async (req, _params, { actor }) => {
  const input = await parseSubmitRequest(req);
  const out = await submit(services().store, { ...input, actor: actor ?? undefined });
  return Response.json(out.result, { status: out.created ? 201 : 200, headers: { location: `/api/jobs/${out.result.id}` } });
});

/** GET /api/jobs?status=&q=&queue=&owner=&limit=&cursor= — JobList, newest first (keyset pages); owner "me" or a user name. */
export const GET = route(async (req, _params, { actor }) => {
  const params = parseListQuery(new URL(req.url));
  return Response.json(await list(services().store, params, actor ?? undefined), { headers: { 'cache-control': 'no-store' } });
});
