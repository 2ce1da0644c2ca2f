import { getGroup, removeGroup } from '@/lib/api/groups';
import { parseGroupId } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/groups/:id — the group and the latest job of each slot; 404 unknown. */
export const GET = route<{ id: string }>(async (_req, { id }) => Response.json(await getGroup(services().store, parseGroupId(id)), { headers: { 'cache-control': 'no-store' } }));

/** DELETE /api/groups/:id — the group and all its jobs (rows, logs); 409 while one of them is not finished. */
export const DELETE = route<{ id: string }>(async (_req, { id }, { actor }) => {
  const s = services();
  const opts = { home: s.config.home, executor: (name: string) => s.executors.get(name), leftoverGraceMs: s.settings.leftoverGraceMs };
  return Response.json(await removeGroup(s.store, parseGroupId(id), opts, actor ?? undefined));
});
