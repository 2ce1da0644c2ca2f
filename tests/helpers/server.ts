import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVER_NODE_FLAGS } from '../../lib/server/v8-flags';

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
  /** Stops the process if running and removes the data folder unless `keepHome`. */
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
  /** Give up waiting for "listening" after this many ms (default 60 000). */
  timeoutMs?: number;
}

/**
 * Starts `node <SERVER_NODE_FLAGS> --import tsx server.ts` (as `npm start` does) on a free port with its own JOBDECK_HOME and token, and
 * waits until it listens. Needs a built Next.js app (`npm test` builds it first).
 * @throws when the server exits or does not listen in time (its output is in the message).
 */
export async function startServerProcess(opts: ServerOptions = {}): Promise<ServerProcess> {
  const home = opts.home ?? mkdtempSync(path.join(os.tmpdir(), 'jobdeck-test-'));
  const token = opts.token ?? `jd_test_${randomBytes(16).toString('hex')}`;
  const proc = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      VITEST: '',
      JOBDECK_HOME: home,
      JOBDECK_TOKEN: token,
      PORT: String(opts.port ?? 0),
      HOST: '127.0.0.1',
      JOBDECK_LOG_PRETTY: '0',
      JOBDECK_LOG_LEVEL: process.env.JOBDECK_TEST_SERVER_LOG_LEVEL || 'info',
      NODE_ENV: 'production',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), opts.timeoutMs ?? 60_000);
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
      if (!o.keepHome) rmSync(home, { recursive: true, force: true });
    },
  };
  return sp;
}
