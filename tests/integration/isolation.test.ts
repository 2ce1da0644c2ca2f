/**
 * Isolation on the local executor (docs/design.md §16), against a real server running as root
 * with JOBDECK_ISOLATION=on and real OS accounts: every attack a hostile member tried on an
 * unisolated jobdeck, as a job of that member — reading the admin token, the database, the keys,
 * another user's log, workspace, environment and upload, /proc/<pid>/environ of the server and of
 * another user's job; signalling another user's job; forging its own exit record or another
 * attempt's log; making itself admin — each must fail; a job's `id -un` is its user's mapped
 * account (the run account without one) and its environment holds nothing of the server's.
 * A job calls jobdeck back with its own token (a follow-up job, its own status), which can do
 * nothing its submitter cannot and is refused once the attempt ended — also for an attempt
 * re-adopted after a kill -9 of jobdeck; cancel stops every process of an attempt run as another
 * account. Uploads are owned: another user's hash is refused and not shown.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidsOfUid, useOsAccounts } from '../helpers/os-accounts';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

const ENV = {
  // No JOBDECK_TOKEN: the server makes its admin token and writes it to the data folder, as on a
  // real first start — the file a member's job must not read.
  JOBDECK_TOKEN: '',
  JOBDECK_ISOLATION: 'on',
  JOBDECK_RUN_ACCOUNT: 'jdi-run',
  JOBDECK_RECONCILE_MS: '200',
  JOBDECK_LOST_CONFIRM_MS: '200',
  JOBDECK_CPUS: '8',
  JOBDECK_WEBHOOK_ALLOW_PRIVATE: '1',
  // What `npm start` puts in the server's environment: no job may see any of it.
  NODE_ENV: 'production',
  npm_lifecycle_event: 'start',
  npm_config_user_agent: 'npm/11',
  DATABASE_SECRET_MARKER: 'server-only-value-7f3a',
  PATH: `${path.resolve('node_modules/.bin')}:${process.env.PATH}`,
};

interface Detail {
  status: string;
  owner: string | null;
  viaToken: string | null;
  upload: { hash: string | null } | null;
  tasks: Array<{ attemptList: Array<{ status: string; osUser: string | null; exitCode: number | null }> }>;
}

describe('isolation: each job runs as its user\u2019s OS account (local executor)', () => {
  const accounts = useOsAccounts(['jdi-mia', 'jdi-eli', 'jdi-run']);
  const fixture = useServerDatabase('pglite', 'isolation');
  let server: ServerProcess;
  let port = 0;
  /** Files the jobs wait for: a folder every account can read. */
  let gates = '';
  const users: Record<'mia' | 'eli' | 'zed' | 'vic', { id: number; token: string }> = {} as never;

  const as = (token: string, p: string, init: RequestInit = {}) =>
    fetch(new URL(p, server.url), { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const ok = async <T,>(r: Promise<Response>, status = 200): Promise<T> => {
    const res = await r;
    const text = await res.text();
    expect(res.status, text).toBe(status);
    return JSON.parse(text) as T;
  };
  const submit = async (who: keyof typeof users, body: Record<string, unknown>) => (await ok<{ id: number }>(as(users[who].token, '/api/jobs', { method: 'POST', body: JSON.stringify(body) }), 201)).id;
  const detail = (id: number) => ok<Detail>(as(server.token, `/api/jobs/${id}`));
  const waitFor = (id: number, statuses: string[]) => expect.poll(async () => (await detail(id)).status, { timeout: 120_000, interval: 100 }).toSatisfy((s: string) => statuses.includes(s));
  const attemptDir = (id: number, attempt = 1) => path.join(server.home, 'jobs', String(id), 'task-0', `attempt-${attempt}`);
  const log = (id: number, attempt = 1) => readFileSync(path.join(attemptDir(id, attempt), 'run.log'), 'utf8');
  /** A shell line that waits for gate `name` (no fixed sleep). */
  const waitGate = (name: string) => `while [ ! -e ${gates}/${name} ]; do sleep 0.05; done`;
  const open = (name: string) => writeFileSync(path.join(gates, name), '');
  /** A server on the suite's database; its admin token is the one it wrote to its data folder. */
  const start = async (opts: { home?: string; port?: number } = {}): Promise<ServerProcess> => {
    const s = await fixture.start({ ...opts, env: ENV });
    return { ...s, token: readFileSync(path.join(s.home, 'token'), 'utf8').trim() };
  };

  beforeAll(async () => {
    gates = mkdtempSync(path.join(os.tmpdir(), 'jdi-gates-'));
    chmodSync(gates, 0o755);
    server = await start();
    port = Number(new URL(server.url).port);
    // A webhook (for jobs that name it: none here), so the data folder holds its key, webhook.key.
    await ok(as(server.token, '/api/webhooks', { method: 'POST', body: JSON.stringify({ name: 'iso-hook', url: 'http://127.0.0.1:9/hook', events: ['job.succeeded'], namedOnly: true }) }), 201);
    const admin = (p: string, body: unknown) => ok<{ id: number; token?: string }>(as(server.token, p, { method: 'POST', body: JSON.stringify(body) }), 201);
    for (const [name, role, osUser] of [
      ['mia', 'member', 'jdi-mia'],
      ['eli', 'member', 'jdi-eli'],
      ['zed', 'member', null],
      ['vic', 'viewer', null],
    ] as const) {
      const { id } = await admin('/api/users', { name, role, ...(osUser ? { osUser } : {}) });
      const { token } = await admin('/api/tokens', { name: 'cli', userId: id });
      users[name] = { id, token: token! };
    }
  });

  afterAll(async () => {
    if (server) await as(server.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ all: true }) }).catch(() => undefined);
    if (gates) rmSync(gates, { recursive: true, force: true });
  });

  it('says the mode at start and in /api/health, and keeps the data folder jobdeck\u2019s', async () => {
    await expect.poll(() => server.output(), { timeout: 120_000, interval: 100 }).toMatch(/isolation on: each job runs as its user's OS account \(users without one as jdi-run\)/);
    expect((await ok<{ isolation: unknown }>(fetch(new URL('/api/health', server.url)))).isolation).toEqual({ mode: 'on' });
    expect((await ok<{ isolation: unknown }>(as(server.token, '/api/health'))).isolation).toMatchObject({ mode: 'on', runAccount: 'jdi-run' });
    const mode = (p: string) => (statSync(path.join(server.home, p)).mode & 0o777).toString(8);
    expect([mode(''), mode('jobs'), mode('db'), mode('token'), mode('token.sha256'), mode('session.key'), mode('webhook.key')]).toEqual(['711', '711', '700', '600', '600', '600', '600']);
  });

  it('refuses an OS account that does not exist, or root, for a user', async () => {
    const bad = await as(server.token, `/api/users/${users.zed.id}`, { method: 'PATCH', body: JSON.stringify({ osUser: 'jdi-nobody' }) });
    expect([bad.status, (await bad.json()).field]).toEqual([400, 'osUser']);
    const root = await as(server.token, `/api/users/${users.zed.id}`, { method: 'PATCH', body: JSON.stringify({ osUser: 'root' }) });
    expect([root.status, (await root.json()).detail]).toEqual([400, 'osUser: root is root (uid 0): no job runs as root']);
  });

  it('runs a job as its user\u2019s account — the run account without one — with nothing of the server\u2019s environment', async () => {
    const script = 'id -un; echo "groups $(id -Gn)"; env | sort';
    const mia = await submit('mia', { cmd: script, name: 'iso-env', envs: { TASK_VAR: 'task-value' }, secrets: { MIA_SECRET: 'mia-secret-1' } });
    const zed = await submit('zed', { cmd: 'id -un', name: 'iso-run-account' });
    await waitFor(mia, ['SUCCEEDED']);
    await waitFor(zed, ['SUCCEEDED']);
    const out = log(mia);
    const lines = out.split('\n');
    expect(lines[0]).toBe('jdi-mia');
    expect(lines[1]).toBe('groups jdi-mia');
    const env = Object.fromEntries(lines.filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(env).toMatchObject({ HOME: accounts.get('jdi-mia').home, USER: 'jdi-mia', LOGNAME: 'jdi-mia', PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', TASK_VAR: 'task-value', MIA_SECRET: 'mia-secret-1', JOBDECK_JOB_ID: String(mia), JOBDECK_URL: `http://127.0.0.1:${port}` });
    expect(env.JOBDECK_TOKEN).toMatch(/^jdp_/);
    for (const name of Object.keys(env)) expect(name, `the server's ${name} reached the job`).not.toMatch(/^(npm_|NODE_ENV$|PORT$|DATABASE_|JOBDECK_HOME$|JOBDECK_ISOLATION$|JOBDECK_RUN_ACCOUNT$|VITEST)/);
    expect(out).not.toContain('server-only-value-7f3a');
    expect(out).not.toContain('node_modules');
    expect(log(zed)).toBe('jdi-run\n');
    expect((await detail(mia)).tasks[0].attemptList[0].osUser).toBe('jdi-mia');
    expect((await detail(zed)).tasks[0].attemptList[0].osUser).toBe('jdi-run');
  });

  it('a member\u2019s job reads nothing of jobdeck\u2019s or another user\u2019s, signals nothing of theirs, and forges no record', async () => {
    // eli's job: a secret in its environment, a file in its workspace, an upload, its pid in its log.
    const up = mkdtempSync(path.join(os.tmpdir(), 'jdi-up-'));
    writeFileSync(path.join(up, 'private.txt'), 'eli-private-upload-content\n');
    const archive = path.join(up, 'a.tgz');
    await tar.c({ gzip: true, cwd: up, file: archive, portable: true }, ['private.txt']);
    const manifest = await ok<{ hash: string }>(as(users.eli.token, '/api/uploads', { method: 'POST', body: readFileSync(archive), headers: { 'content-type': 'application/gzip' } }), 201);
    rmSync(up, { recursive: true, force: true });
    const eli = await submit('eli', { cmd: `echo "pid $$"; echo eli-workspace-secret > mine.txt; ${waitGate('eli-1')}`, name: 'iso-eli', secrets: { ELI_SECRET: 'eli-secret-9' }, workdirUpload: manifest.hash });
    await expect.poll(() => (existsSync(path.join(attemptDir(eli), 'run.log')) ? log(eli) : ''), { timeout: 120_000, interval: 100 }).toMatch(/^pid \d+\n/);
    const eliPid = Number(/^pid (\d+)/.exec(log(eli))![1]);
    const eliDir = attemptDir(eli);
    const tries: Record<string, string> = {
      'admin token': `cat ${server.home}/token`,
      'token hash': `cat ${server.home}/token.sha256`,
      'session key': `cat ${server.home}/session.key`,
      'webhook key': `cat ${server.home}/webhook.key`,
      database: `ls ${server.home}/db`,
      'database file': `cat ${server.home}/db/PG_VERSION`,
      'data folder': `ls ${server.home}`,
      uploads: `cat ${server.home}/uploads/${manifest.hash}.tar.gz`,
      "another user's log": `cat ${eliDir}/run.log`,
      "another user's workspace": `cat ${eliDir}/work/mine.txt`,
      "another user's uploaded file": `cat ${eliDir}/work/private.txt`,
      "another user's environment file": `cat ${eliDir}/env`,
      "another user's script": `cat ${eliDir}/run.sh`,
      "the server's environment": `cat /proc/${server.proc.pid}/environ`,
      "another user's job's environment": `cat /proc/${eliPid}/environ`,
      "signal another user's job": `kill -9 ${eliPid}`,
      "write another attempt's log": `echo forged >> ${eliDir}/run.log`,
      'forge its own exit record': `echo '{"phase":"run","exitCode":0,"endedAtMs":1}' > ../exit`,
      'rewrite its own script': 'echo "exit 0" > ../run.sh',
      "its own attempt's environment file": 'cat ../env',
    };
    // Each thing the job reaches for is there (root reads it), so a DENIED is the account's rights,
    // not a missing file; its own attempt's files are checked from inside the job, as root cannot.
    for (const p of [`${server.home}/token`, `${server.home}/token.sha256`, `${server.home}/session.key`, `${server.home}/webhook.key`, `${server.home}/db/PG_VERSION`, `${server.home}/uploads/${manifest.hash}.tar.gz`, `${eliDir}/run.log`, `${eliDir}/work/mine.txt`, `${eliDir}/work/private.txt`, `${eliDir}/env`, `${eliDir}/run.sh`, `/proc/${server.proc.pid}/environ`, `/proc/${eliPid}/environ`]) {
      expect(existsSync(p), p).toBe(true);
    }
    expect(readFileSync(`${eliDir}/work/mine.txt`, 'utf8')).toBe('eli-workspace-secret\n');
    const script = Object.entries(tries)
      .map(([what, cmd]) => `if ${cmd} >/dev/null 2>&1; then echo "LEAK ${what}"; else echo "DENIED ${what}"; fi`)
      .join('\n');
    const own = ['../env', '../run.sh'].map((f) => `[ -e ${f} ] && echo "HAS ${f}"`).join('\n');
    const mia = await submit('mia', { cmd: `${own}\n${script}\nexit 3`, name: 'iso-attacks' });
    await waitFor(mia, ['FAILED']);
    const got = log(mia);
    expect(got.split('\n').filter((l) => l.startsWith('HAS'))).toEqual(['HAS ../env', 'HAS ../run.sh']);
    expect(got.split('\n').filter((l) => l.startsWith('LEAK'))).toEqual([]);
    expect(got.split('\n').filter((l) => l.startsWith('DENIED'))).toHaveLength(Object.keys(tries).length);
    // Its own end is what the wrapper saw, not what it tried to write.
    expect((await detail(mia)).tasks[0].attemptList[0].exitCode).toBe(3);
    // eli's job was not touched: it runs on, then ends on its own, its log its own.
    expect((await detail(eli)).status).toBe('RUNNING');
    open('eli-1');
    await waitFor(eli, ['SUCCEEDED']);
    expect(log(eli)).toBe(`pid ${eliPid}\n`);
    // The upload is eli's: mia cannot name it, and only eli and the admin see its hash.
    const steal = await as(users.mia.token, '/api/jobs', { method: 'POST', body: JSON.stringify({ cmd: 'cat private.txt', workdirUpload: manifest.hash }) });
    expect([steal.status, (await steal.json()).field]).toEqual([400, 'workdirUpload']);
    const hashSeenBy = async (token: string) => (await ok<Detail>(as(token, `/api/jobs/${eli}`))).upload?.hash;
    expect([await hashSeenBy(users.vic.token), await hashSeenBy(users.mia.token), await hashSeenBy(users.eli.token), await hashSeenBy(server.token)]).toEqual([null, null, manifest.hash, manifest.hash]);
  });

  it('a job calls jobdeck back with its own token: its submitter\u2019s rights, no more, and refused once the attempt ended', async () => {
    const eli = await submit('eli', { cmd: waitGate('eli-2'), name: 'iso-eli-2' });
    await waitFor(eli, ['RUNNING']);
    const call = (method: string, p: string, body?: string) =>
      `echo "${method} ${p} $(curl -s -o /dev/null -w '%{http_code}' -X ${method} -H "Authorization: Bearer $JOBDECK_TOKEN" -H 'content-type: application/json' ${body ? `-d '${body}'` : ''} "$JOBDECK_URL${p}")"`;
    const script = [
      'echo "token $JOBDECK_TOKEN"',
      call('GET', '/api/jobs/$JOBDECK_JOB_ID'),
      call('PATCH', `/api/users/${users.mia.id}`, '{"role":"admin"}'),
      call('POST', '/api/tokens', '{"name":"keep"}'),
      call('POST', `/api/jobs/${eli}/cancel`),
      `curl -s -X POST -H "Authorization: Bearer $JOBDECK_TOKEN" -H 'content-type: application/json' -d '{"cmd":"id -un","name":"iso-follow-up"}' "$JOBDECK_URL/api/jobs" | grep -o '"id":[0-9]*' | head -1 | sed 's/"id":/follow-up /'`,
    ].join('\n');
    const mia = await submit('mia', { cmd: script, name: 'iso-calls' });
    await waitFor(mia, ['SUCCEEDED']);
    const out = log(mia);
    expect(out).toContain(`GET /api/jobs/${mia} 200`);
    expect(out).toContain(`PATCH /api/users/${users.mia.id} 403`);
    expect(out).toContain('POST /api/tokens 403');
    expect(out).toContain(`POST /api/jobs/${eli}/cancel 403`);
    const token = /^token (jdp_\S+)$/m.exec(out)![1];
    const followUp = Number(/^follow-up (\d+)$/m.exec(out)![1]);
    await waitFor(followUp, ['SUCCEEDED']);
    const f = await detail(followUp);
    expect([f.owner, f.viaToken, f.tasks[0].attemptList[0].osUser, log(followUp)]).toEqual(['mia', token.slice(0, 12), 'jdi-mia', 'jdi-mia\n']);
    expect((await ok<{ users: Array<{ name: string; role: string }> }>(as(server.token, '/api/users'))).users.find((u) => u.name === 'mia')?.role).toBe('member');
    expect((await detail(eli)).status).toBe('RUNNING');
    // The attempt ended: its token is refused.
    expect((await as(token, `/api/jobs/${mia}`)).status).toBe(401);
    expect((await ok<{ tokens: Array<{ name: string }> }>(as(users.mia.token, '/api/tokens'))).tokens.map((t) => t.name)).toEqual(['cli']);
    open('eli-2');
    await waitFor(eli, ['SUCCEEDED']);
  });

  it('cancel stops every process of an attempt run as another account', async () => {
    const zed = accounts.get('jdi-run');
    const id = await submit('zed', { cmd: `sleep 300 & sleep 301 & (sleep 302 &) ; echo started; ${waitGate('never')}`, name: 'iso-cancel' });
    await expect.poll(() => (existsSync(path.join(attemptDir(id), 'run.log')) ? log(id) : ''), { timeout: 120_000, interval: 100 }).toContain('started');
    expect(pidsOfUid(zed.uid).length).toBeGreaterThanOrEqual(4);
    await ok(as(users.zed.token, `/api/jobs/${id}/cancel`, { method: 'POST' }));
    await waitFor(id, ['CANCELLED']);
    await expect.poll(() => pidsOfUid(zed.uid), { timeout: 120_000, interval: 100 }).toEqual([]);
  });

  it('re-adopts an attempt run as another account after kill -9 of jobdeck; its token works while it runs, and is refused after', async () => {
    const id = await submit('mia', {
      cmd: [`${waitGate('restart-1')}`, `echo "after $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $JOBDECK_TOKEN" "$JOBDECK_URL/api/jobs/$JOBDECK_JOB_ID")"`, 'echo "token $JOBDECK_TOKEN"'].join('\n'),
      name: 'iso-restart',
    });
    await waitFor(id, ['RUNNING']);
    const pid = JSON.parse(readFileSync(path.join(attemptDir(id), 'handle.json'), 'utf8')).pid as number;
    await server.kill9();
    server = await start({ home: server.home, port });
    // The start's held log lines follow its "listening" line on the pipe: read them as they come.
    await expect.poll(() => server.output(), { timeout: 120_000, interval: 100 }).toMatch(/re-adopting 1 non-terminal job/);
    // The wrapper kept running; its phase is still the account's.
    const kids = execFileSync('ps', ['-o', 'user=,comm=', '--ppid', String(pid)]).toString().trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(kids.filter(([, comm]) => comm !== 'perl').map(([user]) => user)).toEqual(['jdi-mia']);
    // Beside it the log pump (docs/design.md §8), jobdeck's own like the wrapper: the account cannot signal it.
    expect(kids.filter(([, comm]) => comm === 'perl').map(([user]) => user)).toEqual(['root']);
    open('restart-1');
    await waitFor(id, ['SUCCEEDED']);
    expect(log(id)).toMatch(/^after 200\ntoken jdp_/);
    const token = /^token (jdp_\S+)$/m.exec(log(id))![1];
    expect((await as(token, `/api/jobs/${id}`)).status).toBe(401);
  });
});
