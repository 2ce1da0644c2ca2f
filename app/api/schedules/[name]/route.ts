import { changeSchedule, getSchedule, removeSchedule } from '@/lib/api/schedules';
import { parsePatchSchedule, parseScheduleName } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/schedules/:name — the schedule with its latest fires; 404 unknown. */
export const GET = route<{ name: string }>(async (_req, { name }) => Response.json(await getSchedule(services().store, parseScheduleName(name)), { headers: { 'cache-control': 'no-store' } }));

/** PATCH /api/schedules/:name — change any field but the name. */
export const PATCH = route<{ name: string }>(async (req, { name }, { actor }) => {
  const s = services();
  const schedule = parseScheduleName(name);
  return Response.json(await changeSchedule(s.store, schedule, await parsePatchSchedule(req), s.schedules, actor ?? undefined));
});

/** DELETE /api/schedules/:name — 204 (its jobs stay). */
export const DELETE = route<{ name: string }>(async (_req, { name }, { actor }) => {
  await removeSchedule(services().store, parseScheduleName(name), actor ?? undefined);
  return new Response(null, { status: 204 });
});
