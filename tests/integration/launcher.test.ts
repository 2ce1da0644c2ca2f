import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLauncher, launcherProgram, type Launcher } from '../../lib/executors/local/launcher';
import { createLocalExecutor, readHandleFile, type LocalExecutor } from '../../lib/executors/local/executor';
import { readProcStat } from '../../lib/executors/local/proc';
import type { AttemptHandle, LaunchRequest } from '../../lib/executors/types';
import { WRAPPER } from '../../lib/executors/wrapper';
import { readExitRecord } from '../../lib/executors/attempt-record';
import { ended, testLaunchRequest, waitFor } from './executor-helpers';

/**
 * The attempt launcher (lib/executors/local/launcher.ts + launcher-main.mjs) with real processes: the
 * wrappers' parent is the launcher, not this process; exits are reported through it; when it dies
 * the attempts run on and their ends are still reported; a new launcher starts on the next launch.
 */

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-launcher-'));
let seq = 0;
const launched: Array<{ ex: LocalExecutor; h: AttemptHandle }> = [];
const launchers: Launcher[] = [];

afterEach(async () => {
  for (const { ex, h } of launched.splice(0)) await ex.cancel(h, { graceMs: 100 });
  for (const l of launchers.splice(0)) l.close();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function request(over: Partial<LaunchRequest> = {}): LaunchRequest {
  return testLaunchRequest(path.join(root, `a${++seq}`), over);
}

function newLauncher(): Launcher {
  const program = launcherProgram();
  if (!program) throw new Error('launcher program not found');
  const l = createLauncher(program);
  launchers.push(l);
  return l;
}

async function launch(ex: LocalExecutor, over: Partial<LaunchRequest> = {}) {
  const req = request(over);
  const h = await ex.launch(req);
  launched.push({ ex, h });
  return { req, h };
}

const alive = (pid: number | null) => pid !== null && readProcStat(pid) !== null && readProcStat(pid)!.state !== 'Z';

describe('attempt launcher', () => {
  it('is the wrappers\' parent; the handle (written by the launcher) matches /proc; exits are reported through it', async () => {
    const launcher = newLauncher();
    // A long poll interval: only the launcher's exit report can make the watch prompt.
    const ex = createLocalExecutor({ launcher, pollMs: 600_000 });
    const go = path.join(root, `go-${seq + 1}`);
    const { req, h } = await launch(ex, { run: `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 4` });
    expect(launcher.pid()).not.toBeNull();
    const stat = readProcStat(h.pid!)!;
    expect(stat.ppid).toBe(launcher.pid());
    expect(stat.ppid).not.toBe(process.pid);
    expect(stat.startTime).toBe(h.pidStartTime);
    expect(stat.pgrp).toBe(h.pid); // detached: leads its own group and session
    expect(stat.session).toBe(h.pid);
    expect(readHandleFile(req.attemptDir)).toEqual(h);
    expect(existsSync(path.join(req.attemptDir, 'handle.json.tmp'))).toBe(false);
    expect(ex.isParentOf(h)).toBe(true);
    const result = ended(ex, h, 120_000);
    writeFileSync(go, '');
    expect(await result).toMatchObject({ state: 'exited', phase: 'run', exitCode: 4 });
    expect(ex.isParentOf(h)).toBe(false);
  });

  it('an attempt that ends at once is reported (the exit may arrive with the spawn answer)', async () => {
    const ex = createLocalExecutor({ launcher: newLauncher(), pollMs: 600_000 });
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => launch(ex, { run: `exit ${i % 3}` })));
    const results = await Promise.all(runs.map(({ h }) => ended(ex, h, 120_000)));
    results.forEach((r, i) => expect(r).toMatchObject({ state: 'exited', phase: 'run', exitCode: i % 3 }));
  });

  it('killed: its attempts keep running and their ends are still reported; the next launch starts a new launcher', async () => {
    const launcher = newLauncher();
    const ex = createLocalExecutor({ launcher, pollMs: 200 });
    const go = path.join(root, `go-${seq + 1}`);
    const { req, h } = await launch(ex, { run: `echo up; while [ ! -e '${go}' ]; do sleep 0.05; done; echo done; exit 6` });
    const first = launcher.pid()!;
    const result = ended(ex, h);
    await waitFor('the run to start', () => readFileSync(req.logPath, 'utf8').includes('up'));
    const died = new Promise<number[]>((r) => launcher.onDeath(r));
    process.kill(first, 'SIGKILL');
    expect(await died).toContain(h.pid);
    expect(launcher.pid()).toBeNull();
    expect(alive(h.pid!)).toBe(true);
    expect(await ex.probe(h)).toEqual({ state: 'running' });
    writeFileSync(go, '');
    expect(await result).toMatchObject({ state: 'exited', phase: 'run', exitCode: 6 });
    expect(readFileSync(req.logPath, 'utf8')).toBe('up\ndone\n');

    const next = await launch(ex, { run: 'exit 3' });
    expect(launcher.pid()).not.toBeNull();
    expect(launcher.pid()).not.toBe(first);
    expect(await ended(ex, next.h)).toMatchObject({ state: 'exited', exitCode: 3 });
  });

  it('a launcher that dies while asked to spawn: the answer follows the handle file (started ⇔ handle on disk)', async () => {
    for (let i = 0; i < 5; i++) {
      const launcher = newLauncher();
      const ex = createLocalExecutor({ launcher, pollMs: 200 });
      // Start the launcher, then kill it right after sending the next request.
      await launch(ex, { run: 'exit 0' });
      const go = path.join(root, `go-dies-${i}-${seq + 1}`);
      const req = request({ run: `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 5` });
      const p = ex.launch(req);
      process.kill(launcher.pid()!, 'SIGKILL');
      const outcome = await p.then(
        (h) => ({ ok: true as const, h }),
        (err: Error) => ({ ok: false as const, err }),
      );
      if (outcome.ok) {
        launched.push({ ex, h: outcome.h });
        expect(readHandleFile(req.attemptDir)).toEqual(outcome.h);
        expect(alive(outcome.h.pid!)).toBe(true);
        // Its parent is gone: the end must still be reported (through the exit record).
        const result = ended(ex, outcome.h, 120_000);
        writeFileSync(go, '');
        expect(await result).toMatchObject({ state: 'exited', phase: 'run', exitCode: 5 });
      } else {
        expect(outcome.err.message).toMatch(/launcher ended .* before answering/);
        expect(readHandleFile(req.attemptDir)).toBeNull();
      }
    }
  });

  it('publishes the exit record itself after the reap — renamed before the exit is reported, fsynced after: its wrappers start neither mv nor sync (strace)', async () => {
    const launcher = newLauncher();
    const ex = createLocalExecutor({ launcher, pollMs: 600_000 });
    await ended(ex, (await launch(ex, { run: 'exit 0' })).h); // starts the launcher
    expect(spawnSync('strace', ['-V']).error, 'strace is needed (scripts/ensure-services.sh installs it)').toBeUndefined();
    const out = path.join(root, `strace-${++seq}.txt`);
    // -f: the wrappers it starts from now on, and what they start; -y: paths of the fds.
    const tracer = spawn('strace', ['-f', '-y', '-e', 'trace=execve,fsync', '-o', out, '-p', String(launcher.pid())], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      let said = '';
      tracer.stderr.on('data', (b: Buffer) => (said += b.toString()));
      await waitFor('strace to attach', () => /attached/.test(said));
      const { req, h } = await launch(ex, { run: 'echo ran' });
      expect(await ended(ex, h, 120_000)).toMatchObject({ state: 'exited', phase: 'run', exitCode: 0 });
      const exit = path.join(req.attemptDir, 'exit');
      // Reported after the rename: the record is at its name, nothing left at the temporary one.
      expect(existsSync(exit)).toBe(true);
      expect(existsSync(`${exit}.tmp`)).toBe(false);
      await waitFor('the fsync of the record and its folder', () => {
        const t = readFileSync(out, 'utf8');
        return t.includes(`fsync(`) && t.includes(`<${exit}>) = 0`) && t.includes(`<${req.attemptDir}>) = 0`);
      });
      const t = readFileSync(out, 'utf8');
      expect(t).toMatch(/execve\("[^"]*bash"/); // the trace did follow the wrapper
      expect(t).not.toMatch(/execve\("[^"]*\/sync"/);
      expect(t).not.toMatch(/execve\("[^"]*\/mv"/);
      // The record first, then the folder that names it.
      expect(t.indexOf(`<${exit}>) = 0`)).toBeLessThan(t.indexOf(`<${req.attemptDir}>) = 0`));
    } finally {
      tracer.kill('SIGINT');
    }
  });

  it('the wrapper publishes its record itself (mv, sync) unless __jobdeck_syncer names its parent, which leaves it whole at exit.tmp — read as the record; setup and run never see the variable', () => {
    const dir = path.join(root, `wrapper-${++seq}`);
    mkdirSync(path.join(dir, 'work'), { recursive: true });
    writeFileSync(path.join(dir, 'wrapper.sh'), WRAPPER);
    writeFileSync(path.join(dir, 'run.sh'), 'echo "seen=${__jobdeck_syncer-unset}"\nexit 4\n');
    const calls = path.join(dir, 'calls');
    const fake = (name: string, real: string) => {
      const f = path.join(dir, `fake-${name}`);
      writeFileSync(f, `#!/bin/sh\necho "${name} $*" >> '${calls}'\n${real ? `exec ${real} "$@"\n` : ''}`);
      chmodSync(f, 0o755);
      return f;
    };
    const [fakeMv, fakeSync] = [fake('mv', '/bin/mv'), fake('sync', '')];
    const dead = spawnSync('/bin/true').pid!;
    const cases: Array<[string, Record<string, string>, boolean]> = [
      ['unset', {}, true],
      ['its parent', { __jobdeck_syncer: String(process.pid) }, false],
      // A live process that is not its parent: the launcher's pid reused, or a launcher that
      // exited and stays a zombie nobody reaps (kill -0 still succeeds on it).
      ['a live process that is not its parent', { __jobdeck_syncer: '1' }, true],
      ['a process that is gone', { __jobdeck_syncer: String(dead) }, true],
      ['not a pid', { __jobdeck_syncer: 'x' }, true],
    ];
    const base = { ...process.env };
    delete base.__jobdeck_syncer;
    const exit = path.join(dir, 'exit');
    for (const [what, env, publishes] of cases) {
      for (const f of [calls, exit, `${exit}.tmp`]) rmSync(f, { force: true });
      const log = path.join(dir, `${what}.log`);
      const r = spawnSync('/bin/bash', ['-p', path.join(dir, 'wrapper.sh'), dir, log, path.join(dir, 'work'), fakeMv, fakeSync, '0', '1'], { env: { ...base, ...env } });
      expect({ what, status: r.status }).toEqual({ what, status: 4 });
      expect({ what, log: readFileSync(log, 'utf8') }).toEqual({ what, log: 'seen=unset\n' });
      const made = existsSync(calls) ? readFileSync(calls, 'utf8') : '';
      expect({ what, made }).toEqual({ what, made: publishes ? `mv -f -- ${exit}.tmp ${exit}\nsync -- ${exit} ${dir}\n` : '' });
      expect({ what, at: existsSync(exit) ? 'exit' : existsSync(`${exit}.tmp`) ? 'exit.tmp' : 'none' }).toEqual({ what, at: publishes ? 'exit' : 'exit.tmp' });
      // Either way it is the record (a parent that died before its rename leaves it at exit.tmp).
      expect(readExitRecord(dir)).toMatchObject({ phase: 'run', exitCode: 4 });
    }
  });

  it('an exit.tmp is the record only when whole: one line of JSON, an object, ended by its newline', () => {
    const dir = path.join(root, `tmp-record-${++seq}`);
    mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, 'exit.tmp');
    const whole = '{"phase":"run","exitCode":0,"endedAtMs":1700000000000}\n';
    for (const [what, text, reads] of [
      ['whole', whole, true],
      ['cut before its newline', whole.slice(0, -1), false],
      ['cut inside', whole.slice(0, 20), false],
      ['the times builtin\'s output the wrapper puts there first', '0m0.001s 0m0.002s\n0m0.010s 0m0.003s\n', false],
      ['two lines', whole + whole, false],
      ['not an object', '[1]\n', false],
      ['empty', '', false],
    ] as Array<[string, string, boolean]>) {
      writeFileSync(tmp, text);
      expect({ what, rec: readExitRecord(dir) }).toEqual({ what, rec: reads ? { phase: 'run', exitCode: 0, endedAtMs: 1700000000000 } : null });
    }
    // The name itself wins over a temporary one left beside it.
    writeFileSync(tmp, whole);
    writeFileSync(path.join(dir, 'exit'), '{"phase":"setup","exitCode":2,"endedAtMs":1700000000001}\n');
    expect(readExitRecord(dir)).toMatchObject({ phase: 'setup', exitCode: 2 });
  });

  it('a program that cannot start is a launch error with its code', async () => {
    const launcher = newLauncher();
    const dir = path.join(root, `bad-${++seq}`);
    await expect(
      launcher.spawn({ file: path.join(dir, 'no-such-program'), args: [], cwd: root, env: {}, handleFile: path.join(root, `h-${seq}.json`), handle: {} }, () => undefined),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('JOBDECK_LAUNCHER other than 0 or 1 is refused naming the variable', () => {
    const before = process.env.JOBDECK_LAUNCHER;
    process.env.JOBDECK_LAUNCHER = 'yes';
    try {
      expect(() => createLocalExecutor()).toThrow('JOBDECK_LAUNCHER: expected 0 or 1, got "yes"');
    } finally {
      if (before === undefined) delete process.env.JOBDECK_LAUNCHER;
      else process.env.JOBDECK_LAUNCHER = before;
    }
  });

  it('launcher: null spawns from this process (JOBDECK_LAUNCHER=0)', async () => {
    const ex = createLocalExecutor({ launcher: null, pollMs: 600_000 });
    const { req, h } = await launch(ex, { run: 'echo up; sleep 30' });
    expect(readProcStat(h.pid!)!.ppid).toBe(process.pid);
    // Cancel once the run is running: a TERM before the wrapper set its trap kills it unrecorded.
    await waitFor('the run to start', () => readFileSync(req.logPath, 'utf8').includes('up'));
    await ex.cancel(h, { graceMs: 100 });
    expect(await ended(ex, h, 120_000)).toMatchObject({ state: 'exited', exitCode: 143 });
  });
});
