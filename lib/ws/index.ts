/**
 * Registers jobdeck's WebSocket endpoints with the server (imported once by
 * lib/server/subsystems.ts):
 * - `/ws/jobs/:id` — one job's live story (lib/logs/protocol.ts StreamMessage + binary log frames);
 * - `/ws/jobs` — list-level changes for the dashboard (ListMessage).
 * On server stop every socket is closed with 1001 (job streams first get a resume position).
 */
import { registerLifecycle } from '../server/start';
import { registerUpgradeRoute } from '../server/upgrade';
import { stopWsHub, wsHub } from './hub';

export { WsHub, wsHub, resetWsHub, stopWsHub } from './hub';

/** Matches `/ws/jobs/:id` (any non-empty segment: a bad id is answered with close 4400). */
export function matchJobStreamPath(pathname: string): Record<string, string> | null {
  const m = /^\/ws\/jobs\/([^/]+)\/?$/.exec(pathname);
  if (!m) return null;
  let id = m[1];
  try {
    id = decodeURIComponent(id);
  } catch {
    // keep the raw text: it is reported as a bad id
  }
  return { id };
}

registerUpgradeRoute({
  name: 'ws-job-stream',
  match: matchJobStreamPath,
  handle: (req, socket, head, params) => wsHub().handleJob(req, socket, head, params),
});

registerUpgradeRoute({
  name: 'ws-job-list',
  match: (pathname) => (pathname === '/ws/jobs' || pathname === '/ws/jobs/' ? {} : null),
  handle: (req, socket, head) => wsHub().handleList(req, socket, head),
});

registerLifecycle({
  name: 'ws',
  start: async () => {
    wsHub();
  },
  stop: () => stopWsHub(),
});
