import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createExecutors } from '../../lib/executors/index';
import {
  SlurmUnavailableError,
  createSlurmExecutor,
  parseScontrolJob,
  readSlurmHandleFile,
  slurmOutputPattern,
} from '../../lib/executors/slurm/executor';
import type { AttemptHandle, Executor, LaunchRequest, ProbeResult } from '../../lib/executors/types';
import { testLaunchRequest } from './executor-helpers';
import { useSlurmClusters } from '../helpers/slurm-lock';

useSlurmClusters();

/**
 * The Slurm executor against a real one-node Slurm cluster on this machine (started by
 * scripts/slurm-up.sh when it is not up). Real sbatch/scontrol/scancel, real batch jobs.
 * No timing targets: every wait is "until it happens" with a generous limit.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-slurm-exec-'));
let seq = 0;
const launched: Array<{ ex: Executor; h: AttemptHandle }> = [];

beforeAll(() => {
  // Idempotent; a no-op (tens of ms) when the cluster is already up. Installs on a fresh machine.
  execFileSync('bash', [path.join(ROOT, 'scripts', 'slurm-up.sh')], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
}, 600_000);

afterEach(async () => {
  // Never leave a job behind, whatever the test did.
  for (const { ex, h } of launched.splice(0)) await ex.cancel(h, { graceMs: 100 });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function request(over: Partial<LaunchRequest> = {}): LaunchRequest {
  return testLaunchRequest(path.join(root, `a${++seq}`), over);
}

async function launch(ex: Executor, over: Partial<LaunchRequest> = {}) {
  const req = request(over);
  const h = await ex.launch(req);
  launched.push({ ex, h });
  return { req, h };
}

type End = Exclude<ProbeResult, { state: 'running' }>;

/** Waits (no fixed sleep) for the attempt's end as watch() reports it. */
function ended(ex: Executor, h: AttemptHandle, limitMs = 30_000): Promise<End> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const t = setTimeout(() => {
      unsubscribe();
      reject(new Error(`attempt ${h.ref} did not end within ${limitMs} ms`));
    }, limitMs);
    unsubscribe = ex.watch(h, (r) => {
      clearTimeout(t);
      resolve(r);
    });
  });
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, limitMs = 30_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const log = (req: LaunchRequest) => (existsSync(req.logPath) ? readFileSync(req.logPath, 'utf8') : '');
const showJob = (id: string) => execFileSync('scontrol', ['-o', 'show', 'job', id], { encoding: 'utf8' });
const jobState = (id: string) => parseScontrolJob(showJob(id))?.state;

describe('pure helpers', () => {
  it('parseScontrolJob reads state, exit code, reason and a Command with spaces', () => {
    const line =
      'JobId=42 JobName=jobdeck-1-0-1 UserId=root(0) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) ExitCode=3:0 RunTime=00:00:01 Command=/a b/batch.sh /a b 1 0 WorkDir=/a b StdOut=/x';
    expect(parseScontrolJob(line)).toEqual({ jobId: '42', state: 'FAILED', reason: 'NonZeroExitCode', exitCode: 3, signal: 0, command: '/a b/batch.sh /a b 1 0' });
    expect(parseScontrolJob('slurm_load_jobs error: Invalid job id specified')).toBeNull();
  });

  it('slurmOutputPattern escapes % and refuses what Slurm cannot represent', () => {
    expect(slurmOutputPattern('/x/%j/a%%.log')).toBe('/x/%%j/a%%%%.log');
    expect(slurmOutputPattern('/x/a\\b.log')).toBeNull();
  });
});

describe('slurm executor: exit status', () => {
  const ex = createSlurmExecutor({ pollMs: 250 });

  it('run exit 0 → exited, phase run, code 0; job name, CPUs and handle copy as documented', async () => {
    const { req, h } = await launch(ex, { run: 'echo hello', cpus: 1.5 });
    expect(h).toMatchObject({ executor: 'slurm', attemptDir: req.attemptDir });
    expect(h.ref).toMatch(/^\d+$/);
    expect(readSlurmHandleFile(req.attemptDir)).toEqual(h);
    const line = showJob(h.ref);
    expect(line).toContain(' JobName=jobdeck-7-1-2 ');
    expect(line).toContain(' CPUs/Task=2 '); // ceil(1.5)
    expect(line).toContain(' Requeue=0 ');
    const r = await ended(ex, h);
    expect(r).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
    expect(log(req)).toBe('hello\n');
    expect(await ex.probe(h)).toEqual(r);
  });

  it('run exit 3 → exited, phase run, code 3 (and Slurm agrees: FAILED 3:0)', async () => {
    const { h } = await launch(ex, { run: 'echo about to fail; exit 3' });
    const r = await ended(ex, h);
    expect(r).toMatchObject({ state: 'exited', phase: 'run', exitCode: 3 });
    expect((r as { endedAt: Date }).endedAt).toBeInstanceOf(Date);
    await waitFor('Slurm to record the end', () => jobState(h.ref) === 'FAILED');
    expect(showJob(h.ref)).toContain(' ExitCode=3:0 ');
  });

  it('setup failure → phase setup with its code; run never starts', async () => {
    const { req, h } = await launch(ex, { setup: 'echo preparing; exit 4', run: 'echo never printed' });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'setup', exitCode: 4 });
    expect(log(req)).toBe('preparing\n');
  });

  it('no run → exited, phase run, code 0 after setup', async () => {
    const { req, h } = await launch(ex, { setup: 'echo only setup' });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
    expect(log(req)).toBe('only setup\n');
  });

  it('a missing workdir → phase setup, with the reason', async () => {
    const { h } = await launch(ex, { workdir: path.join(root, 'does-not-exist'), run: 'echo never' });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'setup', exitCode: 1, reason: 'workdir does not exist or is not an accessible directory' });
  });
});

describe('slurm executor: environment, workdir, log', () => {
  const ex = createSlurmExecutor({ pollMs: 250 });

  it('task envs reach setup and run verbatim; JOBDECK_* ids added; server settings kept out; SBATCH_* of a task does not reach sbatch', async () => {
    const tricky: Record<string, string> = {
      NEWLINES: 'line one\nline two\n\n',
      QUOTES: `it's "quoted" \`tick\` $(echo no) $HOME \\n \\`,
      EQUALS: 'a=b=c',
      EMPTY: '',
      SPACES: '  leading and trailing  ',
      UNICODE: 'ü → 😀 \u202e',
      CONTROL: '\t\x01\x1b[31mred',
      SBATCH_PARTITION: 'no-such-partition',
      BASH_ENV: '/nonexistent/bash_env',
    };
    const out = path.join(root, `env-${seq + 1}.bin`);
    process.env.JOBDECK_SLURM_TEST_SECRET = 'must-not-leak';
    let h: AttemptHandle;
    try {
      ({ h } = await launch(ex, { envs: { ...tricky, OUT: out }, run: '/usr/bin/env -0 > "$OUT"' }));
    } finally {
      delete process.env.JOBDECK_SLURM_TEST_SECRET;
    }
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
    const env = new Map<string, string>();
    for (const rec of readFileSync(out, 'utf8').split('\0')) {
      const i = rec.indexOf('=');
      if (i > 0) env.set(rec.slice(0, i), rec.slice(i + 1));
    }
    for (const [k, v] of Object.entries(tricky)) expect(env.get(k), k).toBe(v);
    expect(env.get('JOBDECK_JOB_ID')).toBe('7');
    expect(env.get('JOBDECK_TASK_INDEX')).toBe('1');
    expect(env.get('JOBDECK_ATTEMPT')).toBe('2');
    expect(env.get('SLURM_JOB_ID')).toBe(h.ref);
    // SkyPilot's native variables: rank 0 of one node, the node's address (as jobdeck's own).
    expect(Object.fromEntries([...env].filter(([k]) => /^(SKYPILOT_|JOBDECK_N)/.test(k) && !k.endsWith('_IPS')))).toEqual({
      SKYPILOT_TASK_ID: 'jobdeck-job-7-task-1',
      SKYPILOT_TASK_IDS: 'jobdeck-job-7-task-0\njobdeck-job-7-task-1',
      SKYPILOT_NUM_NODES: '1',
      SKYPILOT_NODE_RANK: '0',
      SKYPILOT_SETUP_NODE_RANK: '0',
      SKYPILOT_NUM_GPUS_PER_NODE: '0',
      SKYPILOT_CLUSTER_INFO: '{"cluster_name":"jobdeck-job-7","cloud":"slurm","region":null,"zone":null}',
      JOBDECK_NODE_RANK: '0',
      JOBDECK_NUM_NODES: '1',
    });
    expect(env.get('SKYPILOT_NODE_IPS')).toMatch(/^\S+$/);
    expect(env.get('SKYPILOT_NODE_IPS')).toBe(env.get('JOBDECK_NODE_IPS'));
    expect(env.get('SKYPILOT_SETUP_NODE_IPS')).toBe(env.get('JOBDECK_NODE_IPS'));
    expect(env.get('HOME')).toBe(process.env.HOME); // the server's base environment
    expect(env.has('JOBDECK_SLURM_TEST_SECRET')).toBe(false);
  });

  it('workdir and log paths with spaces and %: cwd is the workdir, the log lands where asked', async () => {
    const base = path.join(root, `odd ${seq + 1} %j %%`);
    const workdir = path.join(base, 'work dir');
    mkdirSync(workdir, { recursive: true });
    const req = request({ workdir, run: 'pwd; echo done', logPath: path.join(base, 'logs %x', 'a %j.log') });
    const h = await ex.launch(req);
    launched.push({ ex, h });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', exitCode: 0 });
    expect(log(req)).toBe(`${workdir}\ndone\n`);
  });

  it('stdout and stderr interleave in write order, setup first, appended to an existing log', async () => {
    const req = request({
      setup: 'echo setup-out; echo setup-err >&2',
      run: 'for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done',
    });
    mkdirSync(path.dirname(req.logPath), { recursive: true });
    writeFileSync(req.logPath, 'earlier attempt\n');
    const h = await ex.launch(req);
    launched.push({ ex, h });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', exitCode: 0 });
    expect(log(req)).toBe(
      ['earlier attempt', 'setup-out', 'setup-err', 'out1', 'err1', 'out2', 'err2', 'out3', 'err3', 'out4', 'err4', 'out5', 'err5', ''].join('\n'),
    );
  });

  it('the env file is private (0600) in a private attempt folder (0700)', async () => {
    const { req, h } = await launch(ex, { envs: { TOKEN: 'secret' }, run: 'true' });
    await ended(ex, h);
    const { statSync } = await import('node:fs');
    expect(statSync(path.join(req.attemptDir, 'env')).mode & 0o777).toBe(0o600);
    expect(statSync(req.attemptDir).mode & 0o777).toBe(0o700);
  });
});

describe('slurm executor: cancel', () => {
  const ex = createSlurmExecutor({ pollMs: 250, cancelPollMs: 100 });

  it('a job that traps TERM ends within the grace period with its own exit code', async () => {
    const { req, h } = await launch(ex, {
      run: "trap 'echo got TERM; exit 7' TERM\necho ready\nwhile :; do sleep 0.1; done\n",
    });
    await waitFor('the job to start', () => log(req).includes('ready'));
    // A grace far longer than the test may run: cancel() resolving at all means the job ended
    // by itself, not because the grace period ran out (and its own exit code 7 below says so).
    await ex.cancel(h, { graceMs: 3_600_000 });
    expect(['RUNNING', 'COMPLETING', 'PENDING', 'CONFIGURING']).not.toContain(jobState(h.ref));
    expect(await ex.probe(h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 7 });
    expect(log(req)).toContain('got TERM');
  });

  it('a job that ignores TERM is killed after the grace period; nothing recorded → lost', async () => {
    const { req, h } = await launch(ex, { run: "trap '' TERM\necho ready\nwhile :; do sleep 0.1; done\n" });
    await waitFor('the job to start', () => log(req).includes('ready'));
    const graceMs = 1500;
    const t0 = Date.now();
    await ex.cancel(h, { graceMs });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(graceMs);
    expect(['RUNNING', 'COMPLETING', 'PENDING', 'CONFIGURING']).not.toContain(jobState(h.ref));
    const r = await ex.probe(h);
    expect(r.state).toBe('lost');
    expect((r as { reason: string }).reason).toMatch(new RegExp(`^Slurm job ${h.ref} ended \\S+ .*recorded no exit status$`));
  });

  it('a pending job is removed from the queue; cancel of an ended job is a no-op', async () => {
    const cpus = ex.capacity().cpus;
    const { req: bigReq, h: big } = await launch(ex, { cpus, run: 'echo ready; sleep 60' });
    await waitFor('the first job to start', () => log(bigReq).includes('ready'));
    const { h: waiting } = await launch(ex, { cpus, run: 'echo never' });
    await waitFor('the second job to be PENDING', () => jobState(waiting.ref) === 'PENDING');
    expect(await ex.probe(waiting)).toEqual({ state: 'running' });
    await ex.cancel(waiting, { graceMs: 100 });
    expect(jobState(waiting.ref)).toBe('CANCELLED');
    expect(await ex.probe(waiting)).toMatchObject({ state: 'lost' });
    await ex.cancel(big, { graceMs: 100 });
    await ex.cancel(big, { graceMs: 100 });
    expect(jobState(big.ref)).not.toBe('RUNNING');
  });
});

describe('slurm executor: lost attempts and fresh instances', () => {
  const ex = createSlurmExecutor({ pollMs: 250 });

  it('SIGKILL mid-run (scancel --batch --signal=KILL: the wrapper records nothing) → probe and watch say lost, with Slurm state', async () => {
    const { req, h } = await launch(ex, { run: 'echo ready; sleep 60' });
    await waitFor('the job to start', () => log(req).includes('ready'));
    const watched = ended(ex, h);
    execFileSync('scancel', ['--batch', '--signal=KILL', h.ref]);
    const r = await watched;
    expect(r.state).toBe('lost');
    expect((r as { reason: string }).reason).toMatch(new RegExp(`^Slurm job ${h.ref} ended FAILED exit code 0:9\\b.*recorded no exit status$`));
    expect(await ex.probe(h)).toEqual(r);
    expect(existsSync(path.join(req.attemptDir, 'exit'))).toBe(false);
  });

  it('scancel --signal=KILL is a job cancel in Slurm (TERM first): the wrapper still records 143', async () => {
    const { req, h } = await launch(ex, { run: 'echo ready; sleep 60' });
    await waitFor('the job to start', () => log(req).includes('ready'));
    execFileSync('scancel', ['--signal=KILL', h.ref]);
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 143 });
  });

  it('a job id unknown to the controller (purged) and no exit file → lost; an exit file still wins', async () => {
    const dir = path.join(root, 'purged', 'attempt');
    mkdirSync(dir, { recursive: true });
    const h: AttemptHandle = { executor: 'slurm', ref: '999999999', attemptDir: dir };
    const r = await ex.probe(h);
    expect(r.state).toBe('lost');
    expect((r as { reason: string }).reason).toMatch(/^Slurm job 999999999 is unknown to the controller/);
    writeFileSync(path.join(dir, 'exit'), '{"phase":"run","exitCode":0,"endedAtMs":1700000000000}\n');
    expect(await ex.probe(h)).toEqual({ state: 'exited', phase: 'run', exitCode: 0, endedAt: new Date(1700000000000) });
    expect(await ex.probe({ executor: 'slurm', ref: 'not-a-job', attemptDir: path.join(root, 'nowhere') })).toMatchObject({ state: 'lost' });
  });

  it('a job id that names another attempt\'s job (id reused after a state wipe) → lost, never that job\'s status', async () => {
    const { h: other } = await launch(ex, { run: 'echo ready; sleep 60' });
    await waitFor('the other job to run', () => jobState(other.ref) === 'RUNNING');
    const dir = path.join(root, 'reused', 'attempt');
    mkdirSync(dir, { recursive: true });
    const r = await ex.probe({ executor: 'slurm', ref: other.ref, attemptDir: dir });
    expect(r.state).toBe('lost');
    expect((r as { reason: string }).reason).toMatch(/now names another job/);
    // …and cancel from such a handle leaves the other job alone.
    await ex.cancel({ executor: 'slurm', ref: other.ref, attemptDir: dir }, { graceMs: 100 });
    expect(jobState(other.ref)).toBe('RUNNING');
  });

  it('a fresh executor instance probes, watches and cancels from the stored handle alone', async () => {
    const { req, h } = await launch(ex, { run: 'echo ready; sleep 1; exit 5' });
    const stored: AttemptHandle = { executor: h.executor, ref: h.ref, attemptDir: h.attemptDir }; // as the monitor rebuilds it
    const fresh = createSlurmExecutor({ pollMs: 250 });
    await waitFor('the job to start', () => log(req).includes('ready'));
    expect(await fresh.probe(stored)).toEqual({ state: 'running' });
    expect(await ended(fresh, stored)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 5 });

    const { req: req2, h: h2 } = await launch(ex, { run: 'echo ready; sleep 60' });
    await waitFor('the second job to start', () => log(req2).includes('ready'));
    const another = createSlurmExecutor();
    await another.cancel({ executor: 'slurm', ref: h2.ref, attemptDir: h2.attemptDir }, { graceMs: 5000 });
    expect(await another.probe({ executor: 'slurm', ref: h2.ref, attemptDir: h2.attemptDir })).toMatchObject({ state: 'exited', phase: 'run', exitCode: 143 });
  });
});

describe('slurm executor: controller down, capacity, registry', () => {
  it('controller not answering → probe/launch/cancel throw a transient SlurmUnavailableError (never lost); an exit file needs no controller', async () => {
    const ex = createSlurmExecutor();
    const conf = readFileSync(process.env.SLURM_CONF || '/etc/slurm/slurm.conf', 'utf8');
    const downConf = path.join(root, 'down.conf');
    // Same cluster, but the controller's address has no one listening: what a down slurmctld looks like.
    writeFileSync(downConf, conf.replace(/^SlurmctldHost=(.*)$/m, 'SlurmctldHost=$1\nSlurmctldPort=6999'));
    const dir = path.join(root, 'down', 'attempt');
    mkdirSync(dir, { recursive: true });
    const saved = process.env.SLURM_CONF;
    process.env.SLURM_CONF = downConf;
    try {
      const err = await ex.probe({ executor: 'slurm', ref: '1', attemptDir: dir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SlurmUnavailableError);
      expect(err).toMatchObject({ transient: true, message: expect.stringMatching(/Slurm controller is not answering/) });
      await expect(ex.launch(request({ run: 'true' }))).rejects.toBeInstanceOf(SlurmUnavailableError);
      await expect(ex.cancel({ executor: 'slurm', ref: '1', attemptDir: dir })).rejects.toBeInstanceOf(SlurmUnavailableError);
      expect(() => ex.capacity()).toThrow(SlurmUnavailableError);
      writeFileSync(path.join(dir, 'exit'), '{"phase":"run","exitCode":2,"endedAtMs":1700000000000}\n');
      expect(await ex.probe({ executor: 'slurm', ref: '1', attemptDir: dir })).toMatchObject({ state: 'exited', exitCode: 2 });
    } finally {
      if (saved === undefined) delete process.env.SLURM_CONF;
      else process.env.SLURM_CONF = saved;
    }
  });

  it('capacity is the partition\'s CPU total and node count, as the nodes report them', () => {
    const nodes = execFileSync('scontrol', ['-o', 'show', 'nodes'], { encoding: 'utf8' });
    const total = [...nodes.matchAll(/\sCPUTot=(\d+)\s/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(total).toBeGreaterThan(0);
    expect(createSlurmExecutor().capacity()).toEqual({ cpus: total, nodes: [...nodes.matchAll(/(?:^|\n)NodeName=/g)].length });
  });

  it('the executor registry\'s "slurm" is one Slurm executor', () => {
    const executors = createExecutors();
    const ex = executors.get('slurm');
    expect(ex.name).toBe('slurm');
    expect(executors.get('slurm')).toBe(ex);
  });
});
