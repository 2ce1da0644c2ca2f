import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVER_NODE_FLAGS } from '../../lib/server/v8-flags';
import { copyPgliteTemplate } from './db-templates';
import { killJobsUnder } from './leftover-jobs';

/** util-linux's setpriv (Debian: always present), for the parent-death signal of test servers. */
const SETPRIV = '/usr/bin/setpriv';

/** The project root (where server.ts is). */
export const ROOT = path.resolve(__dirname, '..', '..');

/** A jobdeck server running as its own process, for tests against the real thing. */
export interface ServerProcess {
  url: string;
  /** The admin token this server was started with (send as `Authorization: Bearer …`). */
  token: string;
  /** Data folder (JOBDECK_HOME). */
  home: string;
  proc: ChildProcess;
  /** Everything the server printed so far (JSON log lines). */
  output(): string;
  /** fetch() against the server with the token set. */
  api(pathname: string, init?: RequestInit): Promise<Response>;
  /** SIGTERM and wait for exit (running jobs keep running). */
  stop(): Promise<void>;
  /** SIGKILL (kill -9), as a crash. */
  kill9(): Promise<void>;
  /**
   * Stops the process if running and removes the data folder unless `keepHome` — then also kills
   * the jobs still running from the folder it removes (tests/helpers/leftover-jobs.ts).
   */
  dispose(opts?: { keepHome?: boolean }): Promise<void>;
}

/** Options of startServerProcess. */
export interface ServerOptions {
  /** Reuse a data folder (to restart a server on the same data). */
  home?: string;
  token?: string;
  /** Extra environment (DATABASE_URL for PostgreSQL, monitor intervals…). */
  env?: Record<string, string>;
  port?: number;
  /** Give up waiting for "listening" after this many ms (default 300 000: a hang guard; a busy machine starts servers slowly). */
  timeoutMs?: number;
  /**
   * On PGlite, a data folder without a database gets a copy of the migrated template
   * (tests/helpers/db-templates.ts) instead of an initdb at the server's start (default true);
   * false for a test of what a first start on an empty folder does.
   */
  pgliteTemplate?: boolean;
}

/**
 * Starts `node <SERVER_NODE_FLAGS> bin/server.mjs` (as `npm start` does: the server's bundle when fresh) on a free port with its own JOBDECK_HOME and token, and
 * waits until it listens. Needs a built Next.js app (vitest's global setup builds it when stale).
 * @throws when the server exits or does not listen in time (its output is in the message).
 */
export async function startServerProcess(opts: ServerOptions = {}): Promise<ServerProcess> {
  const home = opts.home ?? mkdtempSync(path.join(os.tmpdir(), 'jobdeck-test-'));
  const token = opts.token ?? `jd_test_${randomBytes(16).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VITEST: '',
    JOBDECK_HOME: home,
    JOBDECK_TOKEN: token,
    PORT: String(opts.port ?? 0),
    HOST: '127.0.0.1',
    JOBDECK_LOG_PRETTY: '0',
    JOBDECK_LOG_LEVEL: process.env.JOBDECK_TEST_SERVER_LOG_LEVEL || 'info',
    NODE_ENV: 'production',
    // Restarts at once (the default waits 10 s): a test that wants the backoff gives its own.
    JOBDECK_RESTART_BACKOFF_MS: '0',
    ...opts.env,
  };
  const dataHome = env.JOBDECK_HOME || home;
  const dbDir = path.join(dataHome, 'db');
  if (opts.pgliteTemplate !== false && !env.DATABASE_URL && !existsSync(dbDir)) {
    // A data folder that does not exist yet is made as the server makes it: private (0700).
    if (!existsSync(dataHome)) mkdirSync(dataHome, { recursive: true, mode: 0o700 });
    await copyPgliteTemplate(dbDir);
  }
  // The server dies with the test process that started it (a worker ended at a timeout would
  // otherwise leave it running, costing the next files their CPU): setpriv sets the parent-death
  // signal and execs node, so proc.pid is the server's own pid.
  const argv = [...SERVER_NODE_FLAGS, 'bin/server.mjs'];
  const proc = existsSync(SETPRIV)
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', process.execPath, ...argv], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), opts.timeoutMs ?? 300_000);
    const check = () => {
      const m = /jobdeck listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });

  let running = true;
  void exited.then(() => (running = false));
  const waitExit = async () => {
    if (running) await exited;
  };
  const sp: ServerProcess = {
    url,
    token,
    home,
    proc,
    output: () => out,
    api: (pathname, init = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      return fetch(new URL(pathname, url), { ...init, headers });
    },
    stop: async () => {
      if (running) proc.kill('SIGTERM');
      await waitExit();
    },
    kill9: async () => {
      if (running) proc.kill('SIGKILL');
      await waitExit();
    },
    dispose: async (o = {}) => {
      if (running) proc.kill('SIGKILL');
      await waitExit();
      if (o.keepHome) return;
      killJobsUnder(home);
      rmSync(home, { recursive: true, force: true });
    },
  };
  return sp;
}
