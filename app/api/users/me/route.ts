import { route } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/users/me — who the caller is: `{id, name, role, tokenPrefix}`. */
export const GET = route(async (_req, _params, { actor }) =>
  Response.json({ id: actor!.userId, name: actor!.name, role: actor!.role, tokenPrefix: actor!.tokenPrefix }, { headers: { 'cache-control': 'no-store' } }),
);
