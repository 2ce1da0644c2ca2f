/**
 * apiRoute() enforces authentication and the body cap by itself — the inner wall that still
 * holds when the custom server's gate is bypassed (e.g. route handlers served by plain
 * `next start`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoute } from '../../lib/api/handler';
import { issueSession } from '../../lib/auth/session';
import { type AuthState, loadAuth } from '../../lib/auth/state';

const TOKEN = 'handler-test-token-0123456789';
const home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-handler-'));
let state: AuthState;
beforeAll(() => {
  state = loadAuth({ home, env: { JOBDECK_TOKEN: TOKEN }, host: '127.0.0.1' }).state;
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const ctx = { params: Promise.resolve({}) };
// A path of the authorization table (lib/auth/rules.ts) with GET and POST rules.
function req(method: string, headers: Record<string, string> = {}, body?: BodyInit, pathname = '/api/jobs'): Request {
  const init: RequestInit & { duplex?: 'half' } = { method, headers: { host: '127.0.0.1:3000', ...headers }, body, duplex: body ? 'half' : undefined };
  return new Request(`http://127.0.0.1:3000${pathname}`, init);
}

/** The auth state the routes check against (the server hands its own to apiRoute()). */
const auth = () => state;

describe('apiRoute', () => {
  let ran = 0;
  const echo = apiRoute(async (r) => {
    ran++;
    return Response.json({ len: r.method === 'GET' ? 0 : (await r.text()).length });
  }, { auth });
  const open = apiRoute(async () => Response.json({ ok: true }), { public: true, auth });

  it('refuses without credentials or with a wrong token before the handler runs', async () => {
    ran = 0;
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { cookie: `${state.cookieName}=forged` }] as Record<string, string>[]) {
      const res = await echo(req('GET', headers), ctx);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect(res.headers.get('www-authenticate')).toMatch(/Bearer/);
    }
    expect(ran).toBe(0);
  });

  it('runs the handler with the token or a session cookie', async () => {
    expect((await echo(req('GET', { authorization: `Bearer ${TOKEN}` }), ctx)).status).toBe(200);
    const cookie = `${state.cookieName}=${issueSession(state).value}`;
    expect((await echo(req('GET', { cookie }), ctx)).status).toBe(200);
    expect((await echo(req('POST', { cookie, origin: 'http://127.0.0.1:3000' }, 'abc'), ctx)).status).toBe(200);
    expect((await echo(req('POST', { cookie, origin: 'http://evil.example' }, 'abc'), ctx)).status).toBe(403);
    expect((await echo(req('GET', { host: 'evil.example', authorization: `Bearer ${TOKEN}` }), ctx)).status).toBe(403);
  });

  it('refuses, even to the admin, a path the authorization table has no rule for', async () => {
    ran = 0;
    const res = await echo(req('GET', { authorization: `Bearer ${TOKEN}` }, undefined, '/api/no-rule-here'), ctx);
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toBe('no authorization rule for GET /api/no-rule-here');
    expect(ran).toBe(0);
  });

  it('public routes need no token but still refuse cross-origin posts', async () => {
    expect((await open(req('GET'), ctx)).status).toBe(200);
    expect((await open(req('POST', { origin: 'http://evil.example' }, '{}'), ctx)).status).toBe(403);
  });

  it('caps the body however the handler reads it: 413 and Connection: close', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const declared = await echo(req('POST', { authorization: `Bearer ${TOKEN}`, 'content-length': String(big.length) }, big), ctx);
    expect(declared.status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 40; i++) c.enqueue(new Uint8Array(64 * 1024));
        c.close();
      },
    });
    const streamed = await echo(req('POST', { authorization: `Bearer ${TOKEN}` }, stream), ctx);
    expect(streamed.status).toBe(413);
    expect(streamed.headers.get('connection')).toBe('close');
    // A handler that swallows the error still cannot answer anything but 413.
    const swallow = apiRoute(async (r) => {
      await r.text().catch(() => undefined);
      return Response.json({ ok: true });
    }, { auth });
    const s2 = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 40; i++) c.enqueue(new Uint8Array(64 * 1024));
        c.close();
      },
    });
    expect((await swallow(req('POST', { authorization: `Bearer ${TOKEN}` }, s2), ctx)).status).toBe(413);
  });
});
