import { readBody } from './body';
import { MAX_LOGIN_BODY_BYTES } from './body-limits';
import { ApiError, badRequest } from './errors';
import { logger } from '../log';
import { authenticate, bearerToken } from '../auth/guard';
import { safeNextPath } from '../auth/origin';
import { LOGIN_PATH } from '../auth/policy';
import { clearSessionCookie, issueSession, revokeSession, sessionSetCookie, viaHttps } from '../auth/session';
import type { AuthState } from '../auth/state';
import { verifyToken } from '../auth/tokens';
import { verifyPassword } from '../auth/password';
import type { DirectoryUser } from '../auth/directory';
import type { Actor } from '../jobs/roles';
import type { Store } from '../store';
import { record } from './audit';

/**
 * The login and logout exchanges behind POST /api/auth/login and POST /api/auth/logout (the
 * route handlers stay thin). `GET /login?token=` is handled by the server gate (lib/auth/gate.ts).
 */

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

/** What a login request carries: a token, or a user name and password; and `next`. */
interface Credentials {
  token: string;
  username: string;
  password: string;
  next: string | null;
}

/** Longest user name and password a login reads (characters). */
const MAX_USERNAME = 63;
const MAX_PASSWORD = 256;

function field(v: unknown, name: string, max: number): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw badRequest(`"${name}" must be a string`, { field: name });
  if (v.length > max) throw badRequest(`"${name}" must be at most ${max} characters`, { field: name });
  return v;
}

/** The credentials and `next` of a login request body (form or JSON); an empty body has none. */
async function readCredentials(req: Request): Promise<Credentials> {
  const text = await readBody(req, MAX_LOGIN_BODY_BYTES);
  if (!text.trim()) return { token: '', username: '', password: '', next: null };
  if (isForm(req)) {
    const p = new URLSearchParams(text);
    return { token: (p.get('token') ?? '').trim(), username: field(p.get('username'), 'username', MAX_USERNAME).trim(), password: field(p.get('password'), 'password', MAX_PASSWORD), next: p.get('next') };
  }
  if (isJson(req)) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw badRequest('the body is not valid JSON; send {"token": "…"}');
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('the JSON body must be an object: {"token": "…"}');
    const { token = '', next, username, password } = v as { token?: unknown; next?: unknown; username?: unknown; password?: unknown };
    if (typeof token !== 'string') throw badRequest('"token" must be a string', { field: 'token' });
    return { token: token.trim(), username: field(username, 'username', MAX_USERNAME).trim(), password: field(password, 'password', MAX_PASSWORD), next: typeof next === 'string' ? next : null };
  }
  throw new ApiError(415, 'Unsupported Media Type', 'send the token as JSON ({"token": "…"}) or as a form field "token" (application/x-www-form-urlencoded)');
}

/** Failed logins one client address or one user name may make per window before 429. */
export const LOGIN_FAILURES_MAX = 10;
/** The window of LOGIN_FAILURES_MAX (ms). */
export const LOGIN_WINDOW_MS = 15 * 60_000;

/**
 * Failed logins per key (`ip:<addr>`, `user:<name>`) in the last LOGIN_WINDOW_MS, in memory:
 * enough to make guessing a password over the network slow (10 tries per 15 minutes per name and
 * per address). At most 10,000 keys; the oldest go first.
 */
export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();

  /** True when `key` has used up its failures in the window. */
  blocked(key: string, now = Date.now()): boolean {
    const list = (this.failures.get(key) ?? []).filter((t) => now - t < LOGIN_WINDOW_MS);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list.length >= LOGIN_FAILURES_MAX;
  }

  fail(key: string, now = Date.now()): void {
    const list = [...(this.failures.get(key) ?? []), now].slice(-LOGIN_FAILURES_MAX);
    // Re-inserted, so the map's order is by last failure (the oldest key is dropped first).
    this.failures.delete(key);
    this.failures.set(key, list);
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value!);
  }
}

/** The process's limiter (one server per process). */
const limiter = new LoginLimiter();

/**
 * A password login: a password given and no token (the login form's hidden `username` field,
 * there for password managers, comes with a token login too).
 */
const byPassword = (creds: Credentials) => !creds.token && creds.password !== '';

/** Who logs in with these credentials, or null (wrong token, unknown user, wrong password, disabled). */
async function checkCredentials(creds: Credentials, token: string, state: AuthState): Promise<DirectoryUser | null> {
  if (byPassword(creds)) {
    const user = state.directory.userByName(creds.username);
    // A missing user costs a hash too, so timing does not tell which names exist.
    const ok = await verifyPassword(creds.password, user?.passwordHash ?? 'scrypt$131072$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    return ok && user && !user.disabled ? user : null;
  }
  return verifyToken(token, state.tokenHash) ? (state.directory.user(1) ?? null) : null;
}

const asActor = (u: DirectoryUser, ip: string | null, tokenPrefix: string | null = null): Actor => ({ userId: u.id, name: u.name, role: u.role, tokenId: null, tokenPrefix, ip });

/**
 * Checks the token in a login request (JSON `{token, next}`, a form, or — with an empty body —
 * `Authorization: Bearer`) and answers: a new session cookie (HttpOnly,
 * SameSite=Strict, Path=/) and 200 JSON `{ ok: true, next, expiresAt }` — or, for an HTML form,
 * 303 to `next`. A wrong token: 401 problem+json, or 303 back to /login?error=invalid.
 * `state`: the server's AuthState (the token hash checked, the session key signing the cookie).
 *
 * With `username` and `password` instead of a token, the user's password (scrypt) is checked;
 * LOGIN_FAILURES_MAX failed password logins per address or name in LOGIN_WINDOW_MS → 429. Every login and
 * failed login is audited (`store`, `ip`: the client's address).
 *
 * @throws ApiError 400 (malformed body), 413 (body over 16 KiB), 415 (other content types), 429.
 */
export async function loginResponse(req: Request, state: AuthState, store?: Store, ip: string | null = null): Promise<Response> {
  const form = isForm(req);
  const creds = await readCredentials(req);
  // No token in the body: exchange the bearer token, if any, for a session.
  const token = creds.token || (bearerToken(req.headers.get('authorization')) ?? '');
  const rawNext = creds.next;
  const next = safeNextPath(rawNext, requestOrigin(req));
  const password = byPassword(creds);
  // Passwords only: a token is 256 random bits, and a wrong one must not lock out the right one.
  const keys = password ? [`ip:${ip ?? '?'}`, `user:${creds.username}`] : [];
  if (keys.some((k) => limiter.blocked(k))) {
    throw new ApiError(429, 'Too Many Requests', `too many failed logins; wait up to ${LOGIN_WINDOW_MS / 60_000} minutes`);
  }
  const user = await checkCredentials(creds, token, state);
  if (!user) {
    for (const k of keys) limiter.fail(k);
    const name = password ? creds.username : '(token)';
    if (store) await record(store, { userId: null, name, role: 'viewer', tokenId: null, tokenPrefix: null, ip }, 'login.failed', null, password ? { via: 'password', username: creds.username } : { via: 'token' });
    logger().warn(password ? 'login with a wrong user name or password' : 'login with a wrong token');
    if (form) {
      const q = new URLSearchParams({ error: 'invalid' });
      if (next !== '/') q.set('next', next);
      return new Response(null, { status: 303, headers: { location: `${LOGIN_PATH}?${q}`, 'cache-control': 'no-store' } });
    }
    throw new ApiError(401, 'Unauthorized', password ? 'the user name or password is not valid' : token ? 'the token is not valid' : 'no token given');
  }
  const { value, session } = issueSession(state, Date.now(), user.id);
  if (store) await record(store, asActor(user, ip, password ? null : token.slice(0, 12)), 'login', null, { via: password ? 'password' : 'token' });
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
