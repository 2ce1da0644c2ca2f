import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { shared } from '../shared';

/**
 * A WebSocket route: `match` returns params when the path is its own, `handle` takes over the
 * upgrade (it must answer or destroy the socket).
 */
export interface UpgradeRoute {
  name: string;
  match(pathname: string): Record<string, string> | null;
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, params: Record<string, string>): void;
}

/** Registers a WebSocket route process-wide (server.ts dispatches `upgrade` events to them). */
export function registerUpgradeRoute(route: UpgradeRoute): void {
  const routes = ((shared().upgradeRoutes as UpgradeRoute[] | undefined) ??= []);
  const i = routes.findIndex((r) => r.name === route.name);
  if (i >= 0) routes[i] = route;
  else routes.push(route);
  shared().upgradeRoutes = routes;
}

/** Finds the route for a path, or null. */
export function findUpgradeRoute(pathname: string): { route: UpgradeRoute; params: Record<string, string> } | null {
  for (const route of (shared().upgradeRoutes as UpgradeRoute[] | undefined) ?? []) {
    const params = route.match(pathname);
    if (params) return { route, params };
  }
  return null;
}
