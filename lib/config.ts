import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * jobdeck's configuration, read from the environment once per call (cheap; no caching so tests
 * can set variables before starting a server).
 *
 * - `PORT` (default 3000), `HOST` (default 127.0.0.1)
 * - `JOBDECK_HOME`: data folder (default `~/.jobdeck`): embedded database, attempt folders, token
 * - `DATABASE_URL`: `postgresql://…` to use a PostgreSQL server instead of the embedded PGlite
 * - `JOBDECK_PGLITE_SHARED_BUFFERS`: the embedded PGlite's `shared_buffers` (default `16MB`): its
 *   buffer cache lives in the server process's memory (bench/README.md, fixes table)
 * - `JOBDECK_PGLITE_OPTIMIZE`: `1` lets V8 optimize PGlite's WebAssembly (TurboFan); default `0`
 *   keeps it on the baseline compiler (Liftoff) — see openPglite() in lib/db/client.ts
 * - `JOBDECK_PGLITE_WORKER`: `1` runs the embedded PGlite in a worker thread, off the server's
 *   event loop (lib/db/pglite-worker.ts); default `0` runs it in the server's thread
 * - `JOBDECK_V8_FLAGS`: V8 flags the server sets on itself at start (lib/server/v8-flags.ts; read
 *   by server.ts, not here)
 * - `JOBDECK_LEFTOVER_GRACE_MS`: leftoverGraceMsFromEnv() (read by the monitor and by a delete)
 */
export interface Config {
  port: number;
  host: string;
  home: string;
  databaseUrl: string | undefined;
  /** PostgreSQL size with unit (`16MB`, `512kB`, `1GB`) for the embedded PGlite's shared_buffers. */
  pgliteSharedBuffers: string;
  /** Let V8 compile PGlite's WebAssembly with its optimizing tier (more memory; `JOBDECK_PGLITE_OPTIMIZE=1`). */
  pgliteOptimize: boolean;
  /** Run the embedded PGlite in a worker thread (`JOBDECK_PGLITE_WORKER=1`) instead of the server's thread (default). */
  pgliteWorker: boolean;
}

/**
 * Default `shared_buffers` of the embedded PGlite. PGlite touches the whole buffer cache, so it
 * is resident in the server process: 128 MB (PostgreSQL's default) puts a bare PGlite at ~280 MB
 * RSS, 16 MB at ~180 MB, and list pages at 100,000 jobs stay ~equally fast (index scans; the
 * table pages come from the OS page cache).
 */
export const DEFAULT_PGLITE_SHARED_BUFFERS = '16MB';

/**
 * Default of JOBDECK_PGLITE_WORKER: PGlite in the server's thread (`0`), not in a worker thread
 * (`1`). On 2 cores the worker starts many jobs no sooner and costs ~20–30 % more server CPU;
 * it buys a lower exit → stream latency and more submits/s (bench/README.md, "Measured choices").
 */
export const DEFAULT_PGLITE_WORKER = '0';

/** Reads the configuration. Throws an Error naming the variable when a value is malformed. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT ? Number(env.PORT) : 3000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT: expected an integer 0–65535, got "${env.PORT}"`);
  // A runtime data folder, not a project file: keep the bundler from tracing it.
  const home = path.resolve(/*turbopackIgnore: true*/ env.JOBDECK_HOME || path.join(os.homedir(), '.jobdeck'));
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(`DATABASE_URL: expected postgresql://…, got "${databaseUrl.replace(/:[^:@/]*@/, ':***@')}"`);
  }
  const pgliteSharedBuffers = env.JOBDECK_PGLITE_SHARED_BUFFERS?.trim() || DEFAULT_PGLITE_SHARED_BUFFERS;
  if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(pgliteSharedBuffers) || sizeKb(pgliteSharedBuffers) < 128 || sizeKb(pgliteSharedBuffers) > 1024 * 1024) {
    // PostgreSQL's minimum is 128kB; PGlite's WASM memory ends at 2 GB.
    throw new Error(`JOBDECK_PGLITE_SHARED_BUFFERS: expected a size from 128kB to 1GB with unit kB, MB or GB (e.g. 16MB), got "${pgliteSharedBuffers}"`);
  }
  const optimize = env.JOBDECK_PGLITE_OPTIMIZE?.trim() || '0';
  if (optimize !== '0' && optimize !== '1') throw new Error(`JOBDECK_PGLITE_OPTIMIZE: expected 0 or 1, got "${optimize}"`);
  const worker = env.JOBDECK_PGLITE_WORKER?.trim() || DEFAULT_PGLITE_WORKER;
  if (worker !== '0' && worker !== '1') throw new Error(`JOBDECK_PGLITE_WORKER: expected 0 or 1, got "${worker}"`);
  return { port, host: env.HOST || '127.0.0.1', home, databaseUrl, pgliteSharedBuffers, pgliteOptimize: optimize === '1', pgliteWorker: worker === '1' };
}

/** kB in a validated PostgreSQL size ("16MB" → 16384). */
function sizeKb(size: string): number {
  const n = parseInt(size, 10);
  return size.endsWith('GB') ? n * 1024 * 1024 : size.endsWith('MB') ? n * 1024 : n;
}

/** Default of JOBDECK_LEFTOVER_GRACE_MS (ms). */
export const DEFAULT_LEFTOVER_GRACE_MS = 2000;

/**
 * `JOBDECK_LEFTOVER_GRACE_MS` (ms, integer ≥ 0, default 2000): the SIGTERM → SIGKILL grace for
 * processes an attempt left behind when it ended (`sleep 300 &`) — stopped by the monitor's
 * reap (lib/monitor/config.ts) — and for what a deleted job left (lib/control/delete.ts).
 * @throws Error naming the variable when the value is not such an integer.
 */
export function leftoverGraceMsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const name = 'JOBDECK_LEFTOVER_GRACE_MS';
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return DEFAULT_LEFTOVER_GRACE_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected an integer ≥ 0, got "${raw}"`);
  return n;
}

/**
 * File name of the plain admin token inside the data folder: written by the server
 * (lib/auth/tokens.ts), read by the CLI (readLocalToken).
 */
export const TOKEN_FILE = 'token';

/** Path of the plain token file for a data folder (default: the configured JOBDECK_HOME). */
export function tokenPath(home?: string): string {
  return path.join(/*turbopackIgnore: true*/ home ?? loadConfig().home, TOKEN_FILE);
}

/**
 * The token a local server generated, for the CLI: the trimmed contents of
 * `$JOBDECK_HOME/token` (default `~/.jobdeck/token`), or null when the file does not exist, is
 * empty or cannot be read. Never throws. The CLI should prefer `--token` and `JOBDECK_TOKEN`, and
 * fall back to this (only useful against a server on this machine using the same data folder).
 *
 * @param home the server's data folder; default JOBDECK_HOME or ~/.jobdeck.
 */
export function readLocalToken(home?: string): string | null {
  try {
    const t = readFileSync(tokenPath(home), 'utf8').trim();
    return t.length > 0 ? t : null;
  } catch {
    return null;
  }
}
