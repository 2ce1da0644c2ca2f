/**
 * What a hostile tester broke, against a real server process on PGlite and on PostgreSQL:
 * - login `next` never leaves the server's origin: dot segments and backslashes that a URL
 *   parser folds into `//evil.example` come out as `/` (the login URL, the JSON and the form
 *   login);
 * - a request line in absolute form (`GET http://evil.example/login`) is a 400 from the gate,
 *   never Next's redirect to the other host;
 * - logout closes the WebSockets that session opened (a bearer-token socket stays open).
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-security npx next build`, then
 * `JOBDECK_NEXT_DIST=.next-security npx vitest run tests/integration/security-hardening.test.ts`.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { cookieFrom, wsUrl } from '../helpers/security';
import { startServerProcess, type ServerProcess } from '../helpers/server';

/** `next` values that a URL parser normalises to a protocol-relative `//evil.example`. */
const HOSTILE_NEXT = ['/.//evil.example', '/..//evil.example', '/./\\evil.example', '/a/..//evil.example', '/%2e//evil.example', '/.\\/evil.example', '//evil.example', '/\\evil.example', 'https://evil.example/', '/a/../..//evil.example/x?y#z'];

/** Sends raw bytes on a new TCP connection; resolves with what came back before the server closed it. */
function rawHttp(url: string, request: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    // write, not end: a half-closed connection may abort a request still being answered.
    const s = net.connect(Number(u.port), u.hostname, () => s.write(request));
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString('latin1')));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

/** Opens a WebSocket and collects what it receives until it closes. */
function openSocket(url: string, headers: Record<string, string>) {
  const ws = new WebSocket(url, { headers });
  const got: string[] = [];
  let closedWith: number | null = null;
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve((closedWith = code))));
  ws.on('message', (d, binary) => got.push(binary ? '<binary>' : d.toString()));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, got, closed, opened, closedCode: () => closedWith };
}

describe.each(DB_KINDS)('security hardening (%s)', (kind) => {
  let server: ServerProcess;
  let pg: TestDatabase | undefined;
  const origin = () => new URL(server.url).origin;
  const raw = (p: string, init: RequestInit = {}) => fetch(new URL(p, server.url), { redirect: 'manual', ...init });

  async function login(): Promise<string> {
    const res = await raw('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', origin: origin() }, body: JSON.stringify({ token: server.token }) });
    expect(res.status).toBe(200);
    return cookieFrom(res)!;
  }

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (kind === 'postgresql') {
      pg = await createTestDatabase('postgresql', 'security-hardening');
      env.DATABASE_URL = pg.url!;
    }
    server = await startServerProcess({ env });
  });

  afterAll(async () => {
    await server?.dispose();
    await pg?.dispose();
  });

  it.each(HOSTILE_NEXT)('login next=%s stays on this origin', async (next) => {
    const viaUrl = await raw(`/login?token=${encodeURIComponent(server.token)}&next=${encodeURIComponent(next)}`);
    expect(viaUrl.status).toBe(303);
    const loc = viaUrl.headers.get('location')!;
    expect(new URL(loc, server.url).origin).toBe(origin());
    expect(loc).toMatch(/^\/(?![/\\])/);

    const json = await raw('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', origin: origin() }, body: JSON.stringify({ token: server.token, next }) });
    const body = (await json.json()) as { next: string };
    expect(new URL(body.next, server.url).origin).toBe(origin());
    expect(body.next).toMatch(/^\/(?![/\\])/);

    const form = await raw('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: origin() }, body: new URLSearchParams({ token: server.token, next }).toString() });
    expect(form.status).toBe(303);
    expect(form.headers.get('location')).toMatch(/^\/(?![/\\])/);
  });

  it('login next keeps a same-origin path with its query and hash', async () => {
    const res = await raw(`/login?token=${encodeURIComponent(server.token)}&next=${encodeURIComponent('/jobs/3?tab=logs#end')}`);
    expect(res.headers.get('location')).toBe('/jobs/3?tab=logs#end');
  });

  it('a request line in absolute form is a 400, not a redirect to another host', async () => {
    const host = new URL(server.url).host;
    for (const target of ['http://evil.example/login', 'http://evil.example/api/health', `http://${host}/api/health`]) {
      const answer = await rawHttp(server.url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answer.split('\r\n')[0], target).toBe('HTTP/1.1 400 Bad Request');
      expect(answer).not.toMatch(/^location:/im);
    }
    const upgrade = await rawHttp(
      server.url,
      `GET http://evil.example/ws/jobs HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${server.token}\r\n\r\n`,
    );
    expect(upgrade.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    // The ordinary form still works.
    expect((await rawHttp(server.url, `GET /api/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });

  it("logout closes that session's WebSockets at once; other sessions' and bearer sockets stay", async () => {
    const cookie = await login();
    const other = await login();
    const list = openSocket(wsUrl(server.url, '/ws/jobs'), { cookie, origin: origin() });
    const sub = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'sleep 30', name: 'ws-logout' }) });
    const { id } = (await sub.json()) as { id: number };
    const job = openSocket(wsUrl(server.url, `/ws/jobs/${id}`), { cookie, origin: origin() });
    const keep = openSocket(wsUrl(server.url, '/ws/jobs'), { cookie: other, origin: origin() });
    const bearer = openSocket(wsUrl(server.url, '/ws/jobs'), { authorization: `Bearer ${server.token}` });
    await Promise.all([list.opened, job.opened, keep.opened, bearer.opened]);

    const out = await raw('/api/auth/logout', { method: 'POST', headers: { cookie, origin: origin() } });
    expect(out.status).toBe(200);
    expect(await list.closed).toBe(4401);
    expect(await job.closed).toBe(4401);
    // Activity after the logout reaches only the sockets that stay open.
    const before = { list: list.got.length, job: job.got.length };
    await server.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    const seen = (s: ReturnType<typeof openSocket>) => new Promise<void>((resolve) => s.ws.once('message', () => resolve()));
    await Promise.all([seen(keep), seen(bearer)]);
    expect({ list: list.got.length, job: job.got.length }).toEqual(before);
    expect([keep.closedCode(), bearer.closedCode()]).toEqual([null, null]);
    keep.ws.close();
    bearer.ws.close();
  });
});
