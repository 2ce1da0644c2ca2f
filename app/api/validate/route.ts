import { validate } from '@/lib/api/jobs';
import { parseValidateRequest } from '@/lib/api/request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/validate — YAML body (or JSON `{ yaml, filename? }`) → 200 `{ ok, issues }` with
 * each issue's line, column and key path, for the dashboard's live validation. Saves nothing.
 */
export const POST = route(async (req) => {
  const { text, filename } = await parseValidateRequest(req);
  return Response.json(await validate(services().store, text, filename), { headers: { 'cache-control': 'no-store' } });
});
