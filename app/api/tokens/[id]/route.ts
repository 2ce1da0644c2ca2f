import { parseId, revokeToken } from '@/lib/api/team';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** DELETE /api/tokens/:id — revokes the token (its user's or an admin's): 204; it fails from the next request on. */
export const DELETE = route<{ id: string }>(async (_req, { id }, { actor }) => {
  const s = services();
  await revokeToken(s.store, s.auth.directory, actor!, parseId(id, 'token'));
  return new Response(null, { status: 204 });
});
