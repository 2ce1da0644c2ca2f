import { createTokenFor, tokenList } from '@/lib/api/team';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/tokens[?all=1] — the caller's personal tokens (admins: `all=1` for everyone's); never the tokens themselves. */
export const GET = route(async (req, _params, { actor }) => Response.json(await tokenList(services().store, actor!, new URL(req.url)), { headers: { 'cache-control': 'no-store' } }));

/** POST /api/tokens `{name, expiresInDays?, userId?}` → 201 with `token`, shown this once. */
export const POST = route(async (req, _params, { actor }) => {
  const s = services();
  const out = await createTokenFor(s.store, s.auth.directory, actor!, req);
  return Response.json(out, { status: 201, headers: { 'cache-control': 'no-store' } });
});
