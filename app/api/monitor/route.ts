import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/monitor → the monitor's state (lib/monitor/handle.ts MonitorState): jobs and attempts
 * watched, last reconcile time and lag (ms), restarts and recoveries so far, capacity used/total.
 * `running: false` once the monitor has stopped (the server is stopping). With several servers
 * on one PostgreSQL, `servers` lists the live ones (lib/monitor/handle.ts ServerView).
 */
export const GET = route(async () => {
  const { monitor } = services();
  const servers = (await monitor.servers?.()) ?? null;
  return Response.json({ ...monitor.state(), ...(servers ? { servers } : {}) });
});
