import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createExecutors } from '../../lib/executors/index';
import { createLocalExecutor, readExitRecord, readHandleFile, type LocalExecutor } from '../../lib/executors/local/executor';
import { liveMembers, parseProcStat, readProcStat } from '../../lib/executors/local/proc';
import type { AttemptHandle, LaunchRequest, ProbeResult } from '../../lib/executors/types';
import { ended, testLaunchRequest, waitFor } from './executor-helpers';

/**
 * The local executor against real processes: bash wrappers, process groups, /proc, signals.
 * No timing targets: every wait is "until it happens" with a generous limit.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-local-exec-'));
let seq = 0;
const launched: Array<{ ex: LocalExecutor; h: AttemptHandle }> = [];

afterEach(async () => {
  // Never leave a process behind, whatever the test did.
  for (const { ex, h } of launched.splice(0)) await ex.cancel(h, { graceMs: 100 });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function request(over: Partial<LaunchRequest> = {}): LaunchRequest {
  return testLaunchRequest(path.join(root, `a${++seq}`), over);
}

async function launch(ex: LocalExecutor, over: Partial<LaunchRequest> = {}) {
  const req = request(over);
  const h = await ex.launch(req);
  launched.push({ ex, h });
  return { req, h };
}

const log = (req: LaunchRequest) => (existsSync(req.logPath) ? readFileSync(req.logPath, 'utf8') : '');

describe('local executor: exit status', () => {
  const ex = createLocalExecutor({ pollMs: 200 });

  it('run exit 0 → exited, phase run, code 0; handle names pid and start time', async () => {
    const { req, h } = await launch(ex, { run: 'echo hello' });
    expect(h.executor).toBe('local');
    expect(h.ref).toBe(`${h.pid}:${h.pidStartTime}`);
    expect(h.attemptDir).toBe(req.attemptDir);
    expect(readHandleFile(req.attemptDir)).toEqual(h);
    const r = await ended(ex, h);
    expect(r).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
    expect(await ex.probe(h)).toEqual(r);
    expect(log(req)).toBe('hello\n');
    // The exit record is one JSON line with the wrapper's own clock.
    const raw = JSON.parse(readFileSync(path.join(req.attemptDir, 'exit'), 'utf8'));
    expect(Object.keys(raw).sort()).toEqual(['cpuMs', 'endedAtMs', 'exitCode', 'phase']);
    expect(Number.isInteger(raw.cpuMs) && raw.cpuMs >= 0).toBe(true);
    expect(Math.abs(raw.endedAtMs - Date.now())).toBeLessThan(5 * 60_000);
    expect(existsSync(path.join(req.attemptDir, 'exit.tmp'))).toBe(false);
  });

  it('run exit 3 → phase run, code 3', async () => {
    const { h } = await launch(ex, { setup: 'true', run: 'echo x; exit 3' });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 3 });
  });

  it('setup exit 2 → phase setup, code 2, and run never starts', async () => {
    const marker = path.join(root, `ran-${seq}`);
    const { req, h } = await launch(ex, { setup: 'echo in-setup; exit 2', run: `echo in-run; touch '${marker}'` });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'setup', exitCode: 2 });
    expect(log(req)).toBe('in-setup\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('null setup and null run → exit 0 at once', async () => {
    const { req, h } = await launch(ex);
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
    expect(log(req)).toBe('');
  });

  it('a run killed by a signal records 128+N', async () => {
    const { h } = await launch(ex, { run: 'kill -KILL $$' });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 137 });
  });
});

/** What a one-node local attempt of job 7, task 1 gets of SkyPilot's variables (docs/spec.md "What each attempt gets"). */
const SKYPILOT_LOCAL: Record<string, string> = {
  SKYPILOT_TASK_ID: 'jobdeck-job-7-task-1',
  SKYPILOT_NUM_NODES: '1',
  SKYPILOT_NODE_RANK: '0',
  SKYPILOT_NODE_IPS: '127.0.0.1',
  SKYPILOT_SETUP_NODE_RANK: '0',
  SKYPILOT_SETUP_NODE_IPS: '127.0.0.1',
  SKYPILOT_NUM_GPUS_PER_NODE: '0',
  SKYPILOT_CLUSTER_INFO: '{"cluster_name":"jobdeck-job-7","cloud":"local","region":null,"zone":null}',
  JOBDECK_NODE_RANK: '0',
  JOBDECK_NUM_NODES: '1',
  JOBDECK_NODE_IPS: '127.0.0.1',
};

describe('local executor: environment and workdir', () => {
  const ex = createLocalExecutor({ pollMs: 200 });

  it('task envs reach setup and run verbatim; JOBDECK_* are set; server secrets are not passed', async () => {
    const envs: Record<string, string> = {
      QUOTES: `it's "quoted" \\ back\\slash`,
      NEWLINES: 'line1\nline2\n\n',
      SUBST: '$(touch /tmp/jobdeck-pwned) `id` ${HOME} $HOME',
      UNICODE: 'żółć ✓ 日本 🚀',
      SPACES: '  leading and trailing  ',
      EMPTY: '',
      GLOB: '* ? [a-z]',
      JOBDECK_JOB_ID: 'user cannot override this',
    };
    const out = path.join(root, `env-${seq + 1}`);
    mkdirSync(out);
    const dump = (phase: string) =>
      Object.keys(envs)
        .concat(['JOBDECK_TASK_INDEX', 'JOBDECK_ATTEMPT', 'JOBDECK_SECRET_FOR_TEST', 'DATABASE_URL', ...Object.keys(SKYPILOT_LOCAL)])
        .map((k) => `if [ -n "\${${k}+x}" ]; then printf '%s' "$${k}" > '${out}/${phase}.${k}'; fi`)
        .join('\n');
    const saved = { s: process.env.JOBDECK_SECRET_FOR_TEST, d: process.env.DATABASE_URL };
    process.env.JOBDECK_SECRET_FOR_TEST = 'secret';
    process.env.DATABASE_URL = 'postgresql://secret@nowhere/db';
    let h: AttemptHandle;
    try {
      ({ h } = await launch(ex, { envs, setup: dump('setup'), run: dump('run') }));
    } finally {
      if (saved.s === undefined) delete process.env.JOBDECK_SECRET_FOR_TEST;
      else process.env.JOBDECK_SECRET_FOR_TEST = saved.s;
      if (saved.d === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved.d;
    }
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
    for (const phase of ['setup', 'run']) {
      const read = (k: string) => (existsSync(`${out}/${phase}.${k}`) ? readFileSync(`${out}/${phase}.${k}`, 'utf8') : undefined);
      for (const [k, v] of Object.entries(envs)) if (k !== 'JOBDECK_JOB_ID') expect(read(k), `${phase} ${k}`).toBe(v);
      expect(read('JOBDECK_JOB_ID')).toBe('7');
      expect(read('JOBDECK_TASK_INDEX')).toBe('1');
      expect(read('JOBDECK_ATTEMPT')).toBe('2');
      expect(read('JOBDECK_SECRET_FOR_TEST')).toBeUndefined();
      expect(read('DATABASE_URL')).toBeUndefined();
      // SkyPilot's native variables, with SkyPilot's meanings: rank 0 of one node, this machine.
      for (const [k, v] of Object.entries(SKYPILOT_LOCAL)) expect(read(k), `${phase} ${k}`).toBe(v);
    }
    expect(existsSync('/tmp/jobdeck-pwned')).toBe(false);
  });

  it('envs that change the shell (PATH, BASH_ENV) reach the task but do not break the wrapper', async () => {
    const bashEnv = path.join(root, 'bash-env.sh');
    writeFileSync(bashEnv, 'FROM_BASH_ENV=yes\n');
    const { req, h } = await launch(ex, {
      envs: { PATH: '/nonexistent', BASH_ENV: bashEnv },
      run: 'echo "path=$PATH from_bash_env=$FROM_BASH_ENV"; exit 4',
    });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 4 });
    expect(log(req)).toBe('path=/nonexistent from_bash_env=yes\n');
  });

  it('honours workdir (absolute and ~), defaulting to the attempt\'s workspace', async () => {
    const wd = path.join(root, 'some workdir');
    mkdirSync(wd);
    const a = await launch(ex, { setup: 'pwd', run: 'pwd', workdir: wd });
    const b = await launch(ex, { run: 'pwd', workdir: '~' });
    const c = await launch(ex, { run: 'pwd' });
    for (const x of [a, b, c]) expect(await ended(ex, x.h)).toMatchObject({ state: 'exited', exitCode: 0 });
    expect(log(a.req)).toBe(`${realpathSync(wd)}\n${realpathSync(wd)}\n`);
    expect(log(b.req)).toBe(`${realpathSync(os.homedir())}\n`);
    expect(log(c.req)).toBe(`${realpathSync(c.req.attemptDir)}/work\n`);
  });

  it('a missing workdir ends the attempt in phase setup with a clear log line; nothing runs', async () => {
    const marker = path.join(root, `ran-missing-${seq}`);
    const missing = path.join(root, 'does-not-exist');
    const { req, h } = await launch(ex, { workdir: missing, setup: `touch '${marker}'`, run: `touch '${marker}'` });
    const r = await ended(ex, h);
    expect(r).toMatchObject({ state: 'exited', phase: 'setup', exitCode: 1, reason: expect.stringContaining('workdir') });
    expect(log(req)).toContain(`jobdeck: workdir ${missing} does not exist or is not an accessible directory`);
    expect(existsSync(marker)).toBe(false);
  });

  it('rejects what it cannot run with a clear error', async () => {
    await expect(ex.launch(request({ workdir: 'relative/dir' }))).rejects.toThrow(/workdir must be an absolute path/);
    await expect(ex.launch(request({ envs: { 'A=B': 'x' } }))).rejects.toThrow(/invalid variable name/);
    await expect(ex.launch(request({ envs: { A: 'x\0y' } }))).rejects.toThrow(/NUL/);
  });
});

describe('local executor: one log, in order', () => {
  const ex = createLocalExecutor({ pollMs: 200 });

  it('stdout and stderr of setup then run are interleaved in write order', async () => {
    const { req, h } = await launch(ex, {
      setup: 'echo s1; echo s2 >&2',
      run: 'echo a; echo b >&2; echo c; for i in $(seq 1 200); do echo "o$i"; echo "e$i" >&2; done',
    });
    expect(await ended(ex, h)).toMatchObject({ state: 'exited', exitCode: 0 });
    const lines = ['s1', 's2', 'a', 'b', 'c'];
    for (let i = 1; i <= 200; i++) lines.push(`o${i}`, `e${i}`);
    expect(log(req)).toBe(lines.join('\n') + '\n');
  });

  it('appends to an existing log file', async () => {
    const req = request({ run: 'echo second' });
    mkdirSync(path.dirname(req.logPath), { recursive: true });
    writeFileSync(req.logPath, 'first\n');
    const h = await ex.launch(req);
    launched.push({ ex, h });
    await ended(ex, h);
    expect(log(req)).toBe('first\nsecond\n');
  });
});

describe('local executor: detached, survives its launcher', () => {
  /** Starts a separate Node process that launches the attempt, prints the handle, and then exits or hangs. */
  function launchElsewhere(req: LaunchRequest, mode: 'exit' | 'hang') {
    const script = path.join(root, `launcher-${++seq}.mts`);
    writeFileSync(
      script,
      `import { createLocalExecutor } from ${JSON.stringify(path.join(ROOT, 'lib/executors/local/executor.ts'))};
const h = await createLocalExecutor().launch(${JSON.stringify(req)});
process.stdout.write(JSON.stringify(h) + '\\n');
${mode === 'hang' ? 'setInterval(() => {}, 1000);' : ''}`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const handle = new Promise<AttemptHandle>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d) => {
        buf += d;
        if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
      });
      child.on('close', (code) => reject(new Error(`launcher exited ${code} without a handle`)));
    });
    return { child, handle, closed };
  }

  it.each(['exit', 'hang'] as const)('launcher %s (then dies): a fresh executor probes, watches and reads the exit', async (mode) => {
    const go = path.join(root, `go-${seq + 1}`);
    const req = request({ run: `echo started; while [ ! -e '${go}' ]; do sleep 0.05; done; echo done; exit 7` });
    const l = launchElsewhere(req, mode);
    const h = await l.handle;
    const fresh = createLocalExecutor({ pollMs: 200 });
    launched.push({ ex: fresh, h });
    if (mode === 'hang') l.child.kill('SIGKILL');
    // 'close' needs the launcher's stdout closed: the attempt does not hold a pipe of its launcher.
    await l.closed;
    expect(fresh.isParentOf(h)).toBe(false);
    expect(await fresh.probe(h)).toEqual({ state: 'running' });
    expect(readProcStat(h.pid!)!.ppid).not.toBe(l.child.pid);
    // A second fresh instance from the ref alone (what a restarted jobdeck has).
    const fromRef: AttemptHandle = { executor: 'local', ref: h.ref, attemptDir: h.attemptDir };
    expect(await createLocalExecutor().probe(fromRef)).toEqual({ state: 'running' });
    const result = ended(fresh, h);
    await waitFor('the run to start', () => log(req).includes('started'));
    writeFileSync(go, '');
    expect(await result).toMatchObject({ state: 'exited', phase: 'run', exitCode: 7 });
    expect(await fresh.probe(h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 7 });
    expect(readExitRecord(req.attemptDir)).toMatchObject({ phase: 'run', exitCode: 7 });
    expect(log(req)).toBe('started\ndone\n');
  });
});

describe('local executor: lost attempts', () => {
  const ex = createLocalExecutor({ pollMs: 200 });

  it('kill -9 of the whole group → lost (parent watch and fresh probe agree)', async () => {
    const { req, h } = await launch(ex, { run: 'echo up; sleep 1000' });
    const result = ended(ex, h);
    await waitFor('the run to start', () => log(req).includes('up'));
    process.kill(-h.pid!, 'SIGKILL');
    const r = await result;
    expect(r.state).toBe('lost');
    expect((r as { reason: string }).reason).toMatch(new RegExp(`process ${h.pid} .*recorded no exit status`));
    await waitFor('the group to be gone', () => liveMembers(h.pid!, 0).length === 0);
    const p = await createLocalExecutor().probe(h);
    expect(p).toEqual({ state: 'lost', reason: `process ${h.pid} is gone and recorded no exit status` });
    expect(await ex.probe(h)).toEqual(p);
  });

  it('kill -9 of the wrapper only → lost; cancel then removes the orphans', async () => {
    const { req, h } = await launch(ex, { run: 'echo up; sleep 1000' });
    await waitFor('the run to start', () => log(req).includes('up'));
    process.kill(h.pid!, 'SIGKILL');
    await waitFor('the wrapper to be gone', () => {
      const s = readProcStat(h.pid!);
      return !s || s.state === 'Z';
    });
    expect((await ex.probe(h)).state).toBe('lost');
    expect(liveMembers(h.pid!, 0).length).toBeGreaterThan(0); // run's bash and sleep are orphans
    await ex.cancel(h, { graceMs: 5000 });
    expect(liveMembers(h.pid!, 0)).toEqual([]);
  });

  it('an exit recorded between the exit-file read and the process check is not "lost"', async () => {
    const go = path.join(root, `go-race-${seq + 1}`);
    const { req, h } = await launch(ex, { run: `echo up; while [ ! -e '${go}' ]; do sleep 0.05; done; exit 8` });
    await waitFor('the run to start', () => log(req).includes('up'));
    const racy = createLocalExecutor({
      hooks: {
        // Exactly here the attempt finishes: it records its exit and its process goes away.
        afterFirstExitRead: () => {
          writeFileSync(go, '');
          return waitFor('the wrapper to be gone', () => {
            const s = readProcStat(h.pid!);
            return !s || s.state === 'Z';
          });
        },
      },
    });
    expect(await racy.probe(h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 8 });
  });

  it('a wrong start time (pid reused) → lost, never running; cancel does not touch that pid', async () => {
    const { req, h } = await launch(ex, { run: 'echo up; sleep 1000' });
    await waitFor('the run to start', () => log(req).includes('up'));
    // Another attempt's handle whose pid now names this running wrapper: its own folder (and so its
    // own control group, none here) — the running attempt's group is not the lost one's to stop.
    const reused: AttemptHandle = { ...h, ref: `${h.pid}:1`, pidStartTime: '1', attemptDir: path.join(root, 'reused') };
    const r = await createLocalExecutor().probe(reused);
    expect(r).toEqual({ state: 'lost', reason: `pid ${h.pid} was reused by another process (start time ${h.pidStartTime}, expected 1)` });
    await ex.cancel(reused, { graceMs: 100 });
    expect(await ex.probe(h)).toEqual({ state: 'running' });
    // The same for this very test process, which is certainly alive.
    const self = readProcStat(process.pid)!;
    const me: AttemptHandle = { executor: 'local', ref: `${process.pid}:${Number(self.startTime) + 1}`, attemptDir: path.join(root, 'none') };
    expect((await ex.probe(me)).state).toBe('lost');
  });
});

describe('local executor: cancel', () => {
  const ex = createLocalExecutor({ pollMs: 200 });

  it('gives a TERM-trapping attempt its grace period, then kills the whole group', async () => {
    const graceMs = 2000;
    // run traps TERM (logs it, keeps going); its child ignores TERM.
    const { req, h } = await launch(ex, {
      run: [
        `trap 'echo got-term' TERM`,
        `sh -c 'trap "" TERM; exec sleep 1000' &`,
        'echo ready',
        'while :; do wait; done',
      ].join('\n'),
    });
    await waitFor('the run to start', () => log(req).includes('ready'));
    await waitFor('the child to start', () => liveMembers(h.pid!, 0).some((p) => p.comm === 'sleep'));
    const members = liveMembers(h.pid!, 0).map((p) => p.pid);
    expect(members.length).toBeGreaterThanOrEqual(3); // wrapper, run's bash, sleep
    let resolved = false;
    const t0 = Date.now();
    const cancelled = ex.cancel(h, { graceMs }).then(() => (resolved = true));
    await waitFor('SIGTERM to arrive', () => log(req).includes('got-term'));
    // Just after SIGTERM: everyone is still there and cancel is still waiting.
    expect(resolved).toBe(false);
    expect(liveMembers(h.pid!, 0).map((p) => p.pid).sort()).toEqual([...members].sort());
    await cancelled;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(graceMs);
    expect(liveMembers(h.pid!, 0)).toEqual([]);
    for (const pid of members) {
      const s = readProcStat(pid);
      expect(!s || s.state === 'Z', `pid ${pid}`).toBe(true);
    }
    // Killed with SIGKILL: the wrapper could not record an end.
    expect((await ex.probe(h)).state).toBe('lost');
  });

  it('a cooperative attempt ends on SIGTERM and records 143', async () => {
    const { req, h } = await launch(ex, { run: 'echo up; sleep 1000' });
    await waitFor('the run to start', () => log(req).includes('up'));
    const result = ended(ex, h);
    await ex.cancel(h, { graceMs: 30_000 });
    expect(liveMembers(h.pid!, 0)).toEqual([]);
    expect(await result).toMatchObject({ state: 'exited', phase: 'run', exitCode: 143 });
  });

  it('also stops processes that moved to another group of the session (bash set -m)', async () => {
    const { req, h } = await launch(ex, { run: 'set -m; sleep 1000 & echo "bg=$!"; wait' });
    await waitFor('the run to start', () => /bg=\d+/.test(log(req)));
    const bg = Number(/bg=(\d+)/.exec(log(req))![1]);
    expect(readProcStat(bg)!.pgrp).not.toBe(h.pid);
    expect(readProcStat(bg)!.session).toBe(h.pid);
    await createLocalExecutor().cancel(h, { graceMs: 5000 });
    expect(liveMembers(h.pid!, 0)).toEqual([]);
    const s = readProcStat(bg);
    expect(!s || s.state === 'Z').toBe(true);
  });

  it('is safe on an attempt that already ended, from any instance', async () => {
    const { h } = await launch(ex, { run: 'exit 5' });
    await ended(ex, h);
    await ex.cancel(h, { graceMs: 30_000 });
    await createLocalExecutor().cancel(h, { graceMs: 30_000 });
    await ex.cancel({ executor: 'local', ref: 'garbage', attemptDir: h.attemptDir });
    expect(await ex.probe(h)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 5 });
  });
});

describe('local executor: watch', () => {
  it('fires once for a parent-launched attempt, also when subscribed after the exit', async () => {
    const ex = createLocalExecutor({ pollMs: 50 });
    const { h } = await launch(ex, { run: 'exit 9' });
    expect(ex.isParentOf(h)).toBe(true);
    const calls: ProbeResult[] = [];
    const first = new Promise<void>((r) => ex.watch(h, (x) => (calls.push(x), r())));
    await first;
    expect(calls).toEqual([expect.objectContaining({ state: 'exited', exitCode: 9 })]);
    expect(ex.isParentOf(h)).toBe(false);
    // Subscribing after the end still reports it (from the exit file).
    const late = await ended(ex, h);
    expect(late).toMatchObject({ state: 'exited', exitCode: 9 });
    await new Promise((r) => setTimeout(r, 300)); // several poll intervals: still one call
    expect(calls).toHaveLength(1);
  });

  it('fires for an attempt this instance is not the parent of, through the exit file (no poll)', async () => {
    const parent = createLocalExecutor();
    const go = path.join(root, `go-w-${seq + 1}`);
    const { req, h } = await launch(parent, { run: `echo up; while [ ! -e '${go}' ]; do sleep 0.05; done; exit 6` });
    const other = createLocalExecutor({ pollMs: 600_000 }); // only the folder watch can be prompt
    expect(other.isParentOf(h)).toBe(false);
    let calls = 0;
    const result = new Promise<ProbeResult>((resolve) =>
      other.watch(h, (r) => {
        calls++;
        resolve(r);
      }),
    );
    await waitFor('the run to start', () => log(req).includes('up'));
    writeFileSync(go, '');
    expect(await result).toMatchObject({ state: 'exited', phase: 'run', exitCode: 6 });
    expect(calls).toBe(1);
  });

  it('reports lost through the poll for a non-child attempt killed without a record', async () => {
    const parent = createLocalExecutor();
    const { req, h } = await launch(parent, { run: 'echo up; sleep 1000' });
    await waitFor('the run to start', () => log(req).includes('up'));
    const other = createLocalExecutor({ pollMs: 100 });
    const result = ended(other, h);
    process.kill(-h.pid!, 'SIGKILL');
    expect(await result).toMatchObject({ state: 'lost' });
  });

  it('unsubscribe stops notifications', async () => {
    const ex = createLocalExecutor({ pollMs: 50 });
    const { h } = await launch(ex, { run: 'sleep 0.2' });
    const other = createLocalExecutor({ pollMs: 50 });
    let calls = 0;
    ex.watch(h, () => calls++)();
    other.watch(h, () => calls++)();
    await ended(ex, h);
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toBe(0);
  });
});

describe('process table and registry', () => {
  it('parses /proc/<pid>/stat with spaces and parentheses in the command name', () => {
    // Fields 3–24: state, ppid, pgrp, session, 7–13, utime stime cutime cstime (14–17), 18–21, start time (22), vsize (23), rss (24).
    const fields = ['S', '1', '4242', '4242', ...Array(7).fill('0'), '11', '12', '13', '14', ...Array(4).fill('0'), '987654', '0', '2048'];
    const s = parseProcStat(`4243 (we ird) (name)) ${fields.join(' ')}\n`);
    expect(s).toEqual({
      pid: 4243,
      comm: 'we ird) (name)',
      state: 'S',
      ppid: 1,
      pgrp: 4242,
      session: 4242,
      startTime: '987654',
      utime: 11,
      stime: 12,
      cutime: 13,
      cstime: 14,
      rssPages: 2048,
    });
    expect(parseProcStat('garbage')).toBeNull();
    expect(readProcStat(process.pid)).toMatchObject({ pid: process.pid, ppid: process.ppid });
  });

  it("capacity comes from options, then JOBDECK_CPUS, then the machine — the host's CPUs, shared by its servers", () => {
    expect(createLocalExecutor({ cpus: 3 }).capacity()).toEqual({ cpus: 3, host: true });
    const saved = process.env.JOBDECK_CPUS;
    try {
      process.env.JOBDECK_CPUS = '5';
      expect(createLocalExecutor().capacity()).toEqual({ cpus: 5, host: true });
      delete process.env.JOBDECK_CPUS;
      expect(createLocalExecutor().capacity()).toEqual({ cpus: os.availableParallelism(), host: true });
    } finally {
      if (saved === undefined) delete process.env.JOBDECK_CPUS;
      else process.env.JOBDECK_CPUS = saved;
    }
  });

  it('the executor registry returns one local executor', () => {
    const executors = createExecutors();
    expect(executors.get('local')).toBe(executors.get('local'));
    expect(executors.get('local').name).toBe('local');
    expect(() => executors.get('nope')).toThrow(/unknown executor "nope"/);
  });
});

describe('local executor: an attempt of another host (docs/design.md "Replicas")', () => {
  const ex = createLocalExecutor({ pollMs: 200 });

  it('records this host in the handle; a handle of another host is never probed through this /proc: lost without an exit record, settled with one', async () => {
    const { req, h } = await launch(ex, { run: 'sleep 30' });
    expect(h.hostId).toMatch(/.+\/.+/);
    expect(readHandleFile(req.attemptDir)?.hostId).toBe(h.hostId);
    expect(await ex.probe(h)).toEqual({ state: 'running' });
    // The same pid and start time, recorded by a server on another host: not this process.
    const foreign: AttemptHandle = { ...h, hostId: 'elsewhere/0000' };
    expect(await ex.probe(foreign)).toMatchObject({ state: 'lost', reason: expect.stringContaining('another host (elsewhere/0000)') });
    writeFileSync(path.join(req.attemptDir, 'exit'), JSON.stringify({ phase: 'run', exitCode: 0, endedAtMs: Date.now() }) + '\n');
    expect(await ex.probe(foreign)).toMatchObject({ state: 'exited', exitCode: 0 });
  });
});
