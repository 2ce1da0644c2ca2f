/**
 * The log pump under the real wrapper (docs/design.md §8 "A full disk and the log"), run as the
 * executors run it (`bash -p wrapper.sh …`), without a server: stdout and stderr keep their
 * order through the one pipe and the log holds exactly the task's bytes; a cancel's SIGTERM to
 * the process group leaves the pump draining the task's last words; a process the task leaves
 * behind holding the pipe neither keeps the attempt from ending nor loses its later output.
 * (A full disk: tests/integration/monitor-disk-full.test.ts.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WRAPPER } from '../../lib/executors/wrapper';
import { readExitRecord } from '../../lib/executors/attempt-record';
import { waitFor } from './monitor-helpers';

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-pump-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** An attempt folder with `run` as run.sh, and the wrapper's arguments for it. */
function attempt(run: string): { dir: string; log: string; args: string[] } {
  const dir = path.join(root, `a${n++}`);
  mkdirSync(path.join(dir, 'work'), { recursive: true });
  writeFileSync(path.join(dir, 'wrapper.sh'), WRAPPER);
  writeFileSync(path.join(dir, 'run.sh'), run);
  const log = path.join(dir, 'run.log');
  return { dir, log, args: ['-p', path.join(dir, 'wrapper.sh'), dir, log, path.join(dir, 'work'), '/bin/mv', '', '0', '1'] };
}

describe('the log pump', () => {
  it('keeps stdout and stderr in the order written, byte for byte, and counts nothing lost', () => {
    const a = attempt('for i in $(seq 1 2000); do echo "out $i"; echo "err $i" >&2; done\nprintf "\\x00\\xff tail without newline"\n');
    expect(spawnSync('/bin/bash', a.args).status).toBe(0);
    const want = Buffer.concat([Buffer.from(Array.from({ length: 2000 }, (_, k) => `out ${k + 1}\nerr ${k + 1}\n`).join('')), Buffer.from([0, 0xff]), Buffer.from(' tail without newline')]);
    expect(readFileSync(a.log).equals(want)).toBe(true);
    const rec = readExitRecord(a.dir);
    expect(rec).toMatchObject({ phase: 'run', exitCode: 0 });
    expect(rec && 'logLostBytes' in rec).toBe(false);
  });

  it('drains what the task writes after a cancel signals its process group', async () => {
    const gate = path.join(root, 'cancel-gate');
    const a = attempt(`trap 'echo "stopped at $i"; exit 143' TERM\ni=0\nwhile :; do i=$((i+1)); echo "n $i"; [ $i = 50 ] && : > ${gate}; sleep 0.01; done\n`);
    const w = spawn('/bin/bash', a.args, { detached: true, stdio: 'ignore' });
    const ended = new Promise<number | null>((r) => w.on('exit', (code) => r(code)));
    await waitFor(async () => existsSync(gate), 'the task to print 50 lines');
    process.kill(-w.pid!, 'SIGTERM');
    expect(await ended).toBe(143);
    const log = readFileSync(a.log, 'utf8');
    const last = /stopped at (\d+)\n$/.exec(log);
    expect(last).not.toBeNull();
    // Every line the task printed, in order, up to its last words.
    const lines = log.split('\n').filter((l) => l.startsWith('n '));
    expect(lines).toEqual(Array.from({ length: Number(last![1]) }, (_, k) => `n ${k + 1}`));
    expect(readExitRecord(a.dir)).toMatchObject({ exitCode: 143 });
  });

  it('lets the attempt end while a leftover holds the pipe, and keeps what the leftover writes later', async () => {
    const gate = path.join(root, 'leftover-gate');
    const a = attempt(`( while [ ! -e ${gate} ]; do sleep 0.05; done; echo "late words" ) &\necho started\n`);
    expect(spawnSync('/bin/bash', a.args).status).toBe(0);
    expect(readExitRecord(a.dir)).toMatchObject({ phase: 'run', exitCode: 0 });
    expect(readFileSync(a.log, 'utf8')).toBe('started\n');
    writeFileSync(gate, '');
    await waitFor(async () => readFileSync(a.log, 'utf8') === 'started\nlate words\n', 'the leftover\'s line in the log');
  });
});
