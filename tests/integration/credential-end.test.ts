/**
 * Credentials end when they should, for REST and for streams alike (docs/design.md §15), against a
 * real server on each database: a WebSocket opened with a token that expires is closed (4401,
 * saying so) when it does; disabling a user ends its tokens and sessions and closes their
 * streams, and enabling it again brings none of them back (its epochs moved on); a password
 * change ends the user's sessions and their streams but not its tokens; changing one's own
 * password answers a fresh session cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { DB_KINDS } from '../helpers/db';
import { cookieFrom, tryUpgrade, wsUrl } from '../helpers/security';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

/** A stream that is open: the messages it got, and its close (code, and the last `error` message's text). */
async function openStream(server: ServerProcess, headers: Record<string, string>) {
  const o = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), headers);
  expect(o.status, o.body).toBe(101);
  const ws = o.ws as WebSocket;
  const messages: string[] = [];
  ws.on('message', (d: Buffer, binary: boolean) => {
    if (!binary) messages.push(d.toString());
  });
  const closed = new Promise<{ code: number; why: string }>((resolve) =>
    ws.once('close', (code) => {
      const errors = messages.map((m) => JSON.parse(m) as { type: string; message?: string }).filter((m) => m.type === 'error');
      resolve({ code, why: errors.at(-1)?.message ?? '' });
    }),
  );
  return { ws, closed };
}

describe.each(DB_KINDS)('credentials end when they should (%s)', (kind) => {
  const fixture = useServerDatabase(kind, 'credential-end');
  let server: ServerProcess;
  beforeAll(async () => {
    server = await fixture.start();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const admin = (p: string, init: RequestInit = {}) => fetch(new URL(p, server.url), { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}`, ...(init.headers ?? {}) } });
  const withToken = (token: string, p = '/api/jobs') => fetch(new URL(p, server.url), { headers: { authorization: `Bearer ${token}` } });
  const withCookie = (cookie: string, p = '/api/jobs') => fetch(new URL(p, server.url), { headers: { cookie } });
  const origin = () => new URL(server.url).origin;

  async function user(name: string, password: string): Promise<number> {
    const res = await admin('/api/users', { method: 'POST', body: JSON.stringify({ name, role: 'member', password }) });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: number }).id;
  }
  async function token(userId: number, expiresAt?: string): Promise<string> {
    const res = await admin('/api/tokens', { method: 'POST', body: JSON.stringify({ name: `t${Math.random()}`.slice(0, 20), userId, ...(expiresAt ? { expiresAt } : {}) }) });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { token: string }).token;
  }
  async function login(username: string, password: string): Promise<string | null> {
    const res = await fetch(new URL('/api/auth/login', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
    await res.arrayBuffer();
    return res.status === 200 ? cookieFrom(res) : null;
  }
  const patchUser = (id: number, body: unknown) => admin(`/api/users/${id}`, { method: 'PATCH', body: JSON.stringify(body) });

  it('closes a stream opened with a token when the token expires, saying so', async () => {
    const id = await user('ava', 'ava-password-1');
    const t = await token(id, new Date(Date.now() + 3000).toISOString());
    const s = await openStream(server, { authorization: `Bearer ${t}` });
    const { code, why } = await s.closed;
    expect(code).toBe(4401);
    expect(why).toMatch(/^the token jdp_\S+… expired at /);
    expect((await withToken(t)).status).toBe(401);
  });

  it('disable ends every token and session and closes their streams; enable brings none back', async () => {
    const id = await user('dana', 'dana-password-1');
    const t = await token(id);
    const cookie = (await login('dana', 'dana-password-1'))!;
    expect(cookie).not.toBeNull();
    const [a, b] = await Promise.all([openStream(server, { authorization: `Bearer ${t}` }), openStream(server, { cookie, origin: origin() })]);
    expect((await patchUser(id, { disabled: true })).status).toBe(200);
    expect(await a.closed).toEqual({ code: 4401, why: expect.stringMatching(/disabled/) });
    expect((await b.closed).code).toBe(4401);
    expect((await patchUser(id, { disabled: false })).status).toBe(200);
    const old = await withToken(t);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { detail: string }).detail).toMatch(/^the token jdp_\S+… was ended when its user was disabled$/);
    const oldSession = await withCookie(cookie);
    expect(oldSession.status).toBe(401);
    expect(((await oldSession.json()) as { detail: string }).detail).toMatch(/session was ended/);
    // New credentials work.
    expect((await withToken(await token(id))).status).toBe(200);
    expect((await withCookie((await login('dana', 'dana-password-1'))!)).status).toBe(200);
  });

  it("a password change ends the user's sessions and their streams, not its tokens", async () => {
    const id = await user('eli', 'eli-password-1');
    const t = await token(id);
    const cookie = (await login('eli', 'eli-password-1'))!;
    const s = await openStream(server, { cookie, origin: origin() });
    const bearer = await openStream(server, { authorization: `Bearer ${t}` });
    expect((await patchUser(id, { password: 'eli-password-2' })).status).toBe(200);
    expect(await s.closed).toEqual({ code: 4401, why: expect.stringMatching(/session was ended \(its password changed/) });
    expect((await withCookie(cookie)).status).toBe(401);
    expect((await withToken(t)).status).toBe(200);
    expect(bearer.ws.readyState).toBe(bearer.ws.OPEN);
    bearer.ws.close();
    expect(await login('eli', 'eli-password-1')).toBeNull();
    expect((await withCookie((await login('eli', 'eli-password-2'))!)).status).toBe(200);
  });

  it('changing your own password keeps you logged in: the answer carries a new session cookie', async () => {
    const id = await user('fay', 'fay-password-1');
    expect((await patchUser(id, { role: 'admin' })).status).toBe(200);
    const cookie = (await login('fay', 'fay-password-1'))!;
    const res = await fetch(new URL(`/api/users/${id}`, server.url), { method: 'PATCH', headers: { 'content-type': 'application/json', cookie, origin: origin() }, body: JSON.stringify({ password: 'fay-password-2' }) });
    expect(res.status).toBe(200);
    const fresh = cookieFrom(res);
    expect(fresh).not.toBeNull();
    expect((await withCookie(fresh!)).status).toBe(200);
    expect((await withCookie(cookie)).status).toBe(401);
  });
});
