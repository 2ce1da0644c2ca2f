import { addSchedule, listSchedules } from '@/lib/api/schedules';
import { parseCreateSchedule } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/schedules?mine=1 — every schedule (a member sees all; changes only its own). */
export const GET = route(async (req, _params, { actor }) => {
  const mine = ['1', 'true'].includes(new URL(req.url).searchParams.get('mine') ?? '');
  return Response.json(await listSchedules(services().store, mine, actor ?? undefined), { headers: { 'cache-control': 'no-store' } });
});

/** POST /api/schedules {name, cron, timezone?, yaml | jobId, launch?, overlap?, catchUp?, paused?} → 201 Schedule. */
export const POST = route(async (req, _params, { actor }) => {
  const s = services();
  const out = await addSchedule(s.store, await parseCreateSchedule(req), s.schedules, actor ?? undefined);
  return Response.json(out, { status: 201, headers: { location: `/api/schedules/${out.name}` } });
});
