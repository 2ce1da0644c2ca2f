import { actorOf, checkRequest, type Identity } from '../auth/guard';
import { PEER_HEADER } from '../auth/policy';
import type { RouteRule } from '../auth/rules';
import type { RoleQuotas } from '../jobs/quotas';
import type { Actor } from '../jobs/roles';
import type { AuthState } from '../auth/state';
import { logger } from '../log';
import { bodyLimitFor, bodyLimitSettings, type BodyLimitSettings } from './body-limits';
import { databaseUnavailable } from '../db/unavailable';
import { ApiError, databaseUnavailableProblem, problem } from './errors';
import { limitRequestBody } from './limits';

/** Context Next.js passes to a route handler; `params` is a promise in Next 15+. */
export interface RouteContext<P> {
  params: Promise<P>;
}

export { PEER_HEADER };

/** Who called a route handler, as apiRoute() found it. */
export interface Caller {
  /** Null only on a public route called without credentials. */
  identity: Identity | null;
  /** The identity as an Actor (lib/jobs/roles.ts), with the client's address; null like identity. */
  actor: Actor | null;
  /** The route's rule (lib/auth/rules.ts). */
  rule: RouteRule | null;
  /** The client's address, or null when unknown. */
  ip: string | null;
  /** This route's body limit (bytes; lib/api/body-limits.ts), already applied to the request's body. */
  bodyLimit: number;
}

/** Options of apiRoute(). */
export interface ApiRouteOptions {
  /** The auth state to check each request against, read per request (the server's). */
  auth: () => AuthState;
  /**
   * No token needed. Only for routes also listed in lib/auth/policy.ts (GET /api/health,
   * POST /api/auth/login): the custom server's gate refuses anything else first.
   */
  public?: boolean;
  /**
   * The operator's body limits, read per request (the server's; default: the documented
   * defaults). The route's own limit comes from the one table, lib/api/body-limits.ts.
   */
  bodyLimits?: () => BodyLimitSettings | undefined;
  /** The role defaults of the quotas, read per request (the server's; default: none). */
  quotas?: () => RoleQuotas | undefined;
}

/**
 * Wraps a route handler: the one place that turns thrown ApiErrors (and unexpected errors) into
 * problem+json answers, and that enforces, before the handler runs:
 * - authentication (lib/auth/guard.ts checkRequest): a bearer token or session cookie, else 401;
 *   wrong Host or cross-origin state-changing request → 403 (skipped credentials only with
 *   `public: true`); then the route's rule (lib/auth/rules.ts): a role below it → 403;
 * - the body cap of the route (lib/api/body-limits.ts): the handler receives a request whose body
 *   refuses more than the cap (413) and
 *   JSON nested deeper than 64 levels (400), however it reads it (req.json(), readBody()…).
 * A database that cannot be reached for the moment (lib/db/unavailable.ts) answers 503 with
 * Retry-After, never 500. Route handlers stay thin: parse, call lib/, answer. The request the handler gets is a plain
 * `Request` (not a NextRequest) when it has a body. app/api routes use lib/server/route.ts
 * route(), which supplies the server's auth state.
 */
export function apiRoute<P = Record<string, never>>(
  handler: (req: Request, params: P, caller: Caller) => Promise<Response>,
  opts: ApiRouteOptions,
): (req: Request, ctx: RouteContext<P>) => Promise<Response> {
  return async (req, ctx) => {
    let tripped: () => ApiError | null = () => null;
    // A body refused part-way is not read to its end: close the connection after answering,
    // or the unread bytes would be taken for the next request on a kept-alive connection.
    const refuse = (err: ApiError) => {
      const res = problem(err);
      res.headers.set('connection', 'close');
      return res;
    };
    try {
      const pathname = new URL(req.url).pathname;
      const verdict = checkRequest({ method: req.method, headers: (n) => req.headers.get(n) }, { public: opts.public, path: pathname }, opts.auth());
      if (!verdict.ok) {
        const res = problem(new ApiError(verdict.status, verdict.title, verdict.detail));
        if (verdict.status === 401) res.headers.set('www-authenticate', 'Bearer realm="jobdeck"');
        return res;
      }
      const limit = bodyLimitFor(req.method, pathname, opts.bodyLimits?.() ?? bodyLimitSettings());
      const limited = limitRequestBody(req, limit);
      tripped = limited.tripped;
      const params = ctx?.params !== undefined ? await ctx.params : ({} as P);
      const ip = req.headers.get(PEER_HEADER);
      const identity = verdict.identity;
      const res = await handler(limited.request, params, { identity, actor: identity ? actorOf(identity, ip, opts.quotas?.()) : null, rule: verdict.rule ?? null, ip, bodyLimit: limit });
      const hit = tripped();
      return hit ? refuse(hit) : res;
    } catch (err) {
      const hit = tripped();
      if (hit) return refuse(hit);
      if (err instanceof ApiError) return err.status === 413 ? refuse(err) : problem(err);
      const down = databaseUnavailable(err);
      if (down) {
        logger().warn({ err, url: req.url, method: req.method }, `request answered 503: ${down}`);
        return databaseUnavailableProblem(down);
      }
      logger().error({ err, url: req.url, method: req.method }, 'request failed');
      return problem(new ApiError(500, 'Internal Server Error', 'the server failed to answer; see its log'));
    }
  };
}
