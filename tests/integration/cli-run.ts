/**
 * Runs the real `jobdeck` command (bin/jobdeck.mjs) as a child process against a server from
 * tests/helpers/server.ts, for the CLI integration suites.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, type ServerProcess } from '../helpers/server';

export const BIN = path.join(ROOT, 'bin', 'jobdeck.mjs');

/** A finished CLI run. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time of the run (ms). */
  ms: number;
}

/** A CLI process still running (for Ctrl-C and server-restart tests). */
export interface CliProcess {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout+stderr match `re` (rejects after timeoutMs or when the process ends first). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<CliRun>;
}

/** Options of a run. */
export interface CliOptions {
  /** Extra/overriding environment. */
  env?: Record<string, string>;
  /** Do not add `--url` (to test JOBDECK_URL and defaults). */
  noUrl?: boolean;
  cwd?: string;
  /** Kill the run after this many ms (default 240 000: a hang guard). */
  timeoutMs?: number;
  /** Written to stdin, then closed. */
  input?: string;
}

/** Starts `jobdeck ARGS --url <server>` with JOBDECK_TOKEN = the server's token. */
export function startCli(server: ServerProcess | null, args: string[], opts: CliOptions = {}): CliProcess {
  const t0 = Date.now();
  const full = server && !opts.noUrl ? [...args, '--url', server.url] : args;
  const proc = spawn(process.execPath, [BIN, ...full], {
    cwd: opts.cwd ?? ROOT,
    env: {
      ...process.env,
      JOBDECK_URL: '',
      JOBDECK_TOKEN: server?.token ?? '',
      JOBDECK_HOME: server?.home ?? '/nonexistent-jobdeck-home',
      NO_COLOR: '1',
      FORCE_COLOR: '',
      ...opts.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const watchers: (() => void)[] = [];
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of [...watchers]) w();
  });
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of [...watchers]) w();
  });
  if (opts.input !== undefined) proc.stdin!.end(opts.input);
  else proc.stdin!.end();
  const killer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 240_000);
  const done = new Promise<CliRun>((resolve) => {
    proc.once('close', (code, signal) => {
      clearTimeout(killer);
      for (const w of [...watchers]) w();
      resolve({ code, signal, stdout: out, stderr: err, ms: Date.now() - t0 });
    });
  });
  let exited = false;
  void done.then(() => (exited = true));
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    done,
    waitFor(re, timeoutMs = 120_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (re.test(out + err)) {
            cleanup();
            resolve();
          } else if (exited) {
            cleanup();
            reject(new Error(`jobdeck ended before ${re}:\nstdout:\n${out}\nstderr:\n${err}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}:\nstdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          const i = watchers.indexOf(check);
          if (i >= 0) watchers.splice(i, 1);
        };
        watchers.push(check);
        check();
      });
    },
  };
}

/** Runs `jobdeck ARGS` to the end. */
export function runCli(server: ServerProcess | null, args: string[], opts: CliOptions = {}): Promise<CliRun> {
  return startCli(server, args, opts).done;
}

/** Explains a run in an assertion message. */
export function show(r: CliRun): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

const TERMINAL = new Set(['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);

/** Polls GET /api/jobs/:id until the job is terminal; answers it. */
export async function waitTerminal(server: ServerProcess, id: number, timeoutMs = 120_000): Promise<{ status: string; [k: string]: unknown }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = (await (await server.api(`/api/jobs/${id}`)).json()) as { status: string };
    if (TERMINAL.has(job.status)) return job;
    if (Date.now() > until) throw new Error(`job ${id} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls until the job's status satisfies `pred`. */
export async function waitStatus(server: ServerProcess, id: number, pred: (s: string) => boolean, timeoutMs = 120_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = (await (await server.api(`/api/jobs/${id}`)).json()) as { status: string };
    if (pred(job.status)) return job.status;
    if (Date.now() > until) throw new Error(`job ${id} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Polls `GET /api/jobs/:id` until `pred` holds for the job's JSON (every 100 ms, up to
 * `timeoutMs`). Cheaper than polling through the CLI, whose every start costs a second of CPU.
 */
export async function waitJob(server: ServerProcess, id: number, pred: (job: Record<string, unknown>) => boolean, timeoutMs = 120_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = (await (await server.api(`/api/jobs/${id}`)).json()) as Record<string, unknown>;
    if (pred(job)) return job;
    if (Date.now() > until) throw new Error(`job ${id} did not reach the awaited state after ${timeoutMs} ms: ${JSON.stringify(job).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The job id from "Job submitted, ID: N". */
export function submittedId(text: string): number {
  const m = /Job submitted, ID: (\d+)/.exec(text);
  if (!m) throw new Error(`no "Job submitted, ID: N" in:\n${text}`);
  return Number(m[1]);
}
