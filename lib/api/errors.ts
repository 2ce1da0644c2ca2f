/**
 * API errors, answered as RFC 9457 `application/problem+json`:
 * `{ type, title, status, detail, ...extra }`. Throw an ApiError anywhere under a handler
 * wrapped with apiRoute() and the client gets it as is.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** Short, stable summary ("Not Found", "Invalid job spec"). */
    readonly title: string,
    /** What went wrong and where, for a human. */
    readonly detail: string,
    /** Extra members (e.g. `issues` with line and key path for a spec error). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

/** The problem+json body and status for an ApiError. */
export function problem(err: ApiError): Response {
  return new Response(JSON.stringify({ type: 'about:blank', title: err.title, status: err.status, detail: err.detail, ...err.extra }), {
    status: err.status,
    headers: { 'content-type': 'application/problem+json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

export const badRequest = (detail: string, extra?: Record<string, unknown>) => new ApiError(400, 'Bad Request', detail, extra);
export const notFound = (detail: string) => new ApiError(404, 'Not Found', detail);
export const conflict = (detail: string, extra?: Record<string, unknown>) => new ApiError(409, 'Conflict', detail, extra);
export const payloadTooLarge = (detail: string) => new ApiError(413, 'Payload Too Large', detail);
export const unprocessable = (detail: string, extra?: Record<string, unknown>) => new ApiError(422, 'Unprocessable Content', detail, extra);
export const forbidden = (detail: string, extra?: Record<string, unknown>) => new ApiError(403, 'Forbidden', detail, extra);

/** Seconds a client is told to wait (Retry-After) before it retries after the database was unreachable. */
export const DATABASE_RETRY_AFTER_S = 2;

/**
 * The 503 answer of a request that found the database unreachable (`why`: lib/db/unavailable.ts),
 * with Retry-After. What it says holds for every route: a read can simply be repeated; a submit
 * with a submissionId too (it is idempotent); another write may or may not have happened.
 */
export function databaseUnavailableProblem(why: string): Response {
  const res = problem(
    new ApiError(
      503,
      'Service Unavailable',
      `the database cannot be reached right now (${why}); retry in a few seconds. A read, or a submit with a submissionId, is safe to repeat; another change may or may not have been made — check before repeating it`,
      { retryAfterSeconds: DATABASE_RETRY_AFTER_S },
    ),
  );
  res.headers.set('retry-after', String(DATABASE_RETRY_AFTER_S));
  return res;
}
