/**
 * What a hostile tester broke, against a real server process on PGlite and on PostgreSQL:
 * - login `next` never leaves the server's origin: dot segments and backslashes that a URL
 *   parser folds into `//evil.example` come out as `/` (the login URL, the JSON and the form
 *   login);
 * - a request line in absolute form (`GET http://evil.example/login`) is a 400 from the gate,
 *   never Next's redirect to the other host;
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-security npx next build`, then
 * `JOBDECK_NEXT_DIST=.next-security npx vitest run tests/integration/security-hardening.test.ts`.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';

import { startServerProcess, type ServerProcess } from '../helpers/server';

/** `next` values that a URL parser normalises to a protocol-relative `//evil.example`. */
const HOSTILE_NEXT = ['/.//evil.example', '/..//evil.example', '/./\\evil.example', '/a/..//evil.example', '/%2e//evil.example', '/.\\/evil.example', '//evil.example', '/\\evil.example', 'https://evil.example/', '/a/../..//evil.example/x?y#z'];

/** Sends raw bytes on a new TCP connection; resolves with what came back before it closed. */
function rawHttp(url: string, request: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => s.end(request));
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString('latin1')));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe.each(DB_KINDS)('security hardening (%s)', (kind) => {
  let server: ServerProcess;
  let pg: TestDatabase | undefined;
  const origin = () => new URL(server.url).origin;
  const raw = (p: string, init: RequestInit = {}) => fetch(new URL(p, server.url), { redirect: 'manual', ...init });

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (kind === 'postgresql') {
      pg = await createTestDatabase('postgresql', 'security-hardening');
      env.DATABASE_URL = pg.url!;
    }
    server = await startServerProcess({ env });
  }, 120_000);

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
});
