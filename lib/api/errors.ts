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
