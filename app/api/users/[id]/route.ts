import { parseId, patchUser } from '@/lib/api/team';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** PATCH /api/users/:id `{role?, password?, disabled?, maxRunningCpus?, maxPendingJobs?}` → the user (admins). */
export const PATCH = route<{ id: string }>(async (req, { id }, { actor }) => {
  const s = services();
  return Response.json(await patchUser(s.store, s.auth.directory, actor!, parseId(id, 'user'), req, s.settings.quotas));
});
