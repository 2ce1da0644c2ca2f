import { apiRoute, type ApiRouteOptions, type Caller, type RouteContext } from '../api/handler';
import { meView, type UserMe } from '../api/team';
import { actorOf, authenticate, type HeaderGetter } from '../auth/guard';
import { closedAuthState } from '../auth/state';
import { startedServices } from './services';

export { services } from './services';
export type { Caller } from '../api/handler';

/**
 * A route handler of app/api: apiRoute() (authentication, body cap, problem+json) checked
 * against the running server's auth state. Without a server in the process (plain
 * `next start`), nothing authenticates: only public routes run, and they find no services.
 * The handler takes what else it needs from services().
 */
export function route<P = Record<string, never>>(
  handler: (req: Request, params: P, caller: Caller) => Promise<Response>,
  opts: Omit<ApiRouteOptions, 'auth'> = {},
): (req: Request, ctx: RouteContext<P>) => Promise<Response> {
  return apiRoute(handler, { ...opts, auth: () => startedServices()?.auth ?? closedAuthState(), quotas: () => startedServices()?.settings.quotas, bodyLimits: () => startedServices()?.bodyLimits });
}

/**
 * Who is looking at a page, for the dashboard's server render (app/layout.tsx): the answer GET
 * /api/users/me gives that browser, so a page is drawn for the viewer's role on the server and
 * the browser's first render matches it (its controls, its navigation, a member's own-jobs view).
 * Null when no server runs in this process or the request carries no valid credentials (the HTTP
 * gate sends those to /login before a page renders, but for the login page itself).
 */
export function pageViewer(headers: HeaderGetter): UserMe | null {
  const s = startedServices();
  if (!s) return null;
  const { identity } = authenticate(headers, s.auth);
  return identity ? meView(actorOf(identity, null, s.settings.quotas)) : null;
}
