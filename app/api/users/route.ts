import { createUserFrom, userList } from '@/lib/api/team';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/users — every user with the quotas that apply (admins). */
export const GET = route(async () => {
  const s = services();
  return Response.json(await userList(s.store, s.settings.quotas), { headers: { 'cache-control': 'no-store' } });
});

/** POST /api/users `{name, role, password?, osUser?, maxRunningCpus?, maxPendingJobs?}` → 201 the user (admins). */
export const POST = route(async (req, _params, { actor }) => {
  const s = services();
  return Response.json(await createUserFrom(s.store, s.auth.directory, actor!, req, s.settings.quotas, s.isolation), { status: 201 });
});
