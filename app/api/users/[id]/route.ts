import { parseId, patchUser } from '@/lib/api/team';
import { issueSession, sessionSetCookie, viaHttps } from '@/lib/auth/session';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * PATCH /api/users/:id `{role?, password?, disabled?, maxRunningCpus?, maxPendingJobs?}` → the user (admins).
 * A new password ends the user's sessions (docs/design.md §15); when that is the caller's own
 * session, the answer carries a fresh session cookie, so changing one's own password does not
 * log one out.
 */
export const PATCH = route<{ id: string }>(async (req, { id }, { actor, identity }) => {
  const s = services();
  const userId = parseId(id, 'user');
  const view = await patchUser(s.store, s.auth.directory, actor!, userId, req, s.settings.quotas, s.isolation);
  const res = Response.json(view);
  const own = identity?.via === 'cookie' && identity.session && identity.user.id === userId ? identity.session : null;
  const now = s.auth.directory.user(userId);
  if (own && now && !now.disabled && now.sessionEpoch !== own.epoch) {
    res.headers.append('set-cookie', sessionSetCookie(s.auth, issueSession(s.auth, Date.now(), userId).value, { secure: viaHttps(req.headers.get('x-forwarded-proto')) }));
  }
  return res;
});
