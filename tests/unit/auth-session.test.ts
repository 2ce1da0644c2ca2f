import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRequest, bearerToken } from '../../lib/auth/guard';
import { hostAllowed, originMatches, safeNextPath } from '../../lib/auth/origin';
import { isPublicRequest } from '../../lib/auth/policy';
import {
  clearSessionCookie,
  issueSession,
  parseCookies,
  revokeSession,
  sessionFromCookieHeader,
  sessionSetCookie,
  verifySession,
} from '../../lib/auth/session';
import { type AuthState, loadAuth } from '../../lib/auth/state';

const home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-session-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const TOKEN = 'unit-test-token-0123456789abcdef';
function state(over: Partial<AuthState> = {}): AuthState {
  return { ...loadAuth({ home, env: { JOBDECK_TOKEN: TOKEN } }).state, ...over };
}

describe('cookie parsing', () => {
  it('parses names and values, keeps duplicates, strips quotes, skips junk', () => {
    const c = parseCookies('a=1; b="two"; a=3;; =x; noeq; c=with=equals');
    expect(c.get('a')).toEqual(['1', '3']);
    expect(c.get('b')).toEqual(['two']);
    expect(c.get('c')).toEqual(['with=equals']);
    expect(c.has('noeq')).toBe(false);
    expect(parseCookies(undefined).size).toBe(0);
  });
});

describe('signed sessions', () => {
  it('carries the user\'s session epoch; cookies of the older formats still verify, as epoch 0', () => {
    const s = state();
    const now = 1_700_000_000_000;
    const { value, session } = issueSession(s, now, 7);
    expect(session).toMatchObject({ userId: 7, epoch: 0 });
    expect(verifySession(value, s, now)).toEqual(session);
    const sign = (payload: string) => `${payload}.${createHmac('sha256', s.sessionKey).update(payload).digest('base64url')}`;
    const exp = (now + 60_000).toString(36);
    const id = 'A'.repeat(22);
    expect(verifySession(sign(`v1.${exp}.${id}`), s, now)).toEqual({ id, expiresAt: now + 60_000, userId: 1, epoch: 0 });
    expect(verifySession(sign(`v2.${exp}.${(7).toString(36)}.${id}`), s, now)).toEqual({ id, expiresAt: now + 60_000, userId: 7, epoch: 0 });
    expect(verifySession(sign(`v3.${exp}.${(7).toString(36)}.${(3).toString(36)}.${id}`), s, now)).toEqual({ id, expiresAt: now + 60_000, userId: 7, epoch: 3 });
  });

  it('a fresh session verifies; tampering, expiry, another key and revocation do not', () => {
    const s = state();
    const now = 1_700_000_000_000;
    const { value, session } = issueSession(s, now);
    expect(verifySession(value, s, now + 1000)).toEqual(session);
    expect(verifySession(value, s, session.expiresAt)).toBeNull();
    // v3.<exp>.<user>.<epoch>.<id>.<mac>
    const parts = value.split('.');
    expect(parts).toHaveLength(6);
    const with_ = (i: number, v: string) => parts.map((p, j) => (j === i ? v : p)).join('.');
    expect(verifySession(with_(1, (session.expiresAt + 1e9).toString(36)), s, now)).toBeNull();
    // Another user, or an epoch moved back: not what was signed.
    expect(verifySession(with_(2, '2'), s, now)).toBeNull();
    expect(verifySession(with_(3, '1'), s, now)).toBeNull();
    expect(verifySession(with_(5, parts[5].slice(0, -2) + (parts[5].endsWith('AA') ? 'BA' : 'AA')), s, now)).toBeNull();
    expect(verifySession(value.replace('v3.', 'v2.'), s, now)).toBeNull();
    expect(verifySession('garbage', s, now)).toBeNull();
    expect(verifySession('', s, now)).toBeNull();
    // Another token → another key → the cookie is worthless.
    const other = loadAuth({ home, env: { JOBDECK_TOKEN: 'a-different-token-0123456789' } }).state;
    expect(verifySession(value, other, now)).toBeNull();
    // Logged out.
    const s2 = state({ revoked: new Map() });
    const fresh = issueSession(s2);
    expect(verifySession(fresh.value, s2)).not.toBeNull();
    revokeSession(s2, fresh.session);
    expect(verifySession(fresh.value, s2)).toBeNull();
    // The revocation survives a reload of the data folder (a restart).
    expect(verifySession(fresh.value, state())).toBeNull();
  });

  it('finds the valid one among duplicate cookies (cookie tossing cannot shadow it)', () => {
    const s = state();
    const { value } = issueSession(s);
    expect(sessionFromCookieHeader(`${s.cookieName}=forged; other=1; ${s.cookieName}=${value}`, s)).not.toBeNull();
    expect(sessionFromCookieHeader(`${s.cookieName}=forged`, s)).toBeNull();
  });

  it('Set-Cookie is HttpOnly, SameSite=Strict, Path=/, with Max-Age; Secure only behind HTTPS', () => {
    const s = state();
    const c = sessionSetCookie(s, 'v');
    expect(c).toMatch(new RegExp(`^${s.cookieName}=v; `));
    expect(c).toContain('HttpOnly');
    expect(c).toContain('SameSite=Strict');
    expect(c).toContain('Path=/');
    expect(c).toContain(`Max-Age=${Math.floor(s.sessionTtlMs / 1000)}`);
    expect(c).not.toContain('Secure');
    expect(sessionSetCookie(s, 'v', { secure: true })).toContain('; Secure');
    expect(clearSessionCookie(s)).toContain('Max-Age=0');
  });
});

describe('origin and host matching', () => {
  it('matches Origin to Host by host:port, whatever the scheme; never null or other ports', () => {
    expect(originMatches('http://127.0.0.1:3000', '127.0.0.1:3000')).toBe(true);
    expect(originMatches('http://LOCALHOST:3000', 'localhost:3000')).toBe(true);
    expect(originMatches('https://jobs.example.com', 'jobs.example.com')).toBe(true);
    expect(originMatches('https://jobs.example.com', 'jobs.example.com:443')).toBe(true);
    expect(originMatches('http://127.0.0.1:3001', '127.0.0.1:3000')).toBe(false);
    expect(originMatches('http://evil.example', '127.0.0.1:3000')).toBe(false);
    expect(originMatches('null', '127.0.0.1:3000')).toBe(false);
    expect(originMatches('file://', '127.0.0.1:3000')).toBe(false);
    expect(originMatches('http://127.0.0.1:3000', undefined)).toBe(false);
    expect(originMatches('https://jobs.example.com', '127.0.0.1:3000', ['https://jobs.example.com'])).toBe(true);
  });

  it('on loopback, only localhost names pass the Host check (DNS rebinding)', () => {
    expect(hostAllowed('127.0.0.1:3000', '127.0.0.1')).toBe(true);
    expect(hostAllowed('localhost:8888', '127.0.0.1')).toBe(true);
    expect(hostAllowed('[::1]:3000', '127.0.0.1')).toBe(true);
    expect(hostAllowed('evil.example:3000', '127.0.0.1')).toBe(false);
    expect(hostAllowed('jobs.example.com', '127.0.0.1', ['https://jobs.example.com'])).toBe(true);
    expect(hostAllowed('anything.example', '0.0.0.0')).toBe(true);
    expect(hostAllowed(undefined, '127.0.0.1')).toBe(true);
    expect(hostAllowed('a b', '127.0.0.1')).toBe(false);
  });

  it('next paths stay on this site', () => {
    expect(safeNextPath('/jobs/3?tab=logs#x')).toBe('/jobs/3?tab=logs#x');
    expect(safeNextPath('//evil.example/x')).toBe('/');
    expect(safeNextPath('/\\evil.example')).toBe('/');
    expect(safeNextPath('https://evil.example')).toBe('/');
    expect(safeNextPath('javascript:alert(1)')).toBe('/');
    expect(safeNextPath('/login')).toBe('/');
    expect(safeNextPath(null)).toBe('/');
  });
});

describe('checkRequest', () => {
  const s = state({ bindHost: '127.0.0.1' });
  const h = (headers: Record<string, string>) => (n: string) => headers[n];
  const HOST = '127.0.0.1:4000';
  const cookie = `${s.cookieName}=${issueSession(s).value}`;

  it('bearer: right → ok, wrong → 401, malformed → 401', () => {
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, authorization: `Bearer ${TOKEN}` }) }, {}, s)).toMatchObject({ ok: true, identity: { via: 'bearer' } });
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, authorization: `Bearer ${TOKEN}x` }) }, {}, s)).toMatchObject({ ok: false, status: 401 });
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, authorization: TOKEN }) }, {}, s)).toMatchObject({ ok: false, status: 401 });
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST }) }, {}, s)).toMatchObject({ ok: false, status: 401 });
    expect(bearerToken('bearer  abc ')).toBe('abc');
  });

  it('a wrong bearer token fails even next to a valid cookie', () => {
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, cookie, authorization: 'Bearer nope' }) }, {}, s)).toMatchObject({ ok: false, status: 401 });
  });

  it('cookie: GET ok; POST needs a same-origin Origin; cross-origin → 403 even with a bearer token', () => {
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, cookie }) }, {}, s)).toMatchObject({ ok: true, identity: { via: 'cookie' } });
    expect(checkRequest({ method: 'POST', headers: h({ host: HOST, cookie, origin: `http://${HOST}` }) }, {}, s)).toMatchObject({ ok: true });
    expect(checkRequest({ method: 'POST', headers: h({ host: HOST, cookie }) }, {}, s)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest({ method: 'DELETE', headers: h({ host: HOST, cookie, origin: 'http://evil.example' }) }, {}, s)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest({ method: 'POST', headers: h({ host: HOST, authorization: `Bearer ${TOKEN}` }) }, {}, s)).toMatchObject({ ok: true });
    expect(checkRequest({ method: 'POST', headers: h({ host: HOST, authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' }) }, {}, s)).toMatchObject({ ok: false, status: 403 });
    // An upgrade counts as state-changing even though it is a GET.
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, cookie, origin: 'http://evil.example' }) }, { stateChanging: true }, s)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest({ method: 'GET', headers: h({ host: HOST, cookie }) }, { stateChanging: true }, s)).toMatchObject({ ok: false, status: 403 });
  });

  it('a rebinding Host is refused before credentials are looked at', () => {
    expect(checkRequest({ method: 'GET', headers: h({ host: 'evil.example:4000', authorization: `Bearer ${TOKEN}` }) }, {}, s)).toMatchObject({ ok: false, status: 403 });
  });

  it('public requests pass without credentials but not cross-origin', () => {
    expect(checkRequest({ method: 'POST', headers: h({ host: HOST }) }, { public: true }, s)).toMatchObject({ ok: true, identity: null });
    expect(checkRequest({ method: 'POST', headers: h({ host: HOST, origin: 'http://evil.example' }) }, { public: true }, s)).toMatchObject({ ok: false, status: 403 });
  });
});

describe('public policy', () => {
  it('lists only health, login and static assets', () => {
    expect(isPublicRequest('GET', '/api/health')).toBe(true);
    expect(isPublicRequest('POST', '/api/health')).toBe(false);
    expect(isPublicRequest('POST', '/api/auth/login')).toBe(true);
    expect(isPublicRequest('POST', '/api/auth/logout')).toBe(false);
    expect(isPublicRequest('GET', '/api/auth/oidc/start')).toBe(true);
    expect(isPublicRequest('GET', '/api/auth/oidc/callback')).toBe(true);
    expect(isPublicRequest('POST', '/api/auth/oidc/callback')).toBe(false);
    expect(isPublicRequest('GET', '/api/auth/oidc')).toBe(false);
    expect(isPublicRequest('GET', '/login')).toBe(true);
    expect(isPublicRequest('POST', '/login')).toBe(false);
    expect(isPublicRequest('GET', '/_next/static/chunks/x.js')).toBe(true);
    expect(isPublicRequest('GET', '/_next/image')).toBe(false);
    expect(isPublicRequest('GET', '/')).toBe(false);
    expect(isPublicRequest('GET', '/jobs/1')).toBe(false);
    expect(isPublicRequest('GET', '/api/jobs')).toBe(false);
    expect(isPublicRequest('GET', '/logo.svg', { publicFiles: new Set(['/logo.svg']) })).toBe(true);
    expect(isPublicRequest('GET', '/_next/webpack-hmr')).toBe(false);
    expect(isPublicRequest('GET', '/_next/webpack-hmr', { dev: true })).toBe(true);
  });
});
