/**
 * As whom a job runs (docs/design.md §16): the isolation mode from JOBDECK_ISOLATION and who
 * jobdeck runs as (lib/config.ts isolationFromEnv), the rule per user (lib/jobs/run-as.ts), the
 * accounts a job may never run as (lib/accounts.ts), and an attempt's environment with an account
 * (lib/executors/wrapper.ts).
 */
import { describe, expect, it } from 'vitest';
import { accountProblem, parsePasswdLine } from '../../lib/accounts';
import { isolationFromEnv, jobApiUrl } from '../../lib/config';
import { attemptEnv } from '../../lib/executors/wrapper';
import { runAsFor } from '../../lib/jobs/run-as';

describe('the isolation mode', () => {
  it('auto: on as root, single-user otherwise; on needs root; off is off', () => {
    expect(isolationFromEnv({}, 0)).toMatchObject({ on: true, singleUser: false, setting: 'auto', runAccount: 'jobdeck-run', minUid: 1000 });
    expect(isolationFromEnv({}, 1000)).toMatchObject({ on: false, singleUser: true, setting: 'auto' });
    expect(isolationFromEnv({ JOBDECK_ISOLATION: 'off' }, 0)).toMatchObject({ on: false, singleUser: false });
    expect(isolationFromEnv({ JOBDECK_ISOLATION: 'ON', JOBDECK_RUN_ACCOUNT: 'runner', JOBDECK_ACCOUNT_MIN_UID: '500' }, 0)).toMatchObject({ on: true, runAccount: 'runner', minUid: 500 });
    expect(() => isolationFromEnv({ JOBDECK_ISOLATION: 'on' }, 1000)).toThrow(/JOBDECK_ISOLATION=on: jobdeck runs as uid 1000, and only root can start a job as another OS account/);
    expect(() => isolationFromEnv({ JOBDECK_ISOLATION: 'yes' }, 0)).toThrow('JOBDECK_ISOLATION: expected auto, on or off, got "yes"');
    expect(() => isolationFromEnv({ JOBDECK_RUN_ACCOUNT: '-rf' }, 0)).toThrow(/JOBDECK_RUN_ACCOUNT: expected an OS account name/);
    expect(() => isolationFromEnv({ JOBDECK_ACCOUNT_MIN_UID: '0' }, 0)).toThrow(/JOBDECK_ACCOUNT_MIN_UID: expected an integer ≥ 1/);
  });

  it('the URL attempts call back: JOBDECK_URL, else the listen address (a wildcard as loopback)', () => {
    expect(jobApiUrl('127.0.0.1', 3000, {})).toBe('http://127.0.0.1:3000');
    expect(jobApiUrl('0.0.0.0', 3000, {})).toBe('http://127.0.0.1:3000');
    expect(jobApiUrl('::', 3000, {})).toBe('http://[::1]:3000');
    expect(jobApiUrl('0.0.0.0', 3000, { JOBDECK_URL: 'https://jobs.example.com/' })).toBe('https://jobs.example.com');
    expect(() => jobApiUrl('0.0.0.0', 3000, { JOBDECK_URL: 'ftp://x' })).toThrow(/JOBDECK_URL: expected an http\(s\) URL/);
  });
});

describe('as whom a user\u2019s job runs', () => {
  const on = { on: true, singleUser: false, runAccount: 'jobdeck-run', serverUid: 0 };
  const single = { on: false, singleUser: true, runAccount: 'jobdeck-run', serverUid: 1000 };
  const mia = { id: 2, name: 'mia', osUser: 'mia' };

  it('isolation on: its own account, else the run account — the first admin and a job with no submitter too', () => {
    expect(runAsFor(on, mia)).toEqual({ as: 'account', name: 'mia', own: true });
    expect(runAsFor(on, { ...mia, osUser: null })).toEqual({ as: 'account', name: 'jobdeck-run', own: false });
    expect(runAsFor(on, { id: 1, name: 'admin', osUser: null })).toEqual({ as: 'account', name: 'jobdeck-run', own: false });
    expect(runAsFor(on, null)).toEqual({ as: 'account', name: 'jobdeck-run', own: false });
  });

  it('single-user: the first admin\u2019s jobs as jobdeck itself, any other user\u2019s refused, saying why', () => {
    expect(runAsFor(single, { id: 1, name: 'admin', osUser: null })).toEqual({ as: 'server' });
    expect(runAsFor(single, null)).toEqual({ as: 'server' });
    const r = runAsFor(single, mia);
    expect(r.as).toBe('refused');
    expect(r.as === 'refused' && r.why).toMatch(/^user mia's job would run as jobdeck's own OS account \(uid 1000\): this jobdeck runs without root, so it runs only the first admin's jobs/);
  });

  it('off: every job as jobdeck itself', () => {
    expect(runAsFor({ ...single, singleUser: false }, mia)).toEqual({ as: 'server' });
  });
});

describe('the accounts a job may run as', () => {
  const rules = { minUid: 1000, serverUid: 0 };
  const acct = (uid: number) => ({ name: `u${uid}`, uid, gid: uid, home: '/home/x', shell: '/bin/bash' });

  it('never root, jobdeck\u2019s own account or a system account', () => {
    expect(accountProblem(acct(1001), rules)).toBeNull();
    expect(accountProblem(acct(0), rules)).toBe('u0 is root (uid 0): no job runs as root');
    expect(accountProblem(acct(1001), { minUid: 1000, serverUid: 1001 })).toBe("u1001 is jobdeck's own account (uid 1001): jobs run apart from the service");
    expect(accountProblem(acct(33), rules)).toBe('u33 has uid 33, below JOBDECK_ACCOUNT_MIN_UID (1000): system accounts do not run jobs');
  });

  it('reads passwd lines', () => {
    expect(parsePasswdLine('mia:x:1001:1002:Mia,,,:/home/mia:/bin/bash')).toEqual({ name: 'mia', uid: 1001, gid: 1002, home: '/home/mia', shell: '/bin/bash' });
    expect(parsePasswdLine('# comment')).toBeNull();
    expect(parsePasswdLine('bad:x:abc:1::/:')).toBeNull();
  });

  it('an attempt run as an account gets its account\u2019s environment, the task\u2019s envs, jobdeck\u2019s variables and its token — nothing of the server\u2019s', () => {
    const env = attemptEnv(
      { jobId: 7, taskIndex: 0, attempt: 2, setup: null, run: 'true', envs: { PATH: '/opt/x/bin:/usr/bin', A: '1' }, workdir: null, cpus: 1, attemptDir: '/d', logPath: '/d/run.log', account: { name: 'mia', uid: 1001, gid: 1001, home: '/home/mia', shell: '' }, api: { url: 'http://127.0.0.1:3000', token: 'jdp_x' } },
      'local',
    );
    expect(env).toMatchObject({ HOME: '/home/mia', USER: 'mia', LOGNAME: 'mia', SHELL: '/bin/sh', LANG: 'C.UTF-8', PATH: '/opt/x/bin:/usr/bin', A: '1', JOBDECK_JOB_ID: '7', JOBDECK_ATTEMPT: '2', JOBDECK_URL: 'http://127.0.0.1:3000', JOBDECK_TOKEN: 'jdp_x' });
    const server = new Set(Object.keys(process.env));
    for (const k of Object.keys(env)) if (!['HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'PATH'].includes(k)) expect(server.has(k) && process.env[k] === env[k], k).toBe(false);
  });
});
