import { logger } from '../log';
import { ApiError, problem } from './errors';

/** Context Next.js passes to a route handler; `params` is a promise in Next 15+. */
export interface RouteContext<P> {
  params: Promise<P>;
}

/** Options of apiRoute(). */
export interface ApiRouteOptions {
  /** No token needed (only GET /api/health). */
  public?: boolean;
}

/**
 * Wraps a route handler: the one place that turns thrown ApiErrors (and unexpected errors) into
 * problem+json answers, and — once authentication is configured — checks the caller's token
 * before the handler runs. Route handlers stay thin: parse, call lib/, answer.
 */
export function apiRoute<P = Record<string, never>>(
  handler: (req: Request, params: P) => Promise<Response>,
  opts: ApiRouteOptions = {},
): (req: Request, ctx: RouteContext<P>) => Promise<Response> {
  void opts;
  return async (req, ctx) => {
    try {
      const params = ctx?.params ? await ctx.params : ({} as P);
      return await handler(req, params);
    } catch (err) {
      if (err instanceof ApiError) return problem(err);
      logger().error({ err, url: req.url, method: req.method }, 'request failed');
      return problem(new ApiError(500, 'Internal Server Error', 'the server failed to answer; see its log'));
    }
  };
}
