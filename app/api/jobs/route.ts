import { apiRoute } from '@/lib/api/handler';
import { list, store, submit } from '@/lib/api/jobs';
import { parseListQuery, parseSubmitRequest } from '@/lib/api/request';

export const dynamic = 'force-dynamic';

/**
 * POST /api/jobs — submit a job: a YAML body (application/yaml, text/yaml, text/plain) or JSON
 * `{ yaml | spec | cmd, name?, envs?, submissionId?, metadata? }` → 201 SubmitResult, or 200 when
 * a repeated submissionId matched the same spec (409 for a different one).
 */
export const POST = apiRoute(async (req) => {
  const input = await parseSubmitRequest(req);
  const out = await submit(await store(), input);
  return Response.json(out.result, { status: out.created ? 201 : 200, headers: { location: `/api/jobs/${out.result.id}` } });
});

/** GET /api/jobs?status=&q=&limit=&cursor= — JobList, newest first (keyset pages). */
export const GET = apiRoute(async (req) => {
  const params = parseListQuery(new URL(req.url));
  return Response.json(await list(await store(), params), { headers: { 'cache-control': 'no-store' } });
});
