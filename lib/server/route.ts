import { apiRoute, type ApiRouteOptions, type Caller, type RouteContext } from '../api/handler';
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
  return apiRoute(handler, { ...opts, auth: () => startedServices()?.auth ?? closedAuthState(), quotas: () => startedServices()?.settings.quotas });
}
