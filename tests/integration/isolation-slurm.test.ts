/**
 * Isolation on the Slurm executor (docs/design.md §16, docs/slurm.md "As whom a job runs"), on
 * the one-node test cluster: a real server as root with JOBDECK_ISOLATION=on submits each attempt
 * with sbatch as its user's OS account, so Slurm runs it as that account and `squeue` names it;
 * the job's environment is the account's clean one plus the task's, nothing of the server's; and
 * a member's job reads nothing of jobdeck's or another user's (the admin token, the database,
 * another user's log, its job folder and environment, /proc/<pid>/environ of the server or of
 * the other job), signals nothing of theirs, and calls jobdeck back with its own token, refused
 * once the attempt ended.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useOsAccounts } from '../helpers/os-accounts';
import type { ServerProcess } from '../helpers/server';
import { useSlurmClusters } from '../helpers/slurm-lock';
import { useServerDatabase } from '../helpers/use-database';

useSlurmClusters();

const ENV = {
  // No JOBDECK_TOKEN: the server writes its admin token to the data folder, the file a job must not read.
  JOBDECK_TOKEN: '',
  JOBDECK_ISOLATION: 'on',
  JOBDECK_RUN_ACCOUNT: 'jds-run',
  JOBDECK_EXECUTOR: 'slurm',
  JOBDECK_RECONCILE_MS: '200',
  JOBDECK_LOST_CONFIRM_MS: '500',
  NODE_ENV: 'production',
  npm_lifecycle_event: 'start',
  DATABASE_SECRET_MARKER: 'server-only-value-5c1d',
};

interface Detail {
  status: string;
  tasks: Array<{ attemptList: Array<{ status: string; osUser: string | null; exitCode: number | null }> }>;
}

describe('isolation on the Slurm executor: each job is its user\u2019s OS account\u2019s Slurm job', () => {
  useOsAccounts(['jds-mia', 'jds-eli', 'jds-run']);
  const fixture = useServerDatabase('pglite', 'isolation-slurm');
  let server: ServerProcess;
  let gates = '';
  const users: Record<'mia' | 'eli', { id: number; token: string }> = {} as never;

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
  const waitFor = (id: number, statuses: string[]) => expect.poll(async () => (await detail(id)).status, { timeout: 120_000, interval: 200 }).toSatisfy((s: string) => statuses.includes(s));
  const attemptDir = (id: number) => path.join(server.home, 'jobs', String(id), 'task-0', 'attempt-1');
  const log = (id: number) => (existsSync(path.join(attemptDir(id), 'run.log')) ? readFileSync(path.join(attemptDir(id), 'run.log'), 'utf8') : '');
  const waitGate = (name: string) => `while [ ! -e ${gates}/${name} ]; do sleep 0.05; done`;
  const ref = (id: number) => JSON.parse(readFileSync(path.join(attemptDir(id), 'handle.json'), 'utf8')).ref as string;

  beforeAll(async () => {
    gates = mkdtempSync(path.join(os.tmpdir(), 'jds-gates-'));
    chmodSync(gates, 0o755);
    const s = await fixture.start({ env: ENV });
    server = { ...s, token: readFileSync(path.join(s.home, 'token'), 'utf8').trim() };
    for (const name of ['mia', 'eli'] as const) {
      const { id } = await ok<{ id: number }>(as(server.token, '/api/users', { method: 'POST', body: JSON.stringify({ name, role: 'member', osUser: `jds-${name}` }) }), 201);
      const { token } = await ok<{ token: string }>(as(server.token, '/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'cli', userId: id }) }), 201);
      users[name] = { id, token };
    }
  });

  afterAll(async () => {
    if (server) await as(server.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ all: true }) }).catch(() => undefined);
    if (gates) rmSync(gates, { recursive: true, force: true });
  });

  it('submits as the account — squeue names it, id -un says it — with a clean environment; its token works while it runs', async () => {
    const script = ['id -un', 'env | sort', `echo "status $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $JOBDECK_TOKEN" "$JOBDECK_URL/api/jobs/$JOBDECK_JOB_ID")"`, waitGate('mia-1')].join('\n');
    const id = await submit('mia', { cmd: script, name: 'iso-slurm-env', envs: { TASK_VAR: 'task-value' } });
    await expect.poll(() => log(id), { timeout: 120_000, interval: 200 }).toMatch(/^status \d+$/m);
    expect(execFileSync('squeue', ['-h', '-j', ref(id), '-o', '%u']).toString().trim()).toBe('jds-mia');
    writeFileSync(path.join(gates, 'mia-1'), '');
    await waitFor(id, ['SUCCEEDED']);
    const out = log(id);
    const lines = out.split('\n');
    expect(lines[0]).toBe('jds-mia');
    expect(out).toMatch(/^status 200$/m);
    const env = Object.fromEntries(lines.filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(env).toMatchObject({ USER: 'jds-mia', LOGNAME: 'jds-mia', PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', TASK_VAR: 'task-value', JOBDECK_JOB_ID: String(id) });
    for (const name of Object.keys(env)) expect(name, `the server's ${name} reached the job`).not.toMatch(/^(npm_|NODE_ENV$|PORT$|DATABASE_|JOBDECK_HOME$|JOBDECK_ISOLATION$|JOBDECK_EXECUTOR$|VITEST)/);
    expect(out).not.toContain('server-only-value-5c1d');
    expect((await detail(id)).tasks[0].attemptList[0].osUser).toBe('jds-mia');
    // The attempt ended: its token is refused.
    const token = env.JOBDECK_TOKEN;
    expect(token).toMatch(/^jdp_/);
    expect((await as(token, `/api/jobs/${id}`)).status).toBe(401);
  });

  it('a member\u2019s Slurm job reads nothing of jobdeck\u2019s or another user\u2019s and signals nothing of theirs', async () => {
    const eli = await submit('eli', { cmd: `echo "pid $$"; ${waitGate('eli-1')}`, name: 'iso-slurm-eli', secrets: { ELI_SECRET: 'eli-secret-3' } });
    await expect.poll(() => log(eli), { timeout: 120_000, interval: 200 }).toMatch(/^pid \d+\n/);
    const eliPid = Number(/^pid (\d+)/.exec(log(eli))![1]);
    const eliDir = attemptDir(eli);
    const tries: Record<string, string> = {
      'admin token': `cat ${server.home}/token`,
      'session key': `cat ${server.home}/session.key`,
      database: `ls ${server.home}/db`,
      "another user's log": `cat ${eliDir}/run.log`,
      "another user's job folder": `ls ${eliDir}/job`,
      "another user's environment file": `cat ${eliDir}/job/env`,
      "another user's exit record": `echo '{"phase":"run","exitCode":0,"endedAtMs":1}' > ${eliDir}/job/exit`,
      "the server's environment": `cat /proc/${server.proc.pid}/environ`,
      "another user's job's environment": `cat /proc/${eliPid}/environ`,
      "signal another user's job": `kill -9 ${eliPid}`,
      "write another attempt's log": `echo forged >> ${eliDir}/run.log`,
      "replace its own log": 'rm -f ../run.log',
    };
    // Each thing the job reaches for is there (root reads it): a DENIED is the account's rights, not a missing file.
    for (const p of [`${server.home}/token`, `${server.home}/session.key`, `${server.home}/db/PG_VERSION`, `${eliDir}/run.log`, `${eliDir}/job/env`, `/proc/${server.proc.pid}/environ`, `/proc/${eliPid}/environ`]) {
      expect(existsSync(p), p).toBe(true);
    }
    const script = Object.entries(tries)
      .map(([what, cmd]) => `if ${cmd} >/dev/null 2>&1; then echo "LEAK ${what}"; else echo "DENIED ${what}"; fi`)
      .join('\n');
    const mia = await submit('mia', { cmd: script, name: 'iso-slurm-attacks' });
    await waitFor(mia, ['SUCCEEDED']);
    const got = log(mia);
    expect(got.split('\n').filter((l) => l.startsWith('LEAK'))).toEqual([]);
    expect(got.split('\n').filter((l) => l.startsWith('DENIED'))).toHaveLength(Object.keys(tries).length);
    expect((await detail(eli)).status).toBe('RUNNING');
    writeFileSync(path.join(gates, 'eli-1'), '');
    await waitFor(eli, ['SUCCEEDED']);
    expect(log(eli)).toBe(`pid ${eliPid}\n`);
  });
});
