import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setting } from '../../config';
import { logger } from '../../log';

/**
 * The server side of the attempt launcher (lib/executors/local/launcher-main.mjs): a small long-lived
 * child process that spawns attempt wrappers for the local executor, so that the server itself
 * never forks.
 *
 * Why: `child_process.spawn()` forks the caller, and the fork's cost grows with the caller's
 * memory — tens of ms of the server's event loop per attempt at the server's size (bench/README.md,
 * "F1"). Through the launcher (~40 MB) the server only sends and receives one IPC message per
 * attempt.
 *
 * Protocol (Node IPC, JSON; one launcher per server process, started on first use):
 *   → `{type:'spawn', id, file, args, cwd, env, handleFile, handle[, durable]}`
 *   ← `{type:'spawned', id, pid, startTime[, handleError]}` after `handleFile` holds the handle
 *     (`handle` plus `ref: "<pid>:<startTime>"`, `pid`, `pidStartTime`), or `{type:'failed', id,
 *     message, code}`; later `{type:'exit', pid, code, signal}` once the wrapper was reaped (and
 *     then the fsync of `durable`, which nothing waits for).
 * The launcher is the wrappers' parent: it reaps them and reports their exit, which is the local
 * executor's immediate exit notification. If the launcher dies (crash, kill), its wrappers keep
 * running (detached, own sessions); `onDeath` listeners hear of it so that the executor falls back
 * to watching exit records, and the next spawn starts a new launcher. A spawn whose answer was
 * lost that way rejects with LauncherGoneError; the caller settles it from the handle file
 * (written before the answer): present → the wrapper runs; absent → it was not started.
 *
 * `JOBDECK_LAUNCHER=0` turns the launcher off (the server spawns wrappers itself); so does a
 * missing launcher program (bundled code), with a warning.
 */
export interface Launcher {
  /**
   * Starts `file args` detached (setsid, stdio on /dev/null) in `cwd` with exactly `env`, writes
   * `handleFile` and answers the wrapper's pid and start time (/proc field 22, clock ticks).
   * `onExit` is called once with the wrapper's exit code / signal after it was reaped — unless the
   * launcher dies first (then `onDeath` listeners are called instead).
   * @throws Error when the program cannot be started (ENOENT, EAGAIN…: `code` is set);
   *   LauncherGoneError when the launcher died before answering.
   */
  spawn(req: LauncherSpawn, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): Promise<{ pid: number; startTime: string; handleError?: string }>;
  /** Subscribes to the launcher's death; returns the unsubscribe function. */
  onDeath(listener: (pids: number[]) => void): () => void;
  /** The launcher's pid, or null when none runs. */
  pid(): number | null;
  /** Stops the launcher (tests). Its wrappers keep running. */
  close(): void;
}

/** One spawn request: what to run and where its handle goes. */
export interface LauncherSpawn {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Where the launcher writes the handle (tmp + rename) before answering. */
  handleFile: string;
  /** The handle's fixed fields (`executor`, `attemptDir`); the launcher adds ref, pid, pidStartTime. */
  handle: Record<string, unknown>;
  /**
   * Paths the launcher fsyncs, in order, once the wrapper was reaped (its exit record, then the
   * folder): the wrapper, told so by `__jobdeck_syncer` in its environment, then starts no `sync`
   * of its own while the launcher lives (docs/design.md §6).
   */
  durable?: string[];
}

type Reply =
  | { type: 'ready' }
  | { type: 'spawned'; id: number; pid: number; startTime: string; handleError?: string }
  | { type: 'failed'; id: number; message: string; code: string | null }
  | { type: 'exit'; pid: number; code: number | null; signal: NodeJS.Signals | null };

interface Pending {
  req: LauncherSpawn;
  resolve: (r: { pid: number; startTime: string; handleError?: string }) => void;
  reject: (err: Error) => void;
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/**
 * Path of the launcher program, or null when it cannot be found (e.g. inside a bundle, where
 * import.meta.url is not this file).
 */
export function launcherProgram(): string | null {
  const candidates: string[] = [];
  try {
    candidates.push(path.join(path.dirname(fileURLToPath(import.meta.url)), 'launcher-main.mjs'));
  } catch {
    // bundled: import.meta.url is not a file URL
  }
  candidates.push(path.resolve(process.cwd(), 'lib', 'executors', 'local', 'launcher-main.mjs'));
  return candidates.find((c) => existsSync(c)) ?? null;
}

/** Creates a launcher (its process starts on first spawn); launcherFromEnv() decides whether to. */
export function createLauncher(program: string): Launcher {
  let child: ChildProcess | null = null;
  let seq = 0;
  const pending = new Map<number, Pending>();
  /** Wrappers this launcher started that have not been reaped, by pid → exit callback. */
  const running = new Map<number, Pending['onExit']>();
  const deathListeners = new Set<(pids: number[]) => void>();

  function start(): ChildProcess {
    // Minimal environment: the launcher needs none, and the attempts get theirs per request.
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const c: ChildProcess = spawn(process.execPath, [program], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: env as NodeJS.ProcessEnv,
      serialization: 'json',
    });
    c.on('message', (m: Reply) => onMessage(m));
    c.on('error', (err) => logger().warn({ err }, 'attempt launcher: process error'));
    c.once('exit', (code, signal) => onGone(c, code, signal));
    // Never keeps the server (or a test, a CLI) alive by itself.
    c.unref();
    c.channel?.unref();
    return c;
  }

  /** Keeps this process alive only while an answer is awaited (an `await launch()` must not end it). */
  function holdWhilePending(): void {
    if (pending.size > 0) child?.channel?.ref();
    else child?.channel?.unref();
  }

  function onMessage(m: Reply): void {
    if (m.type === 'spawned') {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      holdWhilePending();
      running.set(m.pid, p.onExit);
      p.resolve({ pid: m.pid, startTime: m.startTime, ...(m.handleError ? { handleError: m.handleError } : {}) });
    } else if (m.type === 'failed') {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      holdWhilePending();
      p.reject(Object.assign(new Error(m.message), { code: m.code ?? undefined }));
    } else if (m.type === 'exit') {
      const cb = running.get(m.pid);
      running.delete(m.pid);
      cb?.(m.code, m.signal);
    }
  }

  function onGone(c: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== c) return;
    child = null;
    const orphans = [...running.keys()];
    running.clear();
    if (orphans.length || pending.size) {
      logger().warn({ code, signal, orphans: orphans.length, pending: pending.size }, 'attempt launcher ended; its attempts keep running and are watched through their exit records');
    }
    // Answers that never came: the caller decides from the handle file (written before an answer).
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(new LauncherGoneError(`the attempt launcher ended (${signal ?? `exit code ${code}`}) before answering whether it started ${p.req.file}`));
    }
    for (const l of deathListeners) l(orphans);
  }

  return {
    spawn(req, onExit) {
      child ??= start();
      const id = ++seq;
      return new Promise((resolve, reject) => {
        pending.set(id, { req, resolve, reject, onExit });
        holdWhilePending();
        child!.send({ type: 'spawn', id, ...req }, (err) => {
          if (!err) return;
          // Not delivered: the launcher is gone or going; onGone settles it from the handle file.
          logger().warn({ err }, 'attempt launcher: request not delivered');
        });
      });
    },
    onDeath(listener) {
      deathListeners.add(listener);
      return () => deathListeners.delete(listener);
    },
    pid: () => child?.pid ?? null,
    close() {
      const c = child;
      if (!c) return;
      c.kill('SIGTERM');
    },
  };
}


/**
 * The launcher died before answering a spawn: the wrapper may or may not run. Its handle file
 * says which (the launcher writes it before answering, so: present → it runs, absent → it was
 * never started).
 */
export class LauncherGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LauncherGoneError';
  }
}

/**
 * A new launcher as the environment asks: null when turned off (`JOBDECK_LAUNCHER=0`) or when
 * its program cannot be found (with a warning); its process starts on first spawn. The local
 * executor that asks owns it (one per server: the registry's, lib/executors/index.ts).
 * @throws Error naming the variable when JOBDECK_LAUNCHER is neither 0 nor 1.
 */
export function launcherFromEnv(): Launcher | null {
  if (!setting('JOBDECK_LAUNCHER')) return null;
  const program = launcherProgram();
  if (!program) logger().warn('attempt launcher program (lib/executors/local/launcher-main.mjs) not found; the server spawns attempts itself');
  return program ? createLauncher(program) : null;
}
