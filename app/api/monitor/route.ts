import { monitorAnswer } from '@/lib/api/monitor';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/monitor → the monitor's state (lib/monitor/state.ts MonitorState): jobs and attempts
 * watched, last reconcile time and lag (ms), restarts and recoveries so far, capacity used/total.
 * `running: false` once the monitor has stopped (the server is stopping). With several servers
 * on one PostgreSQL, `servers` lists the live ones (lib/api/types.ts ServerView; lib/api/monitor.ts).
 */
export const GET = route(async () => Response.json(await monitorAnswer(services().monitor)));
