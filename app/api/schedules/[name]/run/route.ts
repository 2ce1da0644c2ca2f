import { runScheduleNow } from '@/lib/api/schedules';
import { parseScheduleName } from '@/lib/api/request-flow';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/schedules/:name/run → `{outcome, jobId, detail}`: fires it now (its overlap policy applies; its next fire time stays). */
export const POST = route<{ name: string }>(async (_req, { name }, { actor }) => {
  const s = services();
  const r = await runScheduleNow(s.store, parseScheduleName(name), s.schedules, actor ?? undefined);
  return Response.json({ outcome: r.outcome, jobId: r.jobId, detail: r.detail }, { status: r.jobId ? 201 : 200 });
});
