import { hostAllowed, isStateChanging, originMatches } from './origin';
import { type Session, hasSessionCookie, sessionFromCookieHeader } from './session';
import type { AuthState } from './state';
import { verifyToken } from './tokens';

/**
 * The one decision every request and WebSocket upgrade goes through — called by the HTTP gate
 * and the upgrade gate in the custom server (lib/auth/gate.ts) and again by apiRoute()
 * (lib/api/handler.ts), so a route is protected even if the outer gate is bypassed.
 *
 * Order: Host (DNS rebinding) → Origin (CSRF / cross-site WebSocket) → credentials.
 */

/** Reads one request header (lower-case name); undefined when absent. */
export type HeaderGetter = (name: string) => string | undefined | null;

/** Who is calling. There is one identity today: the admin token's holder. */
export interface Identity {
  subject: 'admin';
  /** How they proved it. */
  via: 'bearer' | 'cookie';
  /** The browser session, when via is 'cookie'. */
  session?: Session;
}

/** The outcome of checkRequest(). */
export type Verdict =
  | { ok: true; identity: Identity | null }
  | { ok: false; status: 400 | 401 | 403; title: string; detail: string };

/** What is being checked. */
export interface CheckOptions {
  /** No credentials needed (GET /api/health, POST /api/auth/login, the login page). */
  public?: boolean;
  /**
   * Treat as state-changing whatever the method (WebSocket upgrades: the socket can submit,
   * cancel and read everything). Default: POST/PUT/PATCH/DELETE and other non-safe methods.
   */
  stateChanging?: boolean;
}

/** `Authorization: Bearer <token>` → the token; null when absent; '' when malformed. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
}

/**
 * Who sent these headers, if anyone. A bearer token, when present, decides alone (a wrong
 * bearer token is a failure even with a valid cookie); otherwise the session cookie. `state` is
 * the server's AuthState (lib/auth/state.ts).
 */
export function authenticate(headers: HeaderGetter, state: AuthState): { identity: Identity | null; failure?: string } {
  const bearer = bearerToken(headers('authorization'));
  if (bearer !== null) {
    if (bearer === '') return { identity: null, failure: 'the Authorization header must be "Bearer <token>"' };
    if (!state.tokenHash) return { identity: null, failure: 'no token is configured on this server' };
    return verifyToken(bearer, state.tokenHash)
      ? { identity: { subject: 'admin', via: 'bearer' } }
      : { identity: null, failure: 'the token is not valid' };
  }
  const cookie = headers('cookie');
  const session = sessionFromCookieHeader(cookie, state);
  if (session) return { identity: { subject: 'admin', via: 'cookie', session } };
  if (hasSessionCookie(cookie, state)) return { identity: null, failure: 'the session has expired or was logged out; log in again' };
  return { identity: null };
}

/**
 * Decides whether a request may proceed.
 *
 * - Host must be acceptable (hostAllowed) → else 403.
 * - For state-changing requests and upgrades, an `Origin` header, when present, must match the
 *   request's Host or JOBDECK_ORIGINS → else 403. A request authenticated only by the session
 *   cookie must carry a matching Origin (browsers always send it on POST and WebSocket) → else
 *   403. Bearer-token clients (CLI, scripts) need no Origin: a browser cannot attach that header
 *   cross-site without a CORS preflight, which jobdeck never grants.
 * - Credentials: a valid bearer token or session cookie → ok; otherwise 401 unless public.
 * `state` is the server's AuthState (lib/auth/state.ts).
 */
export function checkRequest(req: { method: string; headers: HeaderGetter }, opts: CheckOptions, state: AuthState): Verdict {
  const host = req.headers('host') ?? undefined;
  if (!hostAllowed(host, state.bindHost, state.allowedOrigins)) {
    return {
      ok: false,
      status: 403,
      title: 'Forbidden',
      detail: `Host "${host}" is not allowed: jobdeck listens on loopback and answers only to localhost names (DNS-rebinding protection); set JOBDECK_ORIGINS for a proxy`,
    };
  }
  const changing = opts.stateChanging ?? isStateChanging(req.method);
  const origin = req.headers('origin') ?? undefined;
  if (changing && origin !== undefined && !originMatches(origin, host, state.allowedOrigins)) {
    return { ok: false, status: 403, title: 'Forbidden', detail: `cross-origin request refused: Origin "${origin}" does not match this server (${host ?? 'no Host header'})` };
  }
  const { identity, failure } = authenticate(req.headers, state);
  if (identity && identity.via === 'cookie' && changing && origin === undefined) {
    return { ok: false, status: 403, title: 'Forbidden', detail: 'a request authenticated by the session cookie must carry an Origin header (CSRF protection); scripts should send Authorization: Bearer <token>' };
  }
  if (identity || opts.public) return { ok: true, identity };
  return {
    ok: false,
    status: 401,
    title: 'Unauthorized',
    detail: failure
      ? `${failure}`
      : 'authentication required: send Authorization: Bearer <token> (the token is in $JOBDECK_HOME/token on the server, or JOBDECK_TOKEN), or log in at /login',
  };
}
