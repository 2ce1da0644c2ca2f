/**
 * The bench's server launcher: `node [--cpu-prof] bin/server.mjs` (as `npm start`; `--import tsx
 * server.ts` with a preload) on a free loopback
 * port with its own JOBDECK_HOME and JOBDECK_TOKEN, logs to a file (JSON lines at info level, as
 * in production), the process id for /proc sampling, and kill -9 for the recovery measure.
 * Every server registers its own cleanup (lib/cleanup.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, createWriteStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { RESULTS_DIR, ROOT } from './root';
import { onCleanup, tempDir } from './cleanup';
import { connectInspector, inspectorUrl, type Inspector } from './inspector';
import { rssBytes } from './proc';
import { summarizeProfile, type ProfileSummary } from './profile';
import { nowMs } from './util';
import { SERVER_NODE_FLAGS } from '../../lib/server/v8-flags';
import type { MonitorState, ProcessMemory } from '../../lib/monitor/state';

export { ROOT, RESULTS_DIR };

/** Options of startBenchServer(). */
export interface BenchServerOptions {
  /** Names the server in messages, logs and profile files ("latency-fast"). */
  label: string;
  /** Reuse a data folder (restart on the same data); default: a fresh temp folder. */
  home?: string;
  token?: string;
  /** Extra environment: DATABASE_URL, JOBDECK_CAPACITY_CHECK, monitor knobs… */
  env?: Record<string, string>;
  /**
   * Start with `--inspect=127.0.0.1:0` so that profileWindow() can record CPU profiles of chosen
   * phases (without it, profileWindow() just runs the phase).
   */
  profile?: boolean;
  /**
   * Start with `--cpu-prof` (the whole life of the process, start-up included); the profile is
   * written when the server stops (SIGTERM) and lifeProfile() summarises it.
   */
  lifeProfile?: boolean;
  /** Give up waiting for "listening" after this many ms (default 60 000). */
  timeoutMs?: number;
  /** Extra modules loaded with `--import` after tsx (paths relative to the project root). */
  preload?: string[];
}

/** A running bench server. */
export interface BenchServer {
  label: string;
  url: string;
  /** ws://… base URL. */
  wsUrl: string;
  token: string;
  home: string;
  pid: number;
  proc: ChildProcess;
  /** ms from spawn to the "listening" log line. */
  startupMs: number;
  /** Wall-clock ms when the process was spawned. */
  spawnedAtMs: number;
  logFile: string;
  /** fetch() against the server with the bearer token. */
  api(pathname: string, init?: RequestInit): Promise<Response>;
  /** JSON of a 2xx answer. @throws Error with status and body otherwise. */
  json<T>(pathname: string, init?: RequestInit): Promise<T>;
  /** SIGTERM and wait for the exit (running jobs keep running); writes the CPU profile if any. */
  stop(): Promise<void>;
  /** SIGKILL (a crash). */
  kill9(): Promise<void>;
  /** True while the process runs. */
  running(): boolean;
  /**
   * Runs `fn`; with `profile: true`, records a CPU profile of the server meanwhile, writes it to
   * bench/results/<label>-<name>.cpuprofile.json and returns its summary.
   */
  /** After stop(), with `lifeProfile: true`: the whole-life profile, saved and summarised. */
  lifeProfile(): ProfileSummary | undefined;
  profileWindow<T>(name: string, fn: () => Promise<T>): Promise<{ value: T; profile?: ProfileSummary }>;
  /** The last `bytes` of the server's log. */
  tail(bytes?: number): string;
}

let serverEnv: Record<string, string> = {};
/**
 * Extra environment for every bench server (`--server-env=NAME=VALUE`), e.g. to compare a
 * JOBDECK_ switch with its code default in the same hour. A measure's own `env` still wins.
 */
export function setServerEnv(env: Record<string, string>): void {
  serverEnv = { ...env };
}

let keepLogs = false;
/** Copy every server's log to bench/results/<label>.log when it is cleaned up (`--keep-logs`). */
export function setKeepLogs(on: boolean): void {
  keepLogs = on;
}

/** A free loopback port (bound and released; another process could take it in between — rare). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Environment variables of the bench's own shell that must not leak into a bench server. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (k.startsWith('JOBDECK_') && k !== 'JOBDECK_NEXT_DIST') continue;
    if (k === 'DATABASE_URL' || k === 'NODE_OPTIONS' || k === 'VITEST') continue;
    env[k] = v;
  }
  return env;
}

/**
 * Starts a server and waits until it listens.
 * @throws when it exits first or does not listen within `timeoutMs` (the log tail is in the message).
 */
export async function startBenchServer(opts: BenchServerOptions): Promise<BenchServer> {
  const home = opts.home ?? tempDir(opts.label);
  const token = opts.token ?? `jd_bench_${randomBytes(16).toString('hex')}`;
  const logDir = tempDir(`${opts.label}-log`);
  const logFile = path.join(logDir, 'server.log');
  const profDir = path.join(logDir, 'prof');
  const args = [...SERVER_NODE_FLAGS, ...(opts.profile ? ['--inspect=127.0.0.1:0'] : []), ...(opts.lifeProfile ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...(opts.preload?.length ? ['--import', 'tsx', ...opts.preload.flatMap((p) => ['--import', `./${p}`]), 'server.ts'] : ['bin/server.mjs'])];
  const port = await freePort();
  const spawnedAtMs = nowMs();
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...cleanEnv(),
      JOBDECK_NEXT_DIST: process.env.JOBDECK_NEXT_DIST || '.next-bench',
      JOBDECK_HOME: home,
      JOBDECK_TOKEN: token,
      PORT: String(port),
      HOST: '127.0.0.1',
      JOBDECK_LOG_PRETTY: '0',
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      ...serverEnv,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  let tailText = '';
  let running = true;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => ((running = false), resolve())));
  const onData = (d: Buffer) => {
    log.write(d);
    tailText = (tailText + d.toString()).slice(-64 * 1024);
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);

  let inspector: Inspector | null = null;
  const stop = async () => {
    inspector?.close();
    if (running) proc.kill('SIGTERM');
    const t = setTimeout(() => running && proc.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(t);
  };
  const kill9 = async () => {
    if (running) proc.kill('SIGKILL');
    await exited;
  };
  const undo = onCleanup(`server ${opts.label}`, async () => {
    await kill9();
    await new Promise<void>((resolve) => log.end(() => resolve()));
    if (keepLogs) {
      mkdirSync(RESULTS_DIR, { recursive: true });
      copyFileSync(logFile, path.join(RESULTS_DIR, `${opts.label}.log`));
    }
  });

  // Ready: the "listening" log line, or (at a log level that hides it) GET /api/health answering.
  const url = `http://127.0.0.1:${port}`;
  try {
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearInterval(poll);
        proc.stdout!.off('data', check);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => finish(new Error(`server ${opts.label} did not listen within ${opts.timeoutMs ?? 60_000} ms:\n${tailText.slice(-4000)}`)), opts.timeoutMs ?? 60_000);
      let carry = '';
      const check = (d: Buffer) => {
        const text = carry + d.toString();
        carry = text.slice(-300);
        if (/jobdeck listening on http/.test(text)) finish();
      };
      proc.stdout!.on('data', check);
      const poll = setInterval(() => {
        fetch(`${url}/api/health`).then(
          (r) => r.ok && finish(),
          () => undefined,
        );
      }, 250);
      void exited.then(() => finish(new Error(`server ${opts.label} exited (${proc.exitCode ?? proc.signalCode}) before listening:\n${tailText.slice(-4000)}`)));
    });
  } catch (err) {
    await undo();
    throw err;
  }
  const startupMs = nowMs() - spawnedAtMs;

  const api = (pathname: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
    return fetch(new URL(pathname, url), { ...init, headers });
  };
  return {
    label: opts.label,
    url,
    wsUrl: url.replace(/^http/, 'ws'),
    token,
    home,
    pid: proc.pid!,
    proc,
    startupMs,
    spawnedAtMs,
    logFile,
    api,
    json: async <T,>(pathname: string, init?: RequestInit): Promise<T> => {
      const res = await api(pathname, init);
      const text = await res.text();
      if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${pathname} → ${res.status}: ${text.slice(0, 500)}`);
      return JSON.parse(text) as T;
    },
    stop: async () => {
      await stop();
    },
    kill9,
    running: () => running,
    lifeProfile: () => {
      if (!opts.lifeProfile || running) return undefined;
      let files: string[] = [];
      try {
        files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
      } catch {
        return undefined;
      }
      if (!files.length) return undefined;
      mkdirSync(RESULTS_DIR, { recursive: true });
      const file = path.join(RESULTS_DIR, `${opts.label}-life.cpuprofile.json`);
      copyFileSync(path.join(profDir, files[0]), file);
      return summarizeProfile(file);
    },
    profileWindow: async <T,>(name: string, fn: () => Promise<T>) => {
      if (!opts.profile) return { value: await fn() };
      if (!inspector) {
        const wsUrl = inspectorUrl(tailText) ?? inspectorUrl(readFileSync(logFile, 'utf8'));
        if (!wsUrl) throw new Error(`server ${opts.label}: no inspector URL in its output`);
        inspector = await connectInspector(wsUrl);
      }
      await inspector.start();
      const value = await fn();
      mkdirSync(RESULTS_DIR, { recursive: true });
      // *.json: bench/results/*.json is gitignored; Chrome DevTools loads it as a .cpuprofile.
      const file = await inspector.stop(path.join(RESULTS_DIR, `${opts.label}-${name}.cpuprofile.json`));
      return { value, profile: summarizeProfile(file) };
    },
    tail: (bytes = 4000) => tailText.slice(-bytes),
  };
}

/**
 * A data folder that has been used before: a server is started on a fresh home and stopped, so
 * the next start opens an existing database, as a long-running installation does (PGlite's first
 * start — initdb — leaves the process ~90 MB bigger than a restart on the same folder).
 */
export async function warmHome(label: string, env: Record<string, string> = {}): Promise<{ home: string; token: string }> {
  const s = await startBenchServer({ label: `${label}-init`, env });
  await s.stop();
  return { home: s.home, token: s.token };
}

/** RSS (bytes) of an idle server `settleMs` after it listens (then stopped). */
export async function idleRss(label: string, env: Record<string, string>, home?: string, settleMs = 1500): Promise<number> {
  const s = await startBenchServer({ label, env, home });
  await new Promise((r) => setTimeout(r, settleMs));
  const rss = rssBytes(s.pid) ?? 0;
  await s.stop();
  return rss;
}

/** The server's own memory report (GET /api/monitor `memory`, bytes), or null if it gives none. */
export async function serverMemory(server: BenchServer): Promise<ProcessMemory | null> {
  const res = await server.api('/api/monitor');
  if (!res.ok) return null;
  return ((await res.json()) as MonitorState).memory ?? null;
}
