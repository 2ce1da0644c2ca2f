import { pauseSchedule } from '@/lib/api/schedules';
import { parseScheduleName } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/schedules/:name/resume → the Schedule (next fire: the first cron time from now; what passed while paused is not caught up). */
export const POST = route<{ name: string }>(async (_req, { name }, { actor }) => {
  const s = services();
  return Response.json(await pauseSchedule(s.store, parseScheduleName(name), false, s.schedules, actor ?? undefined));
});
