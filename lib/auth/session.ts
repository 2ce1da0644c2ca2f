import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type AuthState, revokeSessionId } from './state';

/**
 * Browser sessions: an HMAC-signed cookie, so sessions survive a server restart without a
 * session table. Value: `v3.<expiresAtMs base36>.<userId base36>.<epoch base36>.<id>.<mac>`,
 * where `epoch` is the user's session epoch when it was issued (User.sessionEpoch: a disable or a
 * password change moves it on, and the session ends — docs/design.md §15), `id` is 16 random
 * bytes (base64url) and `mac` = HMAC-SHA256(sessionKey, everything before it) (base64url). Older
 * cookies still verify, as epoch 0: `v1.<exp>.<id>.<mac>` (the first admin, user 1) and
 * `v2.<exp>.<userId>.<id>.<mac>`. The key is
 * derived from `session.key` and the token hash (lib/auth/state.ts), so rotating the token or
 * deleting session.key ends every session. Logout adds the id to a revocation list kept until
 * the session would have expired.
 *
 * Cookie attributes: HttpOnly (scripts cannot read it), SameSite=Strict (never sent on
 * cross-site requests), Path=/, Max-Age = the session lifetime, Secure when the request arrived
 * over HTTPS (a TLS proxy sets X-Forwarded-Proto).
 */

/** A verified session. */
export interface Session {
  id: string;
  /** ms since epoch. */
  expiresAt: number;
  /** Whose session it is (User.id). */
  userId: number;
  /** The user's session epoch it was issued under (0 for v1/v2 cookies). */
  epoch: number;
}

/** Parses a Cookie header into name → values (a name may appear more than once). */
export function parseCookies(header: string | null | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (!name) continue;
    const list = out.get(name);
    if (list) list.push(value);
    else out.set(name, [value]);
  }
  return out;
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

/**
 * Signs a new session of user `userId` (default: the first admin) valid for the state's
 * lifetime, under the user's current session epoch (from the state's directory). `now` in ms
 * (injectable for tests).
 */
export function issueSession(state: AuthState, now: number = Date.now(), userId = 1): { value: string; session: Session } {
  const expiresAt = now + state.sessionTtlMs;
  const id = randomBytes(16).toString('base64url');
  const epoch = state.directory.user(userId)?.sessionEpoch ?? 0;
  const payload = `v3.${expiresAt.toString(36)}.${userId.toString(36)}.${epoch.toString(36)}.${id}`;
  return { value: `${payload}.${mac(state.sessionKey, payload).toString('base64url')}`, session: { id, expiresAt, userId, epoch } };
}

/**
 * Verifies a session cookie value: well-formed, MAC valid (constant-time compare), not expired,
 * not logged out. Returns the session or null (its epoch is checked against its user's by
 * lib/auth/guard.ts). Never throws.
 */
export function verifySession(value: string | null | undefined, state: AuthState, now: number = Date.now()): Session | null {
  if (!value || value.length > 200 || !state.tokenHash) return null;
  const parts = value.split('.');
  const v1 = parts.length === 4 && parts[0] === 'v1';
  const v3 = parts.length === 6 && parts[0] === 'v3';
  if (!v1 && !v3 && !(parts.length === 5 && parts[0] === 'v2')) return null;
  const [, expB36, uidB36, epochB36, id, sig] = v1 ? [parts[0], parts[1], '1', '0', parts[2], parts[3]] : v3 ? parts : [parts[0], parts[1], parts[2], '0', parts[3], parts[4]];
  if (!/^[0-9a-z]{1,12}$/.test(expB36) || !/^[0-9a-z]{1,8}$/.test(uidB36) || !/^[0-9a-z]{1,8}$/.test(epochB36) || !/^[A-Za-z0-9_-]{22}$/.test(id) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return null;
  // What was signed: everything before the mac.
  const expected = mac(state.sessionKey, parts.slice(0, -1).join('.'));
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const expiresAt = parseInt(expB36, 36);
  if (!(expiresAt > now)) return null;
  if (state.revoked.has(id)) return null;
  return { id, expiresAt, userId: parseInt(uidB36, 36), epoch: parseInt(epochB36, 36) };
}

/** The first valid session among the cookies of a Cookie header (duplicates are tried in turn). */
export function sessionFromCookieHeader(header: string | null | undefined, state: AuthState, now: number = Date.now()): Session | null {
  for (const v of parseCookies(header).get(state.cookieName) ?? []) {
    const s = verifySession(v, state, now);
    if (s) return s;
  }
  return null;
}

/** True when the Cookie header carries our session cookie at all (valid or not). */
export function hasSessionCookie(header: string | null | undefined, state: AuthState): boolean {
  return parseCookies(header).has(state.cookieName);
}

/** Set-Cookie header value for a new session. */
export function sessionSetCookie(state: AuthState, value: string, opts: { secure?: boolean } = {}): string {
  const maxAge = Math.floor(state.sessionTtlMs / 1000);
  return `${state.cookieName}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${opts.secure ? '; Secure' : ''}`;
}

/** Set-Cookie header value that deletes the session cookie. */
export function clearSessionCookie(state: AuthState, opts: { secure?: boolean } = {}): string {
  return `${state.cookieName}=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict${opts.secure ? '; Secure' : ''}`;
}

/** Logs a session out: it stops verifying at once, here and after a restart. */
export function revokeSession(state: AuthState, session: Session): void {
  revokeSessionId(state, session.id, session.expiresAt);
}

/**
 * True when the request reached us over HTTPS according to a TLS proxy (`X-Forwarded-Proto:
 * https`). Only used to ADD the Secure attribute — a forged header can only make the cookie
 * stricter, never weaker.
 */
export function viaHttps(forwardedProto: string | null | undefined): boolean {
  return (forwardedProto ?? '').split(',')[0].trim().toLowerCase() === 'https';
}
