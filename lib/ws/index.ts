/**
 * jobdeck's WebSocket endpoints, as a route table over one hub (the server dispatches upgrades
 * to it, lib/server/start.ts):
 * - `/ws/jobs/:id` — one job's live story (lib/logs/protocol.ts StreamMessage + binary log frames);
 * - `/ws/jobs` — list-level changes for the dashboard (ListMessage).
 * On hub stop every socket is closed with 1001 (job streams first get a resume position).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SocketOwner, WsHub } from './hub';

export { WsHub, type SocketOwner, type WsHubOptions } from './hub';

/**
 * A WebSocket route: `match` returns params when the path is its own, `handle` takes over the
 * upgrade (it must answer or destroy the socket); `owner` is who the gate let in (its session's
 * logout or expiry closes the socket), absent when nobody authenticated it (tests).
 */
export interface WsRoute {
  name: string;
  /**
   * Its path as the authorization table names it (lib/auth/rules.ts, `GET <pattern>`; `[id]` a
   * dynamic segment): the generated route × role test reads these, so a route without a rule fails it.
   */
  pattern: string;
  match(pathname: string): Record<string, string> | null;
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, params: Record<string, string>, owner?: SocketOwner): void;
}

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

/** The WebSocket routes served by `hub`, in match order. */
export function wsRoutes(hub: WsHub): WsRoute[] {
  return [
    {
      name: 'ws-job-stream',
      pattern: '/ws/jobs/[id]',
      match: matchJobStreamPath,
      handle: (req, socket, head, params, owner) => hub.handleJob(req, socket, head, params, owner),
    },
    {
      name: 'ws-job-list',
      pattern: '/ws/jobs',
      match: (pathname) => (pathname === '/ws/jobs' || pathname === '/ws/jobs/' ? {} : null),
      handle: (req, socket, head, _params, owner) => hub.handleList(req, socket, head, owner),
    },
  ];
}
