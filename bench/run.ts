/**
 * jobdeck benchmarks — `npm run bench` (= `node --import tsx bench/run.ts`).
 *
 *   npm run bench                          every measure, full sizes (< 10 min on 2 cores)
 *   npm run bench -- --quick               smaller sizes, a smoke run
 *   npm run bench -- --only=latency,list   a selection (names below)
 *   npm run bench -- --profile             servers run with --cpu-prof; hottest functions in the JSON
 *   npm run bench -- --no-build            use the existing build as is
 *   npm run bench -- --full-build          plain `next build` (with Next's type check) when rebuilding
 *   npm run bench -- --keep-logs           copy each server's log to bench/results/<server>.log
 *   npm run bench -- --max-minutes=60      give up (cleaning up) after this long (default 60: a hang guard)
 *   npm run bench -- --scale-jobs=1000000  jobs the scale measure seeds (default 100,000)
 *   npm run bench -- --grep-bytes=2000000000  bytes of logs the grep measure searches (default 200 MB)
 *   npm run bench -- --pg-url=postgresql://…  PostgreSQL admin URL (default JOBDECK_TEST_PG_URL or the local one)
 *   npm run bench -- --server-env=JOBDECK_PGLITE_WORKER=0   extra environment for every server (repeatable;
 *                                          the servers otherwise get no JOBDECK_* of this shell)
 *
 * Measures: idle, latency, concurrent, concurrent5000, logs, submit, list, scale, grep, compress, recovery, admission, webhooks, replicas, browserlog, cgroups, usage (see bench/README.md). Each prints
 * its table rows and writes bench/results/<name>.json; a summary table and
 * bench/results/summary.json come last. Every server, temp folder and database the run creates
 * is removed at the end (also on an error or Ctrl-C). Exit code 1 when a measure could not run;
 * missed targets are reported, not failed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Table from 'cli-table3';
import pc from 'picocolors';
import { admission } from './admission';
import { waitSettled } from './lib/settle';
import { browserLog } from './browser-log';
import { cgroups } from './cgroups';
import { usage as usageRounds } from './usage';
import { compress } from './compress';
import { concurrent, concurrent5000 } from './concurrent';
import { latency } from './latency';
import { replicas } from './replicas';
import { scale } from './scale';
import { grep } from './grep';
import { idle } from './idle';
import { list } from './list';
import { logs } from './logs';
import { recovery } from './recovery';
import { submit } from './submit';
import { webhooks } from './webhooks';
import { ensureBuild } from './lib/build';
import { cleanupMark, runCleanups } from './lib/cleanup';
import type { BenchContext, Measure, MeasureResult, Row } from './lib/context';
import { RESULTS_DIR, ROOT, setKeepLogs, setServerEnv } from './lib/server';

const MEASURES: Measure[] = [idle, latency, concurrent, concurrent5000, logs, submit, list, scale, grep, compress, recovery, admission, webhooks, replicas, browserLog, cgroups, usageRounds];

interface Args {
  only: string[] | null;
  quick: boolean;
  profile: boolean;
  build: boolean;
  fullBuild: boolean;
  keepLogs: boolean;
  maxMinutes: number;
  pgUrl: string;
  /** `--scale-jobs=N`: jobs the scale measure seeds. */
  scaleJobs?: number;
  /** `--grep-bytes=N`: bytes of logs the grep measure writes. */
  grepBytes?: number;
  /** `--server-env=NAME=VALUE`: extra environment of every bench server. */
  serverEnv: Record<string, string>;
}

function usage(): string {
  return `usage: npm run bench -- [--quick] [--only=${MEASURES.map((m) => m.name).join(',')}] [--profile] [--no-build] [--full-build] [--keep-logs] [--max-minutes=60] [--pg-url=URL] [--scale-jobs=N] [--grep-bytes=N] [--server-env=NAME=VALUE ...]`;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    only: null,
    quick: false,
    profile: false,
    build: true,
    fullBuild: false,
    keepLogs: false,
    // A hang guard, not a target: a full run takes 15–45 minutes on 2 cores by the host's speed
    // (bench/README.md "Results"): a lower default would stop a slower host's run before it is done.
    maxMinutes: 60,
    pgUrl: process.env.JOBDECK_TEST_PG_URL || 'postgresql://jobdeck:jobdeck@127.0.0.1:5432/jobdeck',
    serverEnv: {},
  };
  for (const arg of argv) {
    const [k, v] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (k === '--quick') a.quick = true;
    else if (k === '--profile') a.profile = true;
    else if (k === '--no-build') a.build = false;
    else if (k === '--full-build') a.fullBuild = true;
    else if (k === '--keep-logs') a.keepLogs = true;
    else if (k === '--max-minutes' && v && Number(v) > 0) a.maxMinutes = Number(v);
    else if (k === '--pg-url' && v) a.pgUrl = v;
    else if (k === '--scale-jobs') {
      if (!v || !/^[0-9]+$/.test(v) || Number(v) < 100 || Number(v) > 10_000_000) throw new Error(`--scale-jobs: expected a number of jobs from 100 to 10000000, got "${arg}"\n${usage()}`);
      a.scaleJobs = Number(v);
    } else if (k === '--grep-bytes') {
      if (!v || !/^[0-9]+$/.test(v) || Number(v) < 1e6 || Number(v) > 1e11) throw new Error(`--grep-bytes: expected bytes from 1000000 to 100000000000, got "${arg}"\n${usage()}`);
      a.grepBytes = Number(v);
    }
    else if (k === '--server-env') {
      if (!v || !/^[A-Za-z_][A-Za-z0-9_]*=/.test(v)) throw new Error(`--server-env: expected NAME=VALUE (e.g. --server-env=JOBDECK_PGLITE_WORKER=1), got "${arg}"\n${usage()}`);
      a.serverEnv[v.slice(0, v.indexOf('='))] = v.slice(v.indexOf('=') + 1);
    }
    else if (k === '--only' && v) {
      a.only = v.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = a.only.filter((n) => !MEASURES.some((m) => m.name === n));
      if (unknown.length) throw new Error(`--only: unknown measure(s) ${unknown.join(', ')}\n${usage()}`);
    } else if (k === '--help' || k === '-h') {
      console.log(usage());
      process.exit(0);
    } else throw new Error(`unknown argument "${arg}"\n${usage()}`);
  }
  return a;
}

function machine(): Record<string, unknown> {
  let commit = 'unknown';
  let dirty = false;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  } catch {
    /* not a git checkout */
  }
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memGB: Math.round(os.totalmem() / 1e9),
    node: process.version,
    kernel: os.release(),
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    commit,
    dirty,
  };
}

function mark(pass: boolean | null | undefined): string {
  if (pass === true) return pc.green('met');
  if (pass === false) return pc.red('MISSED');
  return '';
}

function printRows(title: string, rows: Row[]): void {
  const t = new Table({ head: [title, 'value', 'target', ''], style: { head: [], border: [] } });
  for (const r of rows) t.push([r.metric, r.value, r.target ?? '', mark(r.pass)]);
  console.log(t.toString());
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const log = (msg: string) => process.stderr.write(`${pc.dim(new Date().toISOString().slice(11, 19))} ${msg}\n`);
  const ctx: BenchContext = { quick: args.quick, profile: args.profile, pgUrl: args.pgUrl, scaleJobs: args.scaleJobs, grepBytes: args.grepBytes, log };
  setKeepLogs(args.keepLogs);
  setServerEnv(args.serverEnv);
  // The bench stops by itself whatever happens: past the budget, clean up and exit 1.
  setTimeout(() => {
    console.error(pc.red(`bench: still running after ${args.maxMinutes} min — giving up`));
    void runCleanups().finally(() => process.exit(1));
  }, args.maxMinutes * 60_000).unref();
  const selected = MEASURES.filter((m) => !args.only || args.only.includes(m.name));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const startedAt = new Date().toISOString();
  const t0 = Date.now();
  const env = machine();
  if (Object.keys(args.serverEnv).length) env.serverEnv = args.serverEnv;
  log(`jobdeck bench${args.quick ? ' (quick)' : ''}: ${selected.map((m) => m.name).join(', ')} on ${env.cpus}× ${env.cpuModel}, load ${(env.loadavg as number[]).join(' ')}${Object.keys(args.serverEnv).length ? `, server env ${Object.entries(args.serverEnv).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`);

  let build: ReturnType<typeof ensureBuild> | null = null;
  if (args.build) build = ensureBuild({ full: args.fullBuild, log });

  const summary: { name: string; title: string; rows: Row[]; error?: string; durationMs: number }[] = [];
  let failed = 0;
  for (const m of selected) {
    const markPos = cleanupMark();
    // Each measure starts on a settled machine: what the one before left (a cancel wave) is done.
    const settled = await waitSettled();
    const mt0 = Date.now();
    const loadBefore = os.loadavg().map((x) => Math.round(x * 100) / 100);
    const busyBefore = `${Math.round(settled.busy * 100)} % busy${settled.waitedMs > 2500 ? ` after ${(settled.waitedMs / 1000).toFixed(0)} s` : ''}${settled.settled ? '' : ' (never settled)'}`;
    let result: MeasureResult | null = null;
    let error: string | undefined;
    log(`── ${m.title} ──`);
    try {
      result = await m.run(ctx);
    } catch (err) {
      error = (err as Error).stack ?? String(err);
      failed++;
    } finally {
      await runCleanups(markPos);
    }
    const durationMs = Date.now() - mt0;
    const rows: Row[] = result ? result.rows : [{ metric: 'error', value: (error ?? '').split('\n')[0].slice(0, 120), pass: false }];
    printRows(`${m.title} (${(durationMs / 1000).toFixed(1)} s, load ${loadBefore[0]}, ${busyBefore})`, rows);
    for (const n of result?.notes ?? []) console.log(pc.yellow(`  note: ${n}`));
    if (error) console.log(pc.red(error.split('\n').slice(0, 12).join('\n')));
    writeFileSync(
      path.join(RESULTS_DIR, `${m.name}.json`),
      JSON.stringify({ measure: m.name, title: m.title, quick: args.quick, startedAt: new Date(mt0).toISOString(), durationMs, machine: env, loadavg: { before: loadBefore, after: os.loadavg().map((x) => Math.round(x * 100) / 100) }, settled, rows, notes: result?.notes ?? [], error, data: result?.data ?? null }, null, 2) + '\n',
    );
    summary.push({ name: m.name, title: m.title, rows, error, durationMs });
  }

  const t = new Table({ head: ['measure', 'metric', 'value', 'target', ''], style: { head: [], border: [] } });
  for (const s of summary) for (const r of s.rows) t.push([s.name, r.metric, r.value, r.target ?? '', mark(r.pass)]);
  console.log(`\n${pc.bold('jobdeck bench summary')} — ${((Date.now() - t0) / 1000).toFixed(0)} s, ${env.cpus}× ${env.cpuModel}, node ${env.node}, commit ${env.commit}${env.dirty ? '+dirty' : ''}${args.quick ? ', QUICK sizes' : ''}`);
  console.log(t.toString());
  writeFileSync(
    path.join(RESULTS_DIR, 'summary.json'),
    JSON.stringify({ startedAt, durationMs: Date.now() - t0, quick: args.quick, machine: { ...env, loadavgEnd: os.loadavg().map((x) => Math.round(x * 100) / 100) }, build, measures: summary }, null, 2) + '\n',
  );
  return failed ? 1 : 0;
}

let exiting = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (exiting) return;
    exiting = true;
    console.error(`\n${sig}: cleaning up…`);
    void runCleanups().finally(() => process.exit(130));
  });
}

main().then(
  async (code) => {
    await runCleanups();
    process.exit(code);
  },
  async (err: unknown) => {
    console.error(pc.red((err as Error).stack ?? String(err)));
    await runCleanups();
    process.exit(1);
  },
);
