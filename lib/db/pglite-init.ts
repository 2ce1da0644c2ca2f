import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * PGlite's first start on an empty data folder runs initdb inside the calling process: a second
 * WASM instance plus the initdb module, which takes a bare Node process to ~830 MB RSS, and much
 * of it stays after both instances are closed (the WASM memories and V8's compiler memory are not
 * given back to the system). So jobdeck creates the cluster in a short-lived child process and
 * the server then opens a ready folder, like any later start (bench/README.md, fixes table).
 *
 * The child initialises a private sub-folder `<dir>/initdb.tmp`; its entries are then moved into
 * `<dir>`, `PG_VERSION` last, so a folder holding `PG_VERSION` is always a complete cluster (a
 * crash during initdb leaves no half-made database that the next start would take as one).
 * The caller must hold the data-folder lock (lib/db/lock.ts) for the whole of it.
 */

/** Name of the sub-folder the child initialises before its content moves into the data folder. */
export const INITDB_TMP = 'initdb.tmp';

/** Thrown when the embedded database cannot be created in a fresh data folder. */
export class PgliteInitError extends Error {
  readonly code = 'PGLITE_INIT_FAILED';
  constructor(
    readonly dir: string,
    detail: string,
  ) {
    super(`cannot create the embedded database in ${dir}: ${detail}`);
    this.name = 'PgliteInitError';
  }
}

/** Options of initPgliteFolder() (tests). */
export interface PgliteInitOptions {
  /** PostgreSQL start arguments for the child's PGlite (after initdb it starts once and closes); default PGlite's. */
  startParams?: string[];
  /** Give up and kill the child after this many ms (default 300 000). */
  timeoutMs?: number;
  /** Module the child loads PGlite from (default: the `@electric-sql/pglite` this process resolves). */
  pgliteModule?: string;
}

/** True when `dir` holds a PostgreSQL cluster (`PG_VERSION`, written last by initPgliteFolder). */
export function hasCluster(dir: string): boolean {
  return existsSync(path.join(dir, 'PG_VERSION'));
}

function resolveModule(id: string): string {
  // This file under tsx, vitest and Playwright (CommonJS' `__filename`; not import.meta, which
  // Playwright's CommonJS output cannot hold: lib/db/migrate.ts migrationsDir); in a bundle the cwd.
  const base = typeof __filename === 'string' && path.isAbsolute(__filename) ? __filename : path.join(process.cwd(), 'package.json');
  return createRequire(base).resolve(id);
}

/** The extensions' CommonJS files (name → path), for the child (lib/db/pglite-extensions.mjs). */
async function resolveExtensions(): Promise<Record<string, string>> {
  // A dynamic import: the list is an ES module (the worker thread loads it too), this file may run as CommonJS (tsx).
  const { PGLITE_EXTENSION_MODULES } = await import('./pglite-extensions.mjs');
  return Object.fromEntries(Object.entries(PGLITE_EXTENSION_MODULES).map(([name, mod]) => [name, resolveModule(mod)]));
}

// The child: CommonJS through `node -e`; argv[1] = PGlite module, argv[2] = folder, argv[3] =
// JSON start params, argv[4] = JSON extension name → module path (the same set as every PGlite). PostgreSQL's own messages ("invalid value for parameter …") and any failure
// go to stderr, a failure with exit code 1.
const CHILD = `
const [mod, dir, params, exts] = process.argv.slice(1);
const { PGlite } = require(mod);
(async () => {
  const startParams = JSON.parse(params);
  const extensions = {};
  for (const [name, file] of Object.entries(JSON.parse(exts))) extensions[name] = require(file)[name];
  const onStderr = (text) => (process.stderr.write(text + '\\n'), false);
  const db = await PGlite.create(dir, startParams.length ? { startParams, onStderr, extensions } : { onStderr, extensions });
  await db.query('SELECT 1');
  await db.close();
})().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(String((err && err.stack) || err) + '\\n');
    process.exit(1);
  },
);
`;

function runChild(dir: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CHILD, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      // Not the server's NODE_OPTIONS (an --inspect there would clash on its port); plain CommonJS needs no preload.
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new PgliteInitError(dir, `cannot start the initdb process ${process.execPath}: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const how = timedOut ? `did not finish within ${timeoutMs} ms (killed)` : signal ? `was killed (${signal})` : `exited with code ${code}`;
      const tail = stderr.trim();
      reject(new PgliteInitError(dir, `the initdb process (pid ${child.pid}) ${how}${tail ? `:\n${tail}` : ' without a message'}`));
    });
  });
}

/**
 * Creates a PostgreSQL cluster in data folder `dir` (which must exist and be locked by the
 * caller) in a child process, unless `dir` already holds one. Leftovers of an interrupted
 * earlier attempt (`initdb.tmp`, cluster files without `PG_VERSION`) are replaced.
 *
 * @returns true when a cluster was created, false when `dir` already had one.
 * @throws PgliteInitError (names the folder, the child's exit and its stderr) when the child
 *   fails, cannot start, or runs longer than `timeoutMs`; I/O errors from moving the files.
 */
export async function initPgliteFolder(dir: string, opts: PgliteInitOptions = {}): Promise<boolean> {
  if (hasCluster(dir)) return false;
  const tmp = path.join(dir, INITDB_TMP);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    await runChild(dir, [opts.pgliteModule ?? resolveModule('@electric-sql/pglite'), tmp, JSON.stringify(opts.startParams ?? []), JSON.stringify(await resolveExtensions())], opts.timeoutMs ?? 300_000);
    if (!existsSync(path.join(tmp, 'PG_VERSION'))) throw new PgliteInitError(dir, `the initdb process succeeded but left no PG_VERSION in ${tmp}`);
    const entries = readdirSync(tmp).filter((e) => e !== 'PG_VERSION');
    for (const e of [...entries, 'PG_VERSION']) {
      const target = path.join(dir, e);
      rmSync(target, { recursive: true, force: true });
      renameSync(path.join(tmp, e), target);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return true;
}
