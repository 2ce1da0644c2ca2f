import { apiRoute } from '@/lib/api/handler';
import { monitorState } from '@/lib/monitor/handle';

export const dynamic = 'force-dynamic';

/**
 * GET /api/monitor → the monitor's state (lib/monitor/handle.ts MonitorState): jobs and attempts
 * watched, last reconcile time and lag (ms), restarts and recoveries so far, capacity used/total.
 * `running: false` when no monitor runs in this process.
 */
export const GET = apiRoute(async () => Response.json(monitorState()));
