import { readBody } from './body';
import { ApiError, badRequest } from './errors';
import { logger } from '../log';
import { authenticate, bearerToken } from '../auth/guard';
import { safeNextPath } from '../auth/origin';
import { LOGIN_PATH } from '../auth/policy';
import { clearSessionCookie, issueSession, revokeSession, sessionSetCookie, viaHttps } from '../auth/session';
import type { AuthState } from '../auth/state';
import { verifyToken } from '../auth/tokens';

/**
 * The login and logout exchanges behind POST /api/auth/login and POST /api/auth/logout (the
 * route handlers stay thin). `GET /login?token=` is handled by the server gate (lib/auth/gate.ts).
 */

/** Longest login body accepted (bytes): a token and a `next` path. */
export const MAX_LOGIN_BODY_BYTES = 16 * 1024;

function isForm(req: Request): boolean {
  const ct = (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  return ct === 'application/x-www-form-urlencoded';
}

function isJson(req: Request): boolean {
  const ct = (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  return ct === 'application/json';
}

/** The origin the request was sent to (its URL's), or undefined when it has none. */
function requestOrigin(req: Request): string | undefined {
  try {
    return new URL(req.url).origin;
  } catch {
    return undefined;
  }
}

/** The token and `next` of a login request body (form or JSON); an empty body has neither. */
async function readCredentials(req: Request): Promise<{ token: string; next: string | null }> {
  const text = await readBody(req, MAX_LOGIN_BODY_BYTES);
  if (!text.trim()) return { token: '', next: null };
  if (isForm(req)) {
    const p = new URLSearchParams(text);
    return { token: (p.get('token') ?? '').trim(), next: p.get('next') };
  }
  if (isJson(req)) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw badRequest('the body is not valid JSON; send {"token": "…"}');
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('the JSON body must be an object: {"token": "…"}');
    const { token = '', next } = v as { token?: unknown; next?: unknown };
    if (typeof token !== 'string') throw badRequest('"token" must be a string');
    return { token: token.trim(), next: typeof next === 'string' ? next : null };
  }
  throw new ApiError(415, 'Unsupported Media Type', 'send the token as JSON ({"token": "…"}) or as a form field "token" (application/x-www-form-urlencoded)');
}

/**
 * Checks the token in a login request (JSON `{token, next}`, a form, or — with an empty body —
 * `Authorization: Bearer`) and answers: a new session cookie (HttpOnly,
 * SameSite=Strict, Path=/) and 200 JSON `{ ok: true, next, expiresAt }` — or, for an HTML form,
 * 303 to `next`. A wrong token: 401 problem+json, or 303 back to /login?error=invalid.
 * `state`: the server's AuthState (the token hash checked, the session key signing the cookie).
 *
 * @throws ApiError 400 (malformed body), 413 (body over 16 KiB), 415 (other content types).
 */
export async function loginResponse(req: Request, state: AuthState): Promise<Response> {
  const form = isForm(req);
  const creds = await readCredentials(req);
  // No token in the body: exchange the bearer token, if any, for a session.
  const token = creds.token || (bearerToken(req.headers.get('authorization')) ?? '');
  const rawNext = creds.next;
  const next = safeNextPath(rawNext, requestOrigin(req));
  if (!verifyToken(token, state.tokenHash)) {
    logger().warn('login with a wrong token');
    if (form) {
      const q = new URLSearchParams({ error: 'invalid' });
      if (next !== '/') q.set('next', next);
      return new Response(null, { status: 303, headers: { location: `${LOGIN_PATH}?${q}`, 'cache-control': 'no-store' } });
    }
    throw new ApiError(401, 'Unauthorized', token ? 'the token is not valid' : 'no token given');
  }
  const { value, session } = issueSession(state);
  const cookie = sessionSetCookie(state, value, { secure: viaHttps(req.headers.get('x-forwarded-proto')) });
  logger().info('logged in');
  if (form) return new Response(null, { status: 303, headers: { location: next, 'set-cookie': cookie, 'cache-control': 'no-store' } });
  return Response.json(
    { ok: true, next, expiresAt: new Date(session.expiresAt).toISOString() },
    { headers: { 'set-cookie': cookie, 'cache-control': 'no-store' } },
  );
}

/**
 * Ends the caller's browser session (revoked at once, also across restarts) and clears the
 * cookie. 200 JSON `{ ok: true }`, or 303 to /login for an HTML form post. A bearer-token caller
 * has no session: nothing is revoked (rotate the token to revoke it — see SECURITY.md).
 * `state`: the server's AuthState (its revocation list is updated).
 */
export async function logoutResponse(req: Request, state: AuthState): Promise<Response> {
  const { identity } = authenticate((n) => req.headers.get(n), state);
  if (identity?.session) revokeSession(state, identity.session);
  const cookie = clearSessionCookie(state, { secure: viaHttps(req.headers.get('x-forwarded-proto')) });
  if (isForm(req)) return new Response(null, { status: 303, headers: { location: LOGIN_PATH, 'set-cookie': cookie, 'cache-control': 'no-store' } });
  return Response.json({ ok: true }, { headers: { 'set-cookie': cookie, 'cache-control': 'no-store' } });
}
