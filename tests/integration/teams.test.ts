/**
 * Teams against a real server on each database: jobs record and list their submitter (`owner`,
 * REST and `jobdeck queue --owner`) and the personal token they came through (`viaToken`); queues
 * and webhooks name their creator (`owner`); a member cannot change another member's job by any
 * path (REST one by one, bulk cancel by ids and by filter, the CLI) and a member's bulk cancel
 * touches only its own; another member reads a job's secrets nowhere (REST, `jobdeck status`, the
 * job and list streams); revoking a token closes its open log stream (within a second of the
 * revoke's answer); a token is never answered again after its create; the pending and
 * running-CPU quotas hold, with their numbers; every audited action — every login path included
 * — leaves exactly one audit row with user, token prefix, IP and time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { DB_KINDS } from '../helpers/db';
import { cookieFrom, tryUpgrade, wsUrl } from '../helpers/security';
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
  detail: Record<string, unknown> | null;
}

/** Every message a WebSocket receives (text frames as they are, binary ones as UTF-8), as it arrives. */
function collect(ws: WebSocket): string[] {
  const got: string[] = [];
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => got.push(Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8')));
  return got;
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
  /** Waits (bounded) until job `id` has left PENDING. */
  const started = (id: number) => expect.poll(() => status(id), { timeout: 120_000, interval: 100, message: `job ${id} never left PENDING` }).not.toBe('PENDING');
  const audit = async () => (await json<{ events: AuditRow[] }>(admin('/api/audit?limit=500'), 200)).events;

  beforeAll(async () => {
    // Webhooks to this machine (the owner test's subscription is never sent anything).
    // Members may give priority up to 950 (the re-prioritising test sets 900).
    server = await fixture.start({ env: { JOBDECK_WEBHOOK_ALLOW_PRIVATE: '1', JOBDECK_QUOTA_MEMBER_MAX_PRIORITY: '950' } });
    for (const name of ['mia', 'max'] as const) {
      ids[name] = (await json<{ id: number }>(admin('/api/users', { method: 'POST', body: JSON.stringify({ name, role: 'member', password: `${name}-password-1` }) }), 201)).id;
      tok[name] = await json(admin('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'cli', userId: ids[name] }) }), 201);
    }
  });

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
  });

  it('names who created a queue and a webhook, and the personal token a job came through', async () => {
    const ops = await json<{ id: number }>(admin('/api/users', { method: 'POST', body: JSON.stringify({ name: 'ops', role: 'admin' }) }), 201);
    const opsToken = (await json<{ token: string }>(admin('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'ops', userId: ops.id }) }), 201)).token;
    expect((await json<{ owner: string | null }>(as(opsToken, '/api/queues/ops-q', { method: 'PUT', body: JSON.stringify({ maxRunning: 2 }) }), 200)).owner).toBe('ops');
    // Replaced by another admin: still the creator's.
    expect((await json<{ owner: string | null }>(admin('/api/queues/ops-q', { method: 'PUT', body: JSON.stringify({ maxRunning: 3 }) }), 200)).owner).toBe('ops');
    const queues = await json<{ queues: Array<{ name: string; owner: string | null }> }>(as(tok.max.token, '/api/queues'), 200);
    expect(queues.queues.filter((q) => q.name === 'default' || q.name === 'ops-q').map((q) => [q.name, q.owner])).toEqual([
      ['default', null],
      ['ops-q', 'ops'],
    ]);
    expect((await json<{ owner: string | null }>(as(tok.max.token, '/api/queues/ops-q'), 200)).owner).toBe('ops');

    const hook = { name: 'ops-hook', url: 'http://127.0.0.1:9/hook', events: ['job.succeeded'], namedOnly: true };
    expect((await json<{ webhook: { owner: string | null } }>(as(opsToken, '/api/webhooks', { method: 'POST', body: JSON.stringify(hook) }), 201)).webhook.owner).toBe('ops');
    expect((await json<{ owner: string | null }>(admin('/api/webhooks/ops-hook', { method: 'PATCH', body: JSON.stringify({ enabled: false }) }), 200)).owner).toBe('ops');
    expect((await json<{ webhooks: Array<{ name: string; owner: string | null }> }>(admin('/api/webhooks'), 200)).webhooks.map((w) => [w.name, w.owner])).toEqual([['ops-hook', 'ops']]);
    expect((await admin('/api/webhooks/ops-hook', { method: 'DELETE' })).status).toBe(204);
    expect((await admin('/api/queues/ops-q', { method: 'DELETE' })).status).toBe(204);

    // Job.tokenId: a personal token's prefix on the job; the admin token is no personal token.
    const viaMia = await submit(tok.mia.token, 'via-token', 'true');
    const viaAdmin = await submit(server.token, 'via-admin-token', 'true');
    expect((await json<{ owner: string; viaToken: string | null }>(as(tok.max.token, `/api/jobs/${viaMia}`), 200))).toMatchObject({ owner: 'mia', viaToken: tok.mia.token.slice(0, 12) });
    expect((await json<{ owner: string; viaToken: string | null }>(admin(`/api/jobs/${viaAdmin}`), 200))).toMatchObject({ owner: 'admin', viaToken: null });
  });

  it('never answers a token again after its create: the lists show its prefix only', async () => {
    const mine = await (await as(tok.mia.token, '/api/tokens')).text();
    const everyone = await (await admin('/api/tokens?all=1')).text();
    expect(mine).toContain(tok.mia.token.slice(0, 12));
    expect(everyone).toContain(tok.max.token.slice(0, 12));
    for (const t of [tok.mia.token, tok.max.token]) {
      // Nothing of the token past its prefix: not the whole, not its secret part.
      for (const text of [mine, everyone]) expect(text).not.toContain(t.slice(12, 24));
    }
  });

  it("another member reads a job's secrets nowhere: REST, jobdeck status, the job's stream and the list stream", async () => {
    const SECRETS = ['yaml-secret-value-7f3a', 'launch-secret-value-9c1e', 'yaml-env-token-4b2d', 'launch-env-password-0e5f'];
    const maxAuth = { authorization: `Bearer ${tok.max.token}` };
    const list = await tryUpgrade(wsUrl(server.url, '/ws/jobs'), maxAuth);
    expect(list.status).toBe(101);
    const listed = collect(list.ws as WebSocket);
    const yaml = ['name: with-secrets', 'envs:', '  PLAIN: visible-plain', `  API_TOKEN: ${SECRETS[2]}`, 'secrets:', `  DB_PASS: ${SECRETS[0]}`, 'run: echo started; sleep 2'].join('\n');
    const body = { yaml, secrets: { LAUNCH_SECRET: SECRETS[1] }, envs: { DB_PASSWORD: SECRETS[3] } };
    const id = (await json<{ id: number }>(as(tok.mia.token, '/api/jobs', { method: 'POST', body: JSON.stringify(body) }), 201)).id;
    const stream = await tryUpgrade(wsUrl(server.url, `/ws/jobs/${id}`), maxAuth);
    expect(stream.status).toBe(101);
    const streamed = collect(stream.ws as WebSocket);
    await expect.poll(() => status(id), { timeout: 120_000, interval: 100, message: `job ${id} did not succeed` }).toBe('SUCCEEDED');
    // The stream has told the whole story (the job's last status) and the list its changes.
    await expect.poll(() => streamed.some((m) => m.includes('"type":"job"') && m.includes('SUCCEEDED')), { timeout: 120_000, message: 'no end on the job stream' }).toBe(true);
    await expect.poll(() => listed.some((m) => m.includes(`"id":${id}`)), { timeout: 120_000, message: 'no list message about the job' }).toBe(true);
    list.ws!.close();
    stream.ws!.close();

    const detail = await (await as(tok.max.token, `/api/jobs/${id}`)).text();
    const jobs = await (await as(tok.max.token, '/api/jobs')).text();
    const cli = await runCli(server, ['status', String(id)], { env: { JOBDECK_TOKEN: tok.max.token } });
    expect(cli.code, cli.stderr).toBe(0);
    // What was read is the job (its plain env and its output are there), not an empty answer.
    expect(detail).toContain('visible-plain');
    expect(streamed.join('\n')).toContain('started');
    expect(cli.stdout).toContain('with-secrets');
    for (const [where, text] of [
      ['GET /api/jobs/:id', detail],
      ['GET /api/jobs', jobs],
      ['jobdeck status', cli.stdout + cli.stderr],
      ['/ws/jobs/:id', streamed.join('\n')],
      ['/ws/jobs', listed.join('\n')],
    ] as const) {
      for (const secret of SECRETS) expect(text, `${where} shows ${secret}`).not.toContain(secret);
    }
  });

  it('revoking a token closes its open log stream (4401)', async () => {
    const job = await submit(tok.mia.token, 'streamed');
    const extra = await json<{ id: number; token: string }>(as(tok.mia.token, '/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'stream' }) }), 201);
    const o = await tryUpgrade(wsUrl(server.url, `/ws/jobs/${job}`), { authorization: `Bearer ${extra.token}` });
    expect(o.status).toBe(101);
    const ws = o.ws as WebSocket;
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const revoke = await as(tok.mia.token, `/api/tokens/${extra.id}`, { method: 'DELETE' });
    expect(revoke.status).toBe(204);
    // Closed by the revoke (the stream would otherwise stay open for the job's 300 s).
    expect(await closed).toBe(4401);
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
  });

  it('refuses a submit over the pending quota, with the numbers', async () => {
    await json(admin('/api/queues/one-at-a-time', { method: 'PUT', body: JSON.stringify({ maxRunning: 1 }) }), 200);
    await json(admin(`/api/users/${ids.max}`, { method: 'PATCH', body: JSON.stringify({ maxPendingJobs: 1 }) }), 200);
    const yaml = (name: string) => JSON.stringify({ yaml: `name: ${name}\nqueue: one-at-a-time\nrun: sleep 300\n` });
    const first = (await json<{ id: number }>(as(tok.max.token, '/api/jobs', { method: 'POST', body: yaml('first') }), 201)).id;
    await started(first);
    const second = (await json<{ id: number }>(as(tok.max.token, '/api/jobs', { method: 'POST', body: yaml('second') }), 201)).id;
    expect(await status(second)).toBe('PENDING');
    const over = await as(tok.max.token, '/api/jobs', { method: 'POST', body: yaml('third') });
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ pending: 1, maxPendingJobs: 1, quotaSource: 'user', detail: 'user max has 1 job pending and may have 1 at once: wait for one to start, or cancel one' });
    // Another user is not limited by max's quota.
    const other = (await json<{ id: number }>(as(tok.mia.token, '/api/jobs', { method: 'POST', body: yaml('mia-third') }), 201)).id;
    await json(admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [first, second, other] }) }), 200);
    await json(admin(`/api/users/${ids.max}`, { method: 'PATCH', body: JSON.stringify({ maxPendingJobs: null }) }), 200);
  });

  it("holds a member to its priority cap — the role's, or a queue's lower one — on submit, re-run and set-priority, naming the cap; admins above it", async () => {
    await json(admin('/api/queues/capped', { method: 'PUT', body: JSON.stringify({ maxRunning: 1, memberMaxPriority: 600 }) }), 200);
    expect(await json(as(tok.mia.token, '/api/users/me'), 200)).toMatchObject({ name: 'mia', role: 'member', maxPriority: 950 });
    expect(await json(admin('/api/users/me'), 200)).toMatchObject({ role: 'admin', maxPriority: null });
    const queues = await json<{ queues: Array<{ name: string; memberMaxPriority: number | null }>; memberMaxPriority: number | null }>(as(tok.mia.token, '/api/queues'), 200);
    expect([queues.memberMaxPriority, queues.queues.find((q) => q.name === 'capped')?.memberMaxPriority]).toEqual([950, 600]);
    const post = (token: string, body: object) => as(token, '/api/jobs', { method: 'POST', body: JSON.stringify(body) });
    const refused = async (r: Promise<Response>, detail: string, extra: object) => {
      const res = await r;
      const body = await res.json();
      expect([res.status, body.detail], JSON.stringify(body)).toEqual([403, detail]);
      expect(body).toMatchObject({ field: 'priority', ...extra });
    };
    // The role's cap (any queue), the request's priority and the spec's alike.
    await refused(post(tok.mia.token, { cmd: 'true', name: 'too-high', priority: 1000 }), 'priority 1000 is above the member cap 950 (JOBDECK_QUOTA_MEMBER_MAX_PRIORITY): ask an admin for more', { priority: 1000, maxPriority: 950, capSource: 'role' });
    await refused(post(tok.mia.token, { yaml: 'name: too-high\npriority: 960\nrun: "true"\n' }), 'priority 960 is above the member cap 950 (JOBDECK_QUOTA_MEMBER_MAX_PRIORITY): ask an admin for more', { capSource: 'role' });
    // The queue's lower cap.
    await refused(post(tok.mia.token, { yaml: 'name: gpu-high\nqueue: capped\npriority: 700\nrun: sleep 300\n' }), 'priority 700 is above the member cap 600 (queue capped): ask an admin for more', { maxPriority: 600, capSource: 'queue', queue: 'capped' });
    // At the cap: accepted. The CLI says the cap and exits REFUSED (10), not "token refused".
    const runner = (await json<{ id: number }>(post(tok.mia.token, { yaml: 'name: gpu-runner\nqueue: capped\npriority: 600\nrun: sleep 300\n' }), 201)).id;
    const cliRefused = await runCli(server, ['launch', '-d', '--priority', '1000', '--cmd', 'true'], { env: { JOBDECK_TOKEN: tok.mia.token } });
    expect([cliRefused.code, cliRefused.stderr]).toEqual([10, expect.stringContaining('priority 1000 is above the member cap 950')]);
    // An admin may go above it, also on a member's job; the member's set-priority and re-run may not.
    await started(runner);
    const waiting = (await json<{ id: number }>(post(tok.mia.token, { yaml: 'name: gpu-waiting\nqueue: capped\nrun: sleep 300\n' }), 201)).id;
    await refused(as(tok.mia.token, `/api/jobs/${waiting}`, { method: 'PATCH', body: '{"priority": 601}' }), 'priority 601 is above the member cap 600 (queue capped): ask an admin for more', { capSource: 'queue' });
    expect((await json<{ priority: number }>(admin(`/api/jobs/${waiting}`, { method: 'PATCH', body: '{"priority": 990}' }), 200)).priority).toBe(990);
    await refused(as(tok.mia.token, `/api/jobs/${waiting}/rerun`, { method: 'POST' }), 'priority 990 is above the member cap 600 (queue capped): ask an admin for more', { capSource: 'queue' });
    const again = (await json<{ id: number }>(admin(`/api/jobs/${waiting}/rerun`, { method: 'POST' }), 201)).id;
    await json(admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [runner, waiting, again] }) }), 200);
  }, 60_000);

  it("holds a job over its user's running-CPU quota with the numbers in its pending reason", async () => {
    await json(admin(`/api/users/${ids.mia}`, { method: 'PATCH', body: JSON.stringify({ maxRunningCpus: 1 }) }), 200);
    const running = await submit(tok.mia.token, 'quota-running');
    await started(running);
    const held = await submit(tok.mia.token, 'quota-held');
    const reason = () => json<{ pendingReason: string | null }>(admin(`/api/jobs/${held}`), 200).then((j) => j.pendingReason);
    await expect.poll(reason, { timeout: 120_000, interval: 100, message: `job ${held} got no pending reason` }).toMatch(/^user mia at its CPU quota \(1 of 1 CPUs running; needs 1\)/);
    expect(await status(held)).toBe('PENDING');
    await json(admin(`/api/users/${ids.mia}`, { method: 'PATCH', body: JSON.stringify({ maxRunningCpus: null }) }), 200);
    await json(admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [running, held] }) }), 200);
  });

  it('writes exactly one audit row per audited action — every login path too — with user, token prefix, IP and time', async () => {
    const before = (await audit()).length;
    const job = await submit(tok.mia.token, 'audited', 'true');
    await expect.poll(() => status(job), { timeout: 120_000, interval: 100, message: `job ${job} did not succeed` }).toBe('SUCCEEDED');
    await json(as(tok.mia.token, `/api/jobs/${job}/rerun`, { method: 'POST', body: '{}' }), 201);
    const sleeper = await submit(tok.mia.token, 'to-cancel');
    await json(as(tok.mia.token, `/api/jobs/${sleeper}/cancel`, { method: 'POST' }), 200);
    expect((await as(tok.mia.token, `/api/jobs/${job}`, { method: 'DELETE' })).status).toBe(204);
    // A waiting job re-prioritised, then a bulk cancel of two jobs: one row naming both.
    await json(admin('/api/queues/audit-q', { method: 'PUT', body: JSON.stringify({ maxRunning: 1 }) }), 200);
    const inQueue = (name: string) => json<{ id: number }>(as(tok.mia.token, '/api/jobs', { method: 'POST', body: JSON.stringify({ yaml: `name: ${name}\nqueue: audit-q\nrun: sleep 300\n` }) }), 201);
    const blocker = (await inQueue('blocker')).id;
    await started(blocker);
    const waiting = (await inQueue('waiting')).id;
    expect((await json<{ priority: number }>(as(tok.mia.token, `/api/jobs/${waiting}`, { method: 'PATCH', body: '{"priority": 900}' }), 200)).priority).toBe(900);
    const bulk = await json<{ cancelled: number[]; cancelling: number[] }>(as(tok.mia.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [blocker, waiting] }) }), 200);
    expect([...bulk.cancelled, ...bulk.cancelling].sort((a, b) => a - b)).toEqual([blocker, waiting]);
    // A client cannot say where it is: the server's own view of the address is recorded.
    const t = await json<{ id: number; prefix: string }>(as(tok.mia.token, '/api/tokens', { method: 'POST', headers: { 'x-jobdeck-peer': '6.6.6.6' }, body: JSON.stringify({ name: 'audit' }) }), 201);
    expect((await as(tok.mia.token, `/api/tokens/${t.id}`, { method: 'DELETE' })).status).toBe(204);
    const v = await json<{ id: number }>(admin('/api/users', { method: 'POST', body: JSON.stringify({ name: 'vic', role: 'viewer' }) }), 201);
    await json(admin(`/api/users/${v.id}`, { method: 'PATCH', body: JSON.stringify({ role: 'member' }) }), 200);
    await json(admin(`/api/users/${v.id}`, { method: 'PATCH', body: JSON.stringify({ disabled: true }) }), 200);
    const login = (password: string) => fetch(new URL('/api/auth/login', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'max', password }) });
    const session = await login('max-password-1');
    expect(session.status).toBe(200);
    expect((await login('wrong-password')).status).toBe(401);
    // The login URL the server prints: a right token and a wrong one.
    const viaUrl = (token: string) => fetch(new URL(`/login?token=${encodeURIComponent(token)}`, server.url), { redirect: 'manual' });
    const urlOk = await viaUrl(server.token);
    expect([urlOk.status, urlOk.headers.get('location'), cookieFrom(urlOk) !== null]).toEqual([303, '/', true]);
    const urlBad = await viaUrl('jd_not-the-token-0123456789');
    expect([urlBad.status, urlBad.headers.get('location')]).toEqual([303, '/login?error=invalid']);
    // An action from a browser session (max's cookie): its user, no token prefix.
    const bySession = await fetch(new URL('/api/jobs', server.url), { method: 'POST', headers: { 'content-type': 'application/json', cookie: cookieFrom(session)!, origin: server.url }, body: JSON.stringify({ cmd: 'true', name: 'from-session' }) });
    expect(bySession.status, await bySession.clone().text()).toBe(201);
    const sessionJob = ((await bySession.json()) as { id: number }).id;

    const all = await audit();
    const rows = all.slice(0, all.length - before).reverse();
    expect(rows.map((r) => r.action)).toEqual([
      'job.submit',
      'job.rerun',
      'job.submit',
      'job.cancel',
      'job.delete',
      'queue.set',
      'job.submit',
      'job.submit',
      'job.priority',
      'job.cancel',
      'token.create',
      'token.revoke',
      'user.create',
      'user.update',
      'user.update',
      'login',
      'login.failed',
      'login',
      'login.failed',
      'job.submit',
    ]);
    for (const r of rows) {
      expect(r.ip, r.action).toMatch(/127\.0\.0\.1/);
      expect(Date.parse(r.at), r.action).toBeGreaterThan(Date.now() - 600_000);
    }
    // The admin's queue change, between mia's rows; the rest are read without it.
    expect(rows.splice(5, 1)[0]).toMatchObject({ action: 'queue.set', userName: 'admin', tokenPrefix: server.token.slice(0, 12), target: 'queue:audit-q', detail: { maxRunning: 1 } });
    const byMia = rows.slice(0, 11);
    for (const r of byMia) expect([r.action, r.userName, r.tokenPrefix]).toEqual([r.action, 'mia', tok.mia.token.slice(0, 12)]);
    expect(rows[7]).toMatchObject({ target: `job:${waiting}`, detail: { priority: 900 } });
    expect(rows[8]).toMatchObject({ target: null, detail: { jobs: 2 } });
    expect((rows[8].detail!.ids as number[]).sort((a, b) => a - b)).toEqual([blocker, waiting]);
    expect(rows[12]).toMatchObject({ userName: 'admin', tokenPrefix: server.token.slice(0, 12), target: `user:${v.id}`, detail: { role: 'member' } });
    expect(rows[13]).toMatchObject({ userName: 'admin', target: `user:${v.id}`, detail: { disabled: true } });
    expect(rows[14]).toMatchObject({ userName: 'max', tokenPrefix: null, detail: { via: 'password' } });
    expect(rows[15]).toMatchObject({ userName: 'max', tokenPrefix: null, detail: { via: 'password', username: 'max' } });
    expect(rows[16]).toMatchObject({ userName: 'admin', tokenPrefix: server.token.slice(0, 12), detail: { via: 'url' } });
    expect(rows[17]).toMatchObject({ userName: '(token)', tokenPrefix: null, detail: { via: 'url' } });
    // A session's actions are its user's, with no token prefix (the session's login row has how it logged in).
    expect(rows[18]).toMatchObject({ userName: 'max', tokenPrefix: null, target: `job:${sessionJob}` });
    // The log is read-only through the API: no route writes or deletes it.
    expect((await admin('/api/audit', { method: 'DELETE' })).status).toBe(405);
    expect((await as(tok.mia.token, '/api/audit')).status).toBe(403);
  });

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
  });
});
