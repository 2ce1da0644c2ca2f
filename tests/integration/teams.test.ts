/**
 * Teams against a real server on each database: jobs record and list their submitter (`owner`,
 * REST and `jobdeck queue --owner`); a member cannot change another member's job by any path
 * (REST one by one, bulk cancel by ids and by filter, the CLI) and a member's bulk cancel touches
 * only its own; revoking a token closes its open log stream (within a second of the revoke's
 * answer); the pending and running-CPU quotas hold, with their numbers; every audited action
 * leaves exactly one audit row with user, token prefix, IP and time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { DB_KINDS } from '../helpers/db';
import { tryUpgrade, wsUrl } from '../helpers/security';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { runCli } from './cli-run';

interface AuditRow {
  action: string;
  userName: string | null;
  tokenPrefix: string | null;
  ip: string | null;
  at: string;
  target: string | null;
}

describe.each(DB_KINDS)('teams (%s)', (kind) => {
  const fixture = useServerDatabase(kind, 'teams');
  let server: ServerProcess;
  const tok: Record<'mia' | 'max', { id: number; token: string }> = {} as never;
  const ids: Record<'mia' | 'max', number> = { mia: 0, max: 0 };

  const as = (token: string, p: string, init: RequestInit = {}) =>
    fetch(new URL(p, server.url), { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const admin = (p: string, init: RequestInit = {}) => as(server.token, p, init);
  const json = async <T,>(r: Promise<Response> | Response, status?: number): Promise<T> => {
    const res = await r;
    const text = await res.text();
    if (status !== undefined) expect(res.status, text).toBe(status);
    return JSON.parse(text) as T;
  };
  const submit = async (token: string, name: string, cmd = 'sleep 300') => (await json<{ id: number }>(as(token, '/api/jobs', { method: 'POST', body: JSON.stringify({ cmd, name }) }), 201)).id;
  const status = async (id: number) => (await json<{ status: string }>(admin(`/api/jobs/${id}`), 200)).status;
  const audit = async () => (await json<{ events: AuditRow[] }>(admin('/api/audit?limit=500'), 200)).events;

  beforeAll(async () => {
    server = await fixture.start();
    for (const name of ['mia', 'max'] as const) {
      ids[name] = (await json<{ id: number }>(admin('/api/users', { method: 'POST', body: JSON.stringify({ name, role: 'member', password: `${name}-password-1` }) }), 201)).id;
      tok[name] = await json(admin('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'cli', userId: ids[name] }) }), 201);
    }
  }, 120_000);

  afterAll(async () => {
    await admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ all: true }) }).catch(() => undefined);
  });

  it("a member cannot cancel, delete, re-run or re-prioritise another member's job; bulk cancel touches only its own", async () => {
    const miaJob = await submit(tok.mia.token, 'mia-job');
    const maxJob = await submit(tok.max.token, 'max-job');
    // Every job records its submitter; the list filters by it.
    expect((await json<{ owner: string }>(admin(`/api/jobs/${miaJob}`), 200)).owner).toBe('mia');
    const mine = await json<{ jobs: Array<{ id: number; owner: string }> }>(as(tok.max.token, '/api/jobs?owner=me'), 200);
    expect(mine.jobs.map((j) => [j.id, j.owner])).toEqual([[maxJob, 'max']]);
    expect((await json<{ jobs: Array<{ id: number }> }>(admin('/api/jobs?owner=mia'), 200)).jobs.map((j) => j.id)).toEqual([miaJob]);
    const bad = await admin('/api/jobs?owner=nobody');
    expect([bad.status, (await bad.json()).detail]).toEqual([400, 'owner: no user is named "nobody"']);
    const cliQueue = await runCli(server, ['queue', '--owner', 'me', '--json'], { env: { JOBDECK_TOKEN: tok.mia.token } });
    expect((JSON.parse(cliQueue.stdout) as Array<{ id: number }>).map((j) => j.id)).toEqual([miaJob]);
    for (const [method, p, body] of [
      ['POST', `/api/jobs/${miaJob}/cancel`, undefined],
      ['DELETE', `/api/jobs/${miaJob}`, undefined],
      ['POST', `/api/jobs/${miaJob}/rerun`, '{}'],
      ['PATCH', `/api/jobs/${miaJob}`, '{"priority": 900}'],
    ] as const) {
      const r = await as(tok.max.token, p, { method, body });
      expect(r.status, `${method} ${p}`).toBe(403);
      expect((await r.json()).detail).toMatch(/submitted by another user/);
    }
    // By ids: another's id is named as forbidden and left alone.
    const byIds = await json<{ cancelled: number[]; cancelling: number[]; forbidden?: number[] }>(as(tok.max.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [miaJob] }) }), 200);
    expect(byIds).toMatchObject({ cancelled: [], cancelling: [], forbidden: [miaJob] });
    // By filter (every live job): only max's own.
    const byFilter = await json<{ cancelled: number[]; cancelling: number[] }>(as(tok.max.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ all: true }) }), 200);
    expect([...byFilter.cancelled, ...byFilter.cancelling]).toEqual([maxJob]);
    expect(await status(miaJob)).not.toMatch(/CANCEL/);
    // The CLI goes through the same API: refused with the server's reason.
    const cli = await runCli(server, ['cancel', String(miaJob)], { env: { JOBDECK_TOKEN: tok.max.token } });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/submitted by another user/);
    expect(await status(miaJob)).not.toMatch(/CANCEL/);
    // Its own job: allowed.
    expect((await as(tok.mia.token, `/api/jobs/${miaJob}/cancel`, { method: 'POST' })).status).toBe(200);
  }, 120_000);

  it("revoking a token closes its open log stream within a second of the revoke's answer", async () => {
    const job = await submit(tok.mia.token, 'streamed');
    const extra = await json<{ id: number; token: string }>(as(tok.mia.token, '/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'stream' }) }), 201);
    const o = await tryUpgrade(wsUrl(server.url, `/ws/jobs/${job}`), { authorization: `Bearer ${extra.token}` });
    expect(o.status).toBe(101);
    const ws = o.ws as WebSocket;
    const closed = new Promise<{ code: number; at: number }>((resolve) => ws.once('close', (code) => resolve({ code, at: Date.now() })));
    const revoke = await as(tok.mia.token, `/api/tokens/${extra.id}`, { method: 'DELETE' });
    const answered = Date.now();
    expect(revoke.status).toBe(204);
    const { code, at } = await closed;
    expect(code).toBe(4401);
    expect(at - answered).toBeLessThan(1000);
    // The list shows a token's last use (written with the next reload of the directory).
    const lastUsed = async () => (await json<{ tokens: Array<{ id: number; lastUsedAt: string | null }> }>(as(tok.mia.token, '/api/tokens'), 200)).tokens.find((t) => t.id === tok.mia.id)?.lastUsedAt;
    for (let i = 0; !(await lastUsed()); i++) {
      expect(i).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 100));
    }
    // And the token fails from the next request on.
    expect((await as(extra.token, '/api/jobs')).status).toBe(401);
    // Its CPU back for the next test (the machine may have two).
    expect((await as(tok.mia.token, `/api/jobs/${job}/cancel`, { method: 'POST' })).status).toBe(200);
  }, 60_000);

  it('refuses a submit over the pending quota, with the numbers', async () => {
    await json(admin('/api/queues/one-at-a-time', { method: 'PUT', body: JSON.stringify({ maxRunning: 1 }) }), 200);
    await json(admin(`/api/users/${ids.max}`, { method: 'PATCH', body: JSON.stringify({ maxPendingJobs: 1 }) }), 200);
    const yaml = (name: string) => JSON.stringify({ yaml: `name: ${name}\nqueue: one-at-a-time\nrun: sleep 300\n` });
    const first = (await json<{ id: number }>(as(tok.max.token, '/api/jobs', { method: 'POST', body: yaml('first') }), 201)).id;
    while ((await status(first)) === 'PENDING') await new Promise((r) => setTimeout(r, 100));
    const second = (await json<{ id: number }>(as(tok.max.token, '/api/jobs', { method: 'POST', body: yaml('second') }), 201)).id;
    expect(await status(second)).toBe('PENDING');
    const over = await as(tok.max.token, '/api/jobs', { method: 'POST', body: yaml('third') });
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ pending: 1, maxPendingJobs: 1, detail: 'user max has 1 job pending and may have 1 at once: wait for one to start, or cancel one' });
    // Another user is not limited by max's quota.
    const other = (await json<{ id: number }>(as(tok.mia.token, '/api/jobs', { method: 'POST', body: yaml('mia-third') }), 201)).id;
    await json(admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [first, second, other] }) }), 200);
  }, 60_000);

  it("holds a job over its user's running-CPU quota with the numbers in its pending reason", async () => {
    await json(admin(`/api/users/${ids.mia}`, { method: 'PATCH', body: JSON.stringify({ maxRunningCpus: 1 }) }), 200);
    const running = await submit(tok.mia.token, 'quota-running');
    while ((await status(running)) === 'PENDING') await new Promise((r) => setTimeout(r, 100));
    const held = await submit(tok.mia.token, 'quota-held');
    let reason: string | null = null;
    while (!reason) reason = (await json<{ pendingReason: string | null }>(admin(`/api/jobs/${held}`), 200)).pendingReason;
    expect(reason).toMatch(/^user mia at its CPU quota \(1 of 1 CPUs running; needs 1\)/);
    expect(await status(held)).toBe('PENDING');
    await json(admin(`/api/users/${ids.mia}`, { method: 'PATCH', body: JSON.stringify({ maxRunningCpus: null }) }), 200);
    await json(admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [running, held] }) }), 200);
  }, 60_000);

  it('writes exactly one audit row per audited action, with user, token prefix, IP and time', async () => {
    const before = (await audit()).length;
    const job = await submit(tok.mia.token, 'audited', 'true');
    for (let i = 0; (await status(job)) !== 'SUCCEEDED'; i++) {
      if (i > 300) throw new Error(`job ${job} is ${await status(job)}: ${JSON.stringify(await json(admin(`/api/jobs/${job}`)))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await json(as(tok.mia.token, `/api/jobs/${job}/rerun`, { method: 'POST', body: '{}' }), 201);
    const sleeper = await submit(tok.mia.token, 'to-cancel');
    await json(as(tok.mia.token, `/api/jobs/${sleeper}/cancel`, { method: 'POST' }), 200);
    expect((await as(tok.mia.token, `/api/jobs/${job}`, { method: 'DELETE' })).status).toBe(204);
    // A client cannot say where it is: the server's own view of the address is recorded.
    const t = await json<{ id: number; prefix: string }>(as(tok.mia.token, '/api/tokens', { method: 'POST', headers: { 'x-jobdeck-peer': '6.6.6.6' }, body: JSON.stringify({ name: 'audit' }) }), 201);
    expect((await as(tok.mia.token, `/api/tokens/${t.id}`, { method: 'DELETE' })).status).toBe(204);
    const v = await json<{ id: number }>(admin('/api/users', { method: 'POST', body: JSON.stringify({ name: 'vic', role: 'viewer' }) }), 201);
    await json(admin(`/api/users/${v.id}`, { method: 'PATCH', body: JSON.stringify({ role: 'member' }) }), 200);
    const login = (password: string) => fetch(new URL('/api/auth/login', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'max', password }) });
    expect((await login('max-password-1')).status).toBe(200);
    expect((await login('wrong-password')).status).toBe(401);

    const all = await audit();
    const rows = all.slice(0, all.length - before).reverse();
    expect(rows.map((r) => r.action)).toEqual(['job.submit', 'job.rerun', 'job.submit', 'job.cancel', 'job.delete', 'token.create', 'token.revoke', 'user.create', 'user.update', 'login', 'login.failed']);
    for (const r of rows) {
      expect(r.ip, r.action).toMatch(/127\.0\.0\.1/);
      expect(Date.parse(r.at), r.action).toBeGreaterThan(Date.now() - 600_000);
    }
    const byMia = rows.filter((r) => r.action.startsWith('job.') || r.action.startsWith('token.'));
    for (const r of byMia) expect([r.action, r.userName, r.tokenPrefix]).toEqual([r.action, 'mia', tok.mia.token.slice(0, 12)]);
    expect(rows.find((r) => r.action === 'user.update')).toMatchObject({ userName: 'admin', tokenPrefix: server.token.slice(0, 12), target: `user:${v.id}` });
    expect(rows.find((r) => r.action === 'login')).toMatchObject({ userName: 'max', tokenPrefix: null });
    // The log is read-only through the API: no route writes or deletes it.
    expect((await admin('/api/audit', { method: 'DELETE' })).status).toBe(405);
    expect((await as(tok.mia.token, '/api/audit')).status).toBe(403);
  }, 120_000);

  it('rate-limits failed password logins (429 once ten failed), not the token login', async () => {
    const login = (body: Record<string, string>) => fetch(new URL('/api/auth/login', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // Failed password logins from this address so far count too (the audit log has them all).
    const prior = (await audit()).filter((r) => r.action === 'login.failed' && r.userName !== '(token)').length;
    expect(prior).toBeLessThan(10);
    const statuses: number[] = [];
    for (let i = prior; i < 10; i++) statuses.push((await login({ username: 'mia', password: `guess-${i}-xxxx` })).status);
    expect(statuses).toEqual(Array(10 - prior).fill(401));
    const blocked = await login({ username: 'mia', password: 'mia-password-1' });
    expect(blocked.status).toBe(429);
    expect((await blocked.json()).detail).toMatch(/too many failed logins/);
    expect((await login({ token: server.token })).status).toBe(200);
  }, 120_000);
});
