/**
 * The authorization table, generated: every API route the router serves (lib/server/api-router.ts
 * loadApiRouter — a new route is in it without editing this file), every WebSocket route the
 * server dispatches upgrades to (lib/ws wsRoutes, each with its pattern) and /metrics ×
 * {no token, revoked token, expired token, viewer, member on its own job, member on another's
 * job, admin} → the status the rule (lib/auth/rules.ts) says, against a real server on each
 * database. A deny must be exactly 401 / 403 (or 404 for another user's token): zero unexpected
 * allows. A route without a rule fails the first test.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_RULES, ruleKeyFor, type RouteRule } from '../../lib/auth/rules';
import { roleAtLeast, type Role } from '../../lib/jobs/roles';
import { METRICS_PATH } from '../../lib/auth/gate';
import { loadApiRouter } from '../../lib/server/api-router';
import { wsRoutes, type WsHub, type WsRoute } from '../../lib/ws';
import { DB_KINDS } from '../helpers/db';
import { tryUpgrade, wsUrl } from '../helpers/security';
import { ROOT, type ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

type Who = 'none' | 'revoked' | 'expired' | 'viewer' | 'memberOwn' | 'memberOther' | 'admin';
const WHO: Who[] = ['none', 'revoked', 'expired', 'viewer', 'memberOwn', 'memberOther', 'admin'];
const ROLE_OF: Partial<Record<Who, Role>> = { viewer: 'viewer', memberOwn: 'member', memberOther: 'member', admin: 'admin' };

/** What a cell must be: a deny with this exact status, or a pass (not 401/403, not 5xx). */
type Expect = 401 | 403 | 404 | 'pass';

function expected(rule: RouteRule, key: string, who: Who): Expect | null {
  if (rule.role === 'public') return null;
  if (who === 'none' || who === 'revoked' || who === 'expired') return 401;
  const role = ROLE_OF[who]!;
  if (!roleAtLeast(role, rule.role)) return 403;
  if (rule.own && who === 'memberOther') return 403;
  // Another user's token is not found (no hint that it exists).
  if (rule.self && key === 'DELETE /api/tokens/[id]' && (who === 'viewer' || who === 'memberOther')) return 404;
  return 'pass';
}

/** Valid bodies, so a pass is not hidden behind a 400 and an own-check runs on real input. */
const BODIES: Record<string, unknown> = {
  'PATCH /api/jobs/[id]': { priority: 600 },
  'POST /api/jobs': { cmd: 'true', name: 'table-submit' },
  'POST /api/jobs/cancel': { ids: [999_999] },
  'POST /api/tokens': { name: 'table' },
  'POST /api/validate': { yaml: 'run: echo hi\n' },
  'PUT /api/queues/[name]': { maxRunning: 1 },
  'PATCH /api/users/[id]': {},
  'POST /api/schedules': { name: 'table-new', cron: '0 0 1 1 *', yaml: 'run: "true"\n' },
  'PATCH /api/schedules/[name]': { overlap: 'allow' },
};

describe.each(DB_KINDS)('route × role table (%s)', (kind) => {
  const fixture = useServerDatabase(kind, 'security-roles');
  let server: ServerProcess;
  let routes: Array<{ pattern: string; methods: string[] }>;
  // The server's own upgrade routes (lib/server/start.ts dispatches to wsRoutes(hub)); only their
  // patterns and matchers are read here, so no hub is built behind them.
  const sockets: WsRoute[] = wsRoutes(null as unknown as WsHub);
  const tokens: Record<Who, string | null> = { none: null, revoked: null, expired: null, viewer: null, memberOwn: null, memberOther: null, admin: null };
  let ownJob = 0;
  // The member's own group (a 2-job array) and schedule, made again when a cell deletes them.
  let ownGroup = 0;
  let spareTokenId = 0;
  let viewerId = 0;

  const admin = (p: string, init: RequestInit = {}) => server.api(p, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const as = (token: string | null, p: string, init: RequestInit = {}) =>
    fetch(new URL(p, server.url), { ...init, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers ?? {}) } });

  async function user(name: string, role: Role): Promise<number> {
    const r = await admin('/api/users', { method: 'POST', body: JSON.stringify({ name, role }) });
    expect(r.status, await r.clone().text()).toBe(201);
    return ((await r.json()) as { id: number }).id;
  }
  async function token(userId: number, name: string, extra: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
    const r = await admin('/api/tokens', { method: 'POST', body: JSON.stringify({ name, userId, ...extra }) });
    expect(r.status, await r.clone().text()).toBe(201);
    return (await r.json()) as { id: number; token: string };
  }

  async function ownGroupAndSchedule(): Promise<void> {
    const g = await as(tokens.memberOwn, '/api/jobs', { method: 'POST', body: JSON.stringify({ cmd: 'sleep 300', name: 'own-group', numJobs: 2 }) });
    expect(g.status, await g.clone().text()).toBe(201);
    ownGroup = ((await g.json()) as { group: { id: number } }).group.id;
    const s = await as(tokens.memberOwn, '/api/schedules', { method: 'POST', body: JSON.stringify({ name: 'table-s', cron: '0 0 1 1 *', yaml: 'run: "true"\n' }) });
    expect([201, 400]).toContain(s.status);
  }

  beforeAll(async () => {
    routes = [...(await loadApiRouter(path.join(ROOT, 'app'))).routes];
    server = await fixture.start();
    tokens.admin = server.token;
    viewerId = await user('vera', 'viewer');
    const mia = await user('mia', 'member');
    const max = await user('max', 'member');
    tokens.viewer = (await token(viewerId, 'v')).token;
    tokens.memberOwn = (await token(mia, 'm')).token;
    tokens.memberOther = (await token(max, 'x')).token;
    spareTokenId = (await token(mia, 'spare')).id;
    const revoked = await token(mia, 'revoked');
    expect((await admin(`/api/tokens/${revoked.id}`, { method: 'DELETE' })).status).toBe(204);
    tokens.revoked = revoked.token;
    tokens.expired = (await token(mia, 'expired', { expiresAt: new Date(Date.now() + 1500).toISOString() })).token;
    const sub = await as(tokens.memberOwn, '/api/jobs', { method: 'POST', body: JSON.stringify({ cmd: 'sleep 300', name: 'own' }) });
    expect(sub.status).toBe(201);
    ownJob = ((await sub.json()) as { id: number }).id;
    await ownGroupAndSchedule();
    // The expired token's time passes (no timing assert: the cells below only need it past).
    while ((await as(tokens.expired, '/api/users/me')).status !== 401) await new Promise((r) => setTimeout(r, 200));
  });

  afterAll(async () => {
    await admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ all: true }) }).catch(() => undefined);
  });

  it('has a rule for every route the router serves, and no rule for a route that is gone', () => {
    const served = new Set<string>();
    for (const r of routes) {
      for (const m of r.methods) {
        const key = `${m} ${r.pattern}`;
        served.add(key);
        expect(ROUTE_RULES[key], `${key} has no row in lib/auth/rules.ts`).toBeDefined();
      }
    }
    for (const key of Object.keys(ROUTE_RULES)) if (key.includes(' /api/')) expect(served.has(key), `${key} is in the table but no route serves it`).toBe(true);
  });

  it('has a rule for every WebSocket route the server dispatches, and no rule for one that is gone', () => {
    expect(sockets.length).toBeGreaterThan(0);
    for (const r of sockets) {
      const key = `GET ${r.pattern}`;
      expect(ROUTE_RULES[key], `WebSocket route ${r.name} (${key}) has no row in lib/auth/rules.ts`).toBeDefined();
      // The pattern is the route's own: its matcher takes the path the table's row names.
      const p = r.pattern.replace('[id]', '7');
      expect(r.match(p), `${r.name} does not match ${p}`).not.toBeNull();
      expect(ruleKeyFor('GET', p)).toBe(key);
    }
    const dispatched = new Set(sockets.map((r) => `GET ${r.pattern}`));
    for (const key of Object.keys(ROUTE_RULES)) if (key.startsWith('GET /ws/')) expect(dispatched.has(key), `${key} is in the table but no WebSocket route serves it`).toBe(true);
  });

  it('answers every route × caller as its rule says (no unexpected allow)', async () => {
    const fill = (pattern: string) =>
      pattern
        .replace('/api/jobs/[id]', `/api/jobs/${ownJob}`)
        .replace('/api/tokens/[id]', `/api/tokens/${spareTokenId}`)
        .replace('/api/users/[id]', `/api/users/${viewerId}`)
        .replace('/api/groups/[id]', `/api/groups/${ownGroup}`)
        .replace('/api/schedules/[name]', '/api/schedules/table-s')
        .replace('[name]', 'table-q')
        .replace('[delivery]', 'msg_x');
    const wrong: string[] = [];
    let cells = 0;
    for (const r of routes) {
      for (const method of r.methods) {
        const key = `${method} ${r.pattern}`;
        const rule = ROUTE_RULES[key];
        for (const who of WHO) {
          const want = expected(rule, key, who);
          if (want === null) continue;
          const p = fill(r.pattern);
          expect(ruleKeyFor(method, p)).toBe(key);
          const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(BODIES[key] ?? {});
          const res = await as(tokens[who], p, { method, body });
          const got = res.status;
          await res.arrayBuffer();
          cells++;
          // A delete that went through: the member's group or schedule again, for the cells after it.
          if (method === 'DELETE' && got < 300 && /^\/api\/(groups|schedules)\//.test(r.pattern)) {
            await admin('/api/groups/' + ownGroup + '/cancel', { method: 'POST' });
            await ownGroupAndSchedule();
          }
          const ok = want === 'pass' ? got !== 401 && got !== 403 && got < 500 : got === want;
          if (!ok) wrong.push(`${key} as ${who}: expected ${want}, got ${got}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(cells).toBeGreaterThan(200);
  }, 300_000);

  it('applies the table to the WebSockets and /metrics', async () => {
    const wrong: string[] = [];
    const keys = [...sockets.map((r) => `GET ${r.pattern}`), `GET ${METRICS_PATH}`];
    expect(keys).toEqual(expect.arrayContaining(['GET /ws/jobs', 'GET /ws/jobs/[id]', 'GET /metrics']));
    for (const key of keys) {
      const p = key.split(' ')[1].replace('[id]', String(ownJob));
      for (const who of WHO) {
        const want = expected(ROUTE_RULES[key], key, who)!;
        const headers: Record<string, string> = tokens[who] ? { authorization: `Bearer ${tokens[who]}` } : {};
        let got: number;
        if (key.startsWith('GET /ws/')) {
          const o = await tryUpgrade(wsUrl(server.url, p), headers);
          o.ws?.close();
          got = o.status;
        } else {
          const res = await fetch(new URL(p, server.url), { headers });
          await res.arrayBuffer();
          got = res.status;
        }
        const ok = want === 'pass' ? got === 101 || got === 200 : got === want;
        if (!ok) wrong.push(`${key} as ${who}: expected ${want}, got ${got}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
