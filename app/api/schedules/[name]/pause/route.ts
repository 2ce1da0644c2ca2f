import { pauseSchedule } from '@/lib/api/schedules';
import { parseScheduleName } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/schedules/:name/pause → the Schedule (no fire until resumed). */
export const POST = route<{ name: string }>(async (_req, { name }, { actor }) => {
  const s = services();
  return Response.json(await pauseSchedule(s.store, parseScheduleName(name), true, s.schedules, actor ?? undefined));
});
