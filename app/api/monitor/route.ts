import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/monitor → the monitor's state (lib/monitor/handle.ts MonitorState): jobs and attempts
 * watched, last reconcile time and lag (ms), restarts and recoveries so far, capacity used/total.
 * `running: false` once the monitor has stopped (the server is stopping).
 */
export const GET = route(async () => Response.json(services().monitor.state()));
