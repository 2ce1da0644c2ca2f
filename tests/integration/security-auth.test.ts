/**
 * Who may do what, against a real server process on PGlite and on PostgreSQL:
 * - every API route found under app/api (enumerated at test time, with the methods each file
 *   exports) answers 401 without a token and with a wrong one, and works with the right one;
 *   only GET /api/health is open (and the single sign-on routes, which answer 404 when it is off);
 * - every WebSocket upgrade under /ws/ is refused without / with a wrong token, opens with it;
 * - every page redirects to /login when not logged in; the login URL and the login form work;
 * - with a valid session cookie, a cross-origin POST and a cross-origin WebSocket are refused
 *   (and change nothing), same-origin ones work; a cookie POST without Origin is refused;
 * - logout revokes the session; a DNS-rebinding Host is refused.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-security npx next build`, then
 * `JOBDECK_NEXT_DIST=.next-security npx vitest run tests/integration/security-auth.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import { apiRouteFiles, cookieFrom, httpRequest, pagePaths, tryUpgrade, wsUrl } from '../helpers/security';
import type { ServerProcess } from '../helpers/server';

const PUBLIC = new Set(['GET /api/health', 'HEAD /api/health']);
/** Public, but this server has no single sign-on configured: they answer 404 saying so. */
const SSO_OFF = new Set(['GET /api/auth/oidc/start', 'GET /api/auth/oidc/callback']);

describe.each(DB_KINDS)('authentication and origin checks (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'security-auth');
  const routes = apiRouteFiles();
  const calls = routes.flatMap((r) => r.methods.map((method) => ({ method, path: r.path, file: r.file })));

  const raw = (p: string, init: RequestInit = {}) => fetch(new URL(p, server.url), { redirect: 'manual', ...init });
  const origin = () => new URL(server.url).origin;
  async function jobCount(): Promise<number> {
    const res = await server.api('/api/jobs?limit=200');
    expect(res.status).toBe(200);
    return ((await res.json()) as { jobs: unknown[] }).jobs.length;
  }
  async function login(): Promise<string> {
    const res = await raw('/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: origin() },
      body: JSON.stringify({ token: server.token }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const set = res.headers.getSetCookie()[0];
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    expect(set).toMatch(/Path=\//);
    return cookieFrom(res)!;
  }

  beforeAll(async () => {
    server = await database.start();
  });

  afterAll(async () => {
  });

  it('finds the API routes on disk (the enumeration itself works)', () => {
    expect(routes.map((r) => r.path)).toEqual(expect.arrayContaining(['/api/health', '/api/jobs', '/api/auth/login', '/api/auth/logout']));
    expect(calls.find((c) => c.path === '/api/jobs' && c.method === 'POST')).toBeTruthy();
  });

  it('answers 401 on every API route without a token and with a wrong one; only GET /api/health is open', async () => {
    const before = await jobCount();
    // A forged session cookie under the server's real cookie name.
    const cookieName = (await login()).split('=')[0];
    const forged = `${cookieName}=v1.${(Date.now() + 3_600_000).toString(36)}.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
    for (const c of calls) {
      const key = `${c.method} ${c.path}`;
      for (const headers of [{}, { authorization: 'Bearer jd_wrong_token_0123456789abcdef' }, { cookie: forged }] as Record<string, string>[]) {
        const res = await raw(c.path, {
          method: c.method,
          headers: { ...headers, ...(c.method === 'GET' || c.method === 'HEAD' ? {} : { 'content-type': 'application/json' }) },
          body: c.method === 'GET' || c.method === 'HEAD' ? undefined : '{}',
        });
        const text = await res.text();
        if (PUBLIC.has(key)) expect(res.status, `${key} ${text}`).toBe(200);
        else if (SSO_OFF.has(key)) {
          expect(res.status, `${key} ${text}`).toBe(404);
          expect(JSON.parse(text).detail).toMatch(/JOBDECK_OIDC_ISSUER is unset/);
        } else {
          expect(res.status, `${key} with ${JSON.stringify(headers)} (${c.file}): ${text}`).toBe(401);
          if (c.method !== 'HEAD') expect(JSON.parse(text)).toMatchObject({ status: 401, detail: expect.any(String) });
        }
      }
    }
    expect(await jobCount()).toBe(before);
  });

  it('lets the right token through on every API route', async () => {
    for (const c of calls) {
      const res = await server.api(c.path, {
        method: c.method,
        redirect: 'manual',
        headers: c.method === 'GET' || c.method === 'HEAD' ? {} : { 'content-type': 'application/json' },
        body: c.method === 'GET' || c.method === 'HEAD' ? undefined : '{}',
      });
      await res.arrayBuffer();
      expect([401, 403], `${c.method} ${c.path} answered ${res.status}`).not.toContain(res.status);
    }
  });

  it('refuses every WebSocket upgrade without a token or with a wrong one, and opens with the right one', async () => {
    for (const p of ['/ws/jobs', '/ws/jobs/1', '/ws/anything', '/ws/']) {
      const none = await tryUpgrade(wsUrl(server.url, p));
      expect(none.status, `${p}: ${none.body}`).toBe(401);
      expect(none.body).toMatch(/authentication required/);
      const wrong = await tryUpgrade(wsUrl(server.url, p), { authorization: 'Bearer jd_wrong_token_0123456789abcdef' });
      expect(wrong.status, p).toBe(401);
    }
    const ok = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), { authorization: `Bearer ${server.token}` });
    expect(ok.status, ok.body).toBe(101);
    ok.ws!.close();
    // Authenticated but no such endpoint: a clear 404, not a silent hang-up.
    const missing = await tryUpgrade(wsUrl(server.url, '/ws/nothing-here'), { authorization: `Bearer ${server.token}` });
    expect(missing.status).toBe(404);
  });

  it('redirects every page to /login when not logged in, and shows it after the login URL', async () => {
    const pages = pagePaths();
    expect(pages).toContain('/');
    for (const p of pages) {
      const res = await raw(p);
      expect(res.status, p).toBe(303);
      expect(res.headers.get('location'), p).toMatch(/^\/login(\?next=.*)?$/);
    }
    const page = await raw('/login');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Log in to jobdeck');

    const bad = await raw('/login?token=jd_wrong_token_0123456789abcdef');
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe('/login?error=invalid');
    expect(bad.headers.getSetCookie()).toEqual([]);

    const good = await raw(`/login?token=${encodeURIComponent(server.token)}&next=${encodeURIComponent('/jobs')}`);
    expect(good.status).toBe(303);
    expect(good.headers.get('location')).toBe('/jobs');
    expect(good.headers.get('referrer-policy')).toBe('no-referrer');
    const cookie = cookieFrom(good)!;
    expect(cookie).toMatch(/^jobdeck_session_[0-9a-f]{8}=/);
    for (const p of pages) {
      const res = await raw(p, { headers: { cookie } });
      await res.arrayBuffer();
      expect(res.status, p).not.toBe(303);
    }
  });

  it('the login form: a wrong token goes back to /login with an error; the right one sets the cookie', async () => {
    const form = (token: string) =>
      raw('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: origin() }, body: new URLSearchParams({ token, next: '/jobs' }).toString() });
    const bad = await form('nope-nope-nope-nope');
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe('/login?error=invalid&next=%2Fjobs');
    const good = await form(server.token);
    expect(good.status).toBe(303);
    expect(good.headers.get('location')).toBe('/jobs');
    const cookie = cookieFrom(good)!;
    expect((await raw('/api/jobs', { headers: { cookie } })).status).toBe(200);
    const json = await raw('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', origin: origin() }, body: JSON.stringify({ token: 'nope-nope-nope-nope' }) });
    expect(json.status).toBe(401);
  });

  it('with a valid cookie: cross-origin POST → 403 and nothing created; no Origin → 403; same-origin → works', async () => {
    const cookie = await login();
    const before = await jobCount();
    const submit = (headers: Record<string, string>) =>
      raw('/api/jobs', { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ cmd: 'echo from-a-cookie' }) });

    const cross = await submit({ origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect((await cross.json()).detail).toMatch(/cross-origin/);
    const otherPort = await submit({ origin: `http://127.0.0.1:${Number(new URL(server.url).port) + 1}` });
    expect(otherPort.status).toBe(403);
    const nullOrigin = await submit({ origin: 'null' });
    expect(nullOrigin.status).toBe(403);
    const noOrigin = await submit({});
    expect(noOrigin.status).toBe(403);
    expect((await noOrigin.json()).detail).toMatch(/Origin/);
    expect(await jobCount()).toBe(before);

    const same = await submit({ origin: origin() });
    expect(same.status, await same.clone().text()).toBe(201);
    const { id } = (await same.json()) as { id: number };
    expect(await jobCount()).toBe(before + 1);
    // Cross-origin cancel/delete of that job are refused too, and it is unchanged.
    const del = await raw(`/api/jobs/${id}`, { method: 'DELETE', headers: { cookie, origin: 'http://evil.example' } });
    expect(del.status).toBe(403);
    expect((await server.api(`/api/jobs/${id}`)).status).toBe(200);
    // Reading with the cookie needs no Origin.
    expect((await raw('/api/jobs', { headers: { cookie } })).status).toBe(200);
    // A bearer-token client (CLI, scripts) needs no Origin, but a foreign Origin is refused.
    expect((await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'true' }) })).status).toBe(201);
    expect((await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://evil.example' }, body: JSON.stringify({ cmd: 'true' }) })).status).toBe(403);
  });

  it('with a valid cookie: a cross-origin WebSocket is refused, a same-origin one opens', async () => {
    const cookie = await login();
    const cross = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), { cookie, origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect(cross.body).toMatch(/cross-origin/);
    const noOrigin = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), { cookie });
    expect(noOrigin.status).toBe(403);
    const same = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), { cookie, origin: origin() });
    expect(same.status, same.body).toBe(101);
    same.ws!.close();
  });

  it('logout revokes the session at once', async () => {
    const cookie = await login();
    expect((await raw('/api/jobs', { headers: { cookie } })).status).toBe(200);
    const out = await raw('/api/auth/logout', { method: 'POST', headers: { cookie, origin: origin() } });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toMatch(/Max-Age=0/);
    // The browser forgets the cookie; a copy of it (stolen) is dead too.
    expect((await raw('/api/jobs', { headers: { cookie } })).status).toBe(401);
    const ws = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), { cookie, origin: origin() });
    expect(ws.status).toBe(401);
  });

  it('refuses a DNS-rebinding Host header, even with the right token', async () => {
    const port = new URL(server.url).port;
    const before = await jobCount();
    const res = await httpRequest(`${server.url}/api/jobs`, {
      method: 'POST',
      headers: { host: `evil.example:${port}`, authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cmd: 'echo rebinding' }),
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).detail).toMatch(/DNS-rebinding/);
    expect(await jobCount()).toBe(before);
    expect((await httpRequest(`${server.url}/api/health`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    expect((await httpRequest(`${server.url}/api/health`, { headers: { host: `localhost:${port}` } })).status).toBe(200);
    const ws = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), { host: `evil.example:${port}`, authorization: `Bearer ${server.token}` });
    expect(ws.status).toBe(403);
  });

  it('sets protective headers on pages and API answers', async () => {
    for (const p of ['/login', '/api/health']) {
      const res = await raw(p);
      await res.arrayBuffer();
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });
});
