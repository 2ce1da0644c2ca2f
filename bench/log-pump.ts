/**
 * What the log pump costs (docs/design.md §8 "A full disk and the log"), on this machine, in one
 * run: `node --import tsx bench/log-pump.ts [attempts=200]`.
 *
 * - launch cost: `attempts` wrappers run one after another with `run: echo hello`, alternating
 *   the wrapper as it is (through the pump) and the same text without the pump's start (the log
 *   written directly, as before the pump), each timed from spawn to exit; p50 / p95 / mean.
 * - end cost, from the same runs: the end time the wrapper put in its exit record (`endedAtMs`,
 *   taken as the task ended) → its exit seen here — what every attempt's exit → status latency
 *   pays before the server can hear of the end (the drain of the pump, the record's rename and sync).
 * - resident memory of one pump (VmRSS, RssAnon of /proc/<pid>/status) while its task runs.
 * - throughput: 200 MB written by the task into the log, with and without the pump.
 * Prints a JSON object; bench/README.md records the runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PUMP_START } from '../lib/executors/log-pump';
import { WRAPPER } from '../lib/executors/wrapper';

const WITHOUT = WRAPPER.replace(PUMP_START, '');
if (WITHOUT === WRAPPER) throw new Error('the wrapper has no pump block to leave out');

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-bench-pump-'));
let seq = 0;

/** A fresh attempt folder with `run` as its run.sh; the wrapper text written beside it; arguments as the local executor gives them (mv and sync included). */
function attempt(text: string, run: string): { dir: string; args: string[] } {
  const dir = path.join(root, `a${seq++}`);
  mkdirSync(path.join(dir, 'work'), { recursive: true });
  writeFileSync(path.join(dir, 'wrapper.sh'), text);
  writeFileSync(path.join(dir, 'run.sh'), run);
  return { dir, args: ['-p', path.join(dir, 'wrapper.sh'), dir, path.join(dir, 'run.log'), path.join(dir, 'work'), '/bin/mv', '/bin/sync', '0', '1'] };
}

/** End cost samples (ms) of the last timed() calls, by wrapper text. */
const ends = new Map<string, number[]>();

/**
 * Runs one wrapper to its end; milliseconds from spawn to exit. Also notes the end cost: the exit
 * record's `endedAtMs` (wall clock, whole ms) → the exit seen here (wall clock).
 */
function timed(text: string, run: string): number {
  const a = attempt(text, run);
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/bin/bash', a.args, { stdio: 'ignore' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const seen = performance.timeOrigin + performance.now();
  if (r.status !== 0) throw new Error(`wrapper exited ${r.status}`);
  const ended = (JSON.parse(readFileSync(path.join(a.dir, 'exit'), 'utf8')) as { endedAtMs: number }).endedAtMs;
  ends.set(text, [...(ends.get(text) ?? []), seen - ended]);
  rmSync(a.dir, { recursive: true, force: true });
  return ms;
}

function stats(xs: number[]): { p50: number; p95: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50: r(q(0.5)), p95: r(q(0.95)), mean: r(s.reduce((a, b) => a + b, 0) / s.length) };
}

/** The pump's memory while a task runs: it waits on a gate file, read, then released. */
async function pumpMemory(): Promise<{ vmRssKb: number; rssAnonKb: number }> {
  const gate = path.join(root, 'gate');
  const a = attempt(WRAPPER, `echo started; while [ ! -e ${gate} ]; do sleep 0.05; done\n`);
  const w = spawn('/bin/bash', a.args, { stdio: 'ignore' });
  const ended = new Promise((r) => w.on('exit', r));
  try {
    for (;;) {
      const log = path.join(a.dir, 'run.log');
      if (existsSync(log) && readFileSync(log, 'utf8').includes('started')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const kids = readFileSync(`/proc/${w.pid}/task/${w.pid}/children`, 'utf8').trim().split(/\s+/);
    for (const k of kids) {
      const status = readFileSync(`/proc/${k}/status`, 'utf8');
      if (!/^Name:\s+perl$/m.test(status)) continue;
      const kb = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
      return { vmRssKb: kb('VmRSS'), rssAnonKb: kb('RssAnon') };
    }
    throw new Error('no pump among the wrapper\'s children');
  } finally {
    writeFileSync(gate, '');
    await ended;
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 200);
  const withPump: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < n; i++) {
    // Alternating, so both see the same machine.
    if (i % 2 === 0) withPump.push(timed(WRAPPER, 'echo hello\n'));
    else without.push(timed(WITHOUT, 'echo hello\n'));
    if (i % 2 === 0) without.push(timed(WITHOUT, 'echo hello\n'));
    else withPump.push(timed(WRAPPER, 'echo hello\n'));
  }
  const big = 'head -c 200000000 /dev/zero | tr "\\0" "x" | fold -w 99\n';
  const result = {
    at: new Date().toISOString(),
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    attempts: n,
    launchMs: { withPump: stats(withPump), without: stats(without) },
    endMs: { withPump: stats(ends.get(WRAPPER) ?? []), without: stats(ends.get(WITHOUT) ?? []) },
    pump: await pumpMemory(),
    throughput200MB: { withPumpMs: Math.round(timed(WRAPPER, big)), withoutMs: Math.round(timed(WITHOUT, big)) },
  };
  console.log(JSON.stringify(result, null, 2));
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(root, { recursive: true, force: true }));
