/**
 * A WebSocket lives no longer than the browser session that opened it: the hub closes it with
 * 4401 `unauthorized` when the session expires (and, tested through a real server in
 * security-hardening.test.ts, when it is logged out). A bearer-token socket has no session and
 * stays. In-process hub over both databases, routed like lib/server/start.ts does.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { storeOf } from '../helpers/store';
import { findUpgradeRoute } from '../../lib/server/upgrade';
import { WsHub, wsRoutes, type SocketOwner } from '../../lib/ws';
import { submitJobSpec } from '../../lib/control';

describe.each(DB_KINDS)('WebSocket session lifetime on %s', (kind) => {
  let t: TestDatabase;
  let hub: WsHub;
  let server: http.Server;
  let base: string;
  /** The owner the next upgrade is handed (what the auth gate would find). */
  let nextOwner: SocketOwner = { session: null };
  let jobId: number;
  beforeAll(async () => {
    t = await createTestDatabase(kind, `ws-session-${kind}`);
    hub = new WsHub({ store: storeOf(t.db.prisma) });
    jobId = (await submitJobSpec(storeOf(t.db.prisma), { source: { kind: 'cmd', cmd: 'true' } })).result.id;
    const routes = wsRoutes(hub);
    server = http.createServer((_req, res) => res.end());
    server.on('upgrade', (req, socket, head) => {
      const found = findUpgradeRoute(routes, new URL(req.url ?? '/', 'http://x').pathname);
      if (found) return found.route.handle(req, socket, head, found.params, nextOwner);
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await hub?.stop();
    await new Promise<void>((r) => {
      server?.close(() => r());
      server?.closeAllConnections();
    });
    await t?.dispose();
  });

  async function open(path: string, owner: SocketOwner) {
    nextOwner = owner;
    const ws = new WebSocket(`${base}${path}`);
    const messages: string[] = [];
    ws.on('message', (d, binary) => messages.push(binary ? '<binary>' : d.toString()));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return { ws, messages, closed };
  }

  it('closes the sockets of a session when it expires, and only those', async () => {
    const soon = Date.now() + 400;
    const a = await open('/ws/jobs', { session: { id: 'expiring', expiresAt: soon } });
    const b = await open(`/ws/jobs/${jobId}`, { session: { id: 'expiring', expiresAt: soon } });
    const later = await open('/ws/jobs', { session: { id: 'later', expiresAt: Date.now() + 3_600_000 } });
    const bearer = await open('/ws/jobs', { session: null });
    expect(await a.closed).toBe(4401);
    expect(await b.closed).toBe(4401);
    expect(a.messages.map((m) => JSON.parse(m) as { type: string; code?: string }).at(-1)).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect([later.ws.readyState, bearer.ws.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
    // A session that had already expired when its socket opened is closed at once.
    const stale = await open('/ws/jobs', { session: { id: 'stale', expiresAt: Date.now() - 1 } });
    expect(await stale.closed).toBe(4401);
    hub.closeSession('later', 'logged out');
    expect(await later.closed).toBe(4401);
    expect(bearer.ws.readyState).toBe(WebSocket.OPEN);
    bearer.ws.close();
  });
});
