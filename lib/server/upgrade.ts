import type { WsRoute } from '../ws';

/** A WebSocket route the server dispatches `upgrade` events to (lib/ws wsRoutes()). */
export type UpgradeRoute = WsRoute;

/** Finds the first route of `routes` whose match() accepts `pathname`, with its params, or null. */
export function findUpgradeRoute(routes: readonly UpgradeRoute[], pathname: string): { route: UpgradeRoute; params: Record<string, string> } | null {
  for (const route of routes) {
    const params = route.match(pathname);
    if (params) return { route, params };
  }
  return null;
}
