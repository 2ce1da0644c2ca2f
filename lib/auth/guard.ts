import { effectiveQuota, NO_ROLE_QUOTAS, roleMaxPriority, type RoleQuotas } from '../jobs/quotas';
import type { Actor } from '../jobs/roles';
import type { DirectoryUser } from './directory';
import { hostAllowed, isStateChanging, originMatches } from './origin';
import { authorize, type RouteRule } from './rules';
import { type Session, hasSessionCookie, sessionFromCookieHeader } from './session';
import type { AuthState } from './state';
import { hashToken, verifyToken } from './tokens';

/**
 * The one decision every request and WebSocket upgrade goes through — called by the HTTP gate
 * and the upgrade gate in the custom server (lib/auth/gate.ts) and again by apiRoute()
 * (lib/api/handler.ts), so a route is protected even if the outer gate is bypassed.
 *
 * Order: Host (DNS rebinding) → Origin (CSRF / cross-site WebSocket) → credentials → the
 * route's rule (lib/auth/rules.ts), when the caller names the path.
 */

/** Reads one request header (lower-case name); undefined when absent. */
export type HeaderGetter = (name: string) => string | undefined | null;

/** Who is calling: a user, and how they proved it. */
export interface Identity {
  user: DirectoryUser;
  /** How they proved it. */
  via: 'bearer' | 'cookie';
  /** The browser session, when via is 'cookie'. */
  session?: Session;
  /** The personal token's id (ApiToken.id); null for the admin token or a session. */
  tokenId: number | null;
  /** The token's first characters, for lists and the audit log; null for a session. */
  tokenPrefix: string | null;
  /**
   * Set when the token is an attempt's own (JOBDECK_TOKEN in a job's environment, docs/design.md
   * §16): it has its submitter's rights but makes no credential that would outlive it.
   */
  attemptId?: number;
}

/** Characters of a token shown as its prefix (`jdp_` + 8, or the admin token's `jd_` + 9). */
export const TOKEN_PREFIX_CHARS = 12;

/**
 * The Actor (lib/jobs/roles.ts) of an identity, with the client's address, its pending quota
 * (its own, else its role's default in `quotas`: the server's MonitorSettings.quotas) and its
 * role's priority cap.
 */
export function actorOf(identity: Identity, ip: string | null, quotas: RoleQuotas = NO_ROLE_QUOTAS): Actor {
  const u = identity.user;
  return { userId: u.id, name: u.name, role: u.role, tokenId: identity.tokenId, tokenPrefix: identity.tokenPrefix, ip, pendingQuota: effectiveQuota(u, 'maxPendingJobs', quotas), maxPriority: roleMaxPriority(u.role, quotas) };
}

/** The outcome of checkRequest(). */
export type Verdict =
  | { ok: true; identity: Identity | null; rule?: RouteRule }
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
  /**
   * The request's path (`new URL(…).pathname`): when given, the caller's role is checked against
   * the path's rule (lib/auth/rules.ts authorize) → 403, also for a path with no rule.
   */
  path?: string;
}

/** `Authorization: Bearer <token>` → the token; null when absent; '' when malformed. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
}

/** A failure of authenticate(). */
const fail = (failure: string) => ({ identity: null, failure });

/** Who holds this bearer token: the admin token (the first admin), or a live personal token. */
function bearerIdentity(bearer: string, state: AuthState, now: number): { identity: Identity | null; failure?: string } {
  const prefix = bearer.slice(0, TOKEN_PREFIX_CHARS);
  if (state.tokenHash && verifyToken(bearer, state.tokenHash)) {
    const user = state.directory.user(1);
    if (user) return { identity: { user, via: 'bearer', tokenId: null, tokenPrefix: prefix } };
  }
  const found = state.directory.token(hashToken(bearer).toString('hex'));
  if (!found) return fail(state.tokenHash || state.directory.hasTokens() ? 'the token is not valid (unknown or revoked)' : 'no token is configured on this server');
  if (found.token.expiresAt !== null && found.token.expiresAt <= now) return fail(`the token ${found.token.prefix}… expired at ${new Date(found.token.expiresAt).toISOString()}`);
  if (!found.user || found.user.disabled) return fail(`the token's user is disabled`);
  if (found.token.epoch !== found.user.tokenEpoch) return fail(`the token ${found.token.prefix}… was ended when its user was disabled`);
  state.directory.noteUse(found.token.id, now);
  return { identity: { user: found.user, via: 'bearer', tokenId: found.token.id, tokenPrefix: found.token.prefix, ...(found.token.attemptId !== null ? { attemptId: found.token.attemptId } : {}) } };
}

/**
 * Who sent these headers, if anyone. A bearer token, when present, decides alone (a wrong
 * bearer token is a failure even with a valid cookie): the admin token authenticates as the
 * first admin (user 1), a personal token as its user unless it is revoked, expired or its user
 * disabled; otherwise the session cookie, as its user unless disabled. `state` is the server's
 * AuthState (lib/auth/state.ts); its directory is read synchronously (lib/auth/directory.ts).
 */
export function authenticate(headers: HeaderGetter, state: AuthState, now: number = Date.now()): { identity: Identity | null; failure?: string } {
  const bearer = bearerToken(headers('authorization'));
  if (bearer !== null) {
    if (bearer === '') return fail('the Authorization header must be "Bearer <token>"');
    return bearerIdentity(bearer, state, now);
  }
  const cookie = headers('cookie');
  const session = sessionFromCookieHeader(cookie, state, now);
  if (session) {
    const user = state.directory.user(session.userId);
    if (!user || user.disabled) return fail(`the session's user is disabled; log in again`);
    if (session.epoch !== user.sessionEpoch) return fail('the session was ended (its password changed, or its user was disabled); log in again');
    return { identity: { user, via: 'cookie', session, tokenId: null, tokenPrefix: null } };
  }
  if (hasSessionCookie(cookie, state)) return fail('the session has expired or was logged out; log in again');
  return { identity: null };
}

/**
 * Why a credential that authenticated earlier (a WebSocket's, checked at its upgrade) no longer
 * does, or null while it still does: its user disabled or gone, a session expired, logged out or
 * of an older epoch (password changed, user disabled), a personal token expired, revoked or of an
 * older epoch (user disabled, even if enabled again since). The admin token holds until the
 * server restarts with another. `state` as for authenticate(); `now` in ms.
 */
export function credentialProblem(identity: Identity, state: AuthState, now: number = Date.now()): string | null {
  const user = state.directory.user(identity.user.id);
  if (!user || user.disabled) return 'the user was disabled';
  const s = identity.session;
  if (identity.via === 'cookie' && s) {
    if (s.expiresAt <= now) return 'the session expired; log in again';
    if (state.revoked.has(s.id)) return 'the session was logged out; log in again';
    if (s.epoch !== user.sessionEpoch) return 'the session was ended (its password changed, or its user was disabled); log in again';
    return null;
  }
  if (identity.tokenId === null) return null;
  const t = state.directory.tokenById(identity.tokenId);
  if (!t) return 'the token was revoked';
  if (t.expiresAt !== null && t.expiresAt <= now) return `the token ${t.prefix}… expired at ${new Date(t.expiresAt).toISOString()}`;
  if (t.epoch !== user.tokenEpoch) return `the token ${t.prefix}… was ended when its user was disabled`;
  return null;
}

/** When a credential ends by itself (ms since epoch): its session's or its token's expiry; null: never. */
export function credentialExpiry(identity: Identity, state: AuthState): number | null {
  if (identity.via === 'cookie' && identity.session) return identity.session.expiresAt;
  if (identity.tokenId === null) return null;
  return state.directory.tokenById(identity.tokenId)?.expiresAt ?? null;
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
  if (identity && opts.path !== undefined) {
    const a = authorize(identity.user.role, req.method, opts.path, identity.attemptId !== undefined);
    if (!a.ok) return { ok: false, status: 403, title: 'Forbidden', detail: a.detail };
    return { ok: true, identity, rule: a.rule };
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
