import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PrismaClient } from '../generated/prisma/client';
import { loadConfig, setting } from '../config';
import { logger } from '../log';
import { lockDataFolder, type DataFolderLock } from './lock';
import { migrate, type RawSql } from './migrate';
import { startPgliteCheckpoints, type PgliteCheckpoints } from './pglite-checkpoints';
import { initPgliteFolder } from './pglite-init';
import { pgliteWorkerProgram, startPgliteWorker, type PgliteThread } from './pglite-worker';
import { markSingleSession } from './session';

/** Which engine holds the data: the embedded PGlite (default) or a PostgreSQL server. */
export type DatabaseKind = 'pglite' | 'postgresql';

/** An open, migrated database. */
export interface Database {
  prisma: PrismaClient;
  kind: DatabaseKind;
  /** Names of all migrations recorded in the database. */
  migrations: string[];
  /** PGlite's checkpoints (lib/db/pglite-checkpoints.ts: it has no checkpointer); null on PostgreSQL. */
  checkpoints: PgliteCheckpoints | null;
  /** Closes Prisma and the underlying driver (PGlite must be closed before exit). */
  close(): Promise<void>;
}

/** Options for openDatabase(); defaults come from the environment (lib/config.ts). */
export interface OpenOptions {
  /** `postgresql://…`; when absent, PGlite is used. */
  databaseUrl?: string;
  /** PGlite data folder; `memory://` for an in-memory database (tests). Default `$JOBDECK_HOME/db`. */
  pgliteDir?: string;
  /** Run migrations (default true). */
  migrate?: boolean;
  /** PGlite `shared_buffers` (`16MB`); default from JOBDECK_PGLITE_SHARED_BUFFERS (lib/config.ts). */
  pgliteSharedBuffers?: string;
  /** PGlite in a worker thread (lib/db/pglite-worker.ts) or in this thread; default from JOBDECK_PGLITE_WORKER (lib/config.ts). */
  pgliteWorker?: boolean;
  /**
   * A `memory://` PGlite starts from this `dumpDataDir()` tarball instead of an empty initdb (the
   * tests' migrated template: tests/helpers/db-templates.ts). PGlite in this thread only.
   */
  pgliteLoadDataDir?: Blob;
}

/**
 * Opens a database and applies pending migrations. PGlite when no URL is given (one process owns
 * a PGlite folder at a time: the folder is locked until close(), lib/db/lock.ts), else PostgreSQL
 * through @prisma/adapter-pg. A PGlite folder without a database gets one from a short-lived
 * child process first (lib/db/pglite-init.ts: initdb in this process would leave it ~600 MB
 * larger); `memory://` databases are created in-process. With JOBDECK_PGLITE_WORKER=1 (or
 * `pgliteWorker: true`) PGlite itself runs in a worker thread (lib/db/pglite-worker.ts: its
 * WebAssembly does not block this thread's event loop), else — the default, and when the worker
 * program is missing (with a warning) — in this thread; the folder lock, the initdb child and the
 * start parameters stay in this thread either way.
 *
 * @throws DataFolderInUseError when another live process (or this one) has the PGlite folder
 *   open; PgliteInitError when a fresh folder's database cannot be created; MigrationError when
 *   migrations cannot be applied; driver errors when the database is unreachable;
 *   PgliteWorkerGoneError when the PGlite worker dies while opening; Error naming the variable
 *   when the environment is malformed (lib/config.ts).
 */
export async function openDatabase(opts: OpenOptions = {}): Promise<Database> {
  const cfg = loadConfig();
  // Before Prisma's query compiler and PGlite are compiled (both on first use, after this).
  if (!cfg.wasmOptimize) await baselineWasmOnly();
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.migrate !== false);
  const dir = opts.pgliteDir ?? path.join(cfg.home, 'db');
  const inWorker = opts.pgliteWorker ?? cfg.pgliteWorker;
  if (opts.pgliteLoadDataDir && (inWorker || !dir.startsWith('memory://'))) throw new Error('pgliteLoadDataDir: for a memory:// PGlite in this thread only');
  return openPglite(dir, opts.migrate !== false, opts.pgliteSharedBuffers ?? cfg.pgliteSharedBuffers, inWorker, opts.pgliteLoadDataDir);
}

/**
 * Has V8 compile this process's WebAssembly — Prisma's query compiler (~3.4 MB, on either
 * database) and PGlite (~8 MB) — with its baseline compiler only (Liftoff), for good
 * (JOBDECK_WASM_OPTIMIZE=1 leaves V8's default). Otherwise V8 re-compiles hot functions with its
 * optimizing tier (TurboFan) in the background and keeps both codes; TurboFan's compile zones
 * (~70 MB at their peak on start-up's first-seen queries) stay in malloc's arenas afterwards. Idle
 * server on PostgreSQL ~220 → ~136 MB RSS; PGlite ~40–50 MB less with jobs running; the same speed on
 * jobdeck's queries, since Prisma caches its query plans (bench/README.md, fixes table;
 * docs/design.md "Memory").
 *
 * Process-wide and not undone: `--liftoff-only` turns V8's tier-up flags off as it is set, and
 * `--no-liftoff-only` does not turn them on again (an earlier version set it around PGlite's
 * compile only, and so had Prisma's compiler on Liftoff too). With PGlite in a worker thread it
 * holds for the worker's compile as well (checked with `--trace-wasm-compilation-times` in
 * tests/integration/db-pglite-worker.test.ts).
 */
async function baselineWasmOnly(): Promise<void> {
  const v8 = await import('node:v8');
  v8.setFlagsFromString('--liftoff-only');
}

/** PGlite opened either in a worker thread or in this thread: what openPglite() needs of it. */
interface PgliteEngine {
  adapter: NonNullable<ConstructorParameters<typeof PrismaClient>[0]['adapter']>;
  raw: RawSql;
  close(): Promise<void>;
}

async function openPglite(dir: string, runMigrations: boolean, sharedBuffers: string, inWorker: boolean, loadDataDir?: Blob): Promise<Database> {
  const memory = dir.startsWith('memory://');
  const dataDir = memory ? undefined : dir;
  let lock: DataFolderLock | null = null;
  if (!memory) {
    mkdirSync(dir, { recursive: true });
    // One process owns a PGlite folder at a time (lib/db/lock.ts); refuses a second one.
    lock = await lockDataFolder(dir);
  }
  const program = inWorker ? pgliteWorkerProgram() : null;
  if (inWorker && !program) logger().warn('PGlite worker program (lib/db/pglite-worker-main.mjs) not found; PGlite runs in the server thread');
  let thread: PgliteThread | null = null;
  let engine: PgliteEngine;
  try {
    // In the worker's case PGlite is loaded there only (its module is ~8 MB of this process's memory).
    thread = program ? await startPgliteWorker(program) : null;
    const PGlite = thread ? null : (await import('@electric-sql/pglite')).PGlite;
    // PGlite touches its whole buffer cache: shared_buffers is resident in this process.
    const startParams = [...(thread?.defaultStartParams ?? PGlite!.defaultStartParams), '-c', `shared_buffers=${sharedBuffers}`];
    if (!memory) await initPgliteFolder(dir, { startParams });
    if (thread) {
      const t = thread;
      // The Liftoff-only flag (baselineWasmOnly) is process-wide: it holds for the worker's compile.
      const conn = await t.open({ dataDir, startParams });
      engine = { ...conn, close: t.close };
    } else {
      engine = await openPgliteHere(PGlite!, dataDir, startParams, loadDataDir);
    }
  } catch (err) {
    await thread?.close();
    lock?.release();
    throw err;
  }
  let migrations: string[] = [];
  try {
    if (runMigrations) migrations = (await migrate(engine.raw)).all;
  } catch (err) {
    await engine.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  const prisma = new PrismaClient({ adapter: engine.adapter });
  markSingleSession(prisma);
  const checkpoints = startPgliteCheckpoints(engine.raw);
  return {
    prisma,
    kind: 'pglite',
    migrations,
    checkpoints,
    close: async () => {
      try {
        await checkpoints.stop();
        await prisma.$disconnect().catch(() => undefined);
        await engine.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** PGlite in this thread (JOBDECK_PGLITE_WORKER=0): every query runs on the event loop. */
async function openPgliteHere(
  PGlite: typeof import('@electric-sql/pglite').PGlite,
  dataDir: string | undefined,
  startParams: string[],
  loadDataDir?: Blob,
): Promise<PgliteEngine> {
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  // A dynamic import: the list is an ES module (the worker thread loads it too), this file may run as CommonJS (tsx).
  const extensions = await (await import('./pglite-extensions.mjs')).pgliteExtensions();
  const pglite = await PGlite.create(dataDir, { startParams, extensions, ...(loadDataDir ? { loadDataDir } : {}) });
  return {
    adapter: new PrismaPGlite(pglite),
    raw: {
      exec: async (sql) => {
        await pglite.exec(sql);
      },
      query: async <T,>(sql: string, params: unknown[] = []) => (await pglite.query<T>(sql, params)).rows,
    },
    close: async () => {
      if (!pglite.closed) await pglite.close();
    },
  };
}

async function openPostgres(url: string, runMigrations: boolean): Promise<Database> {
  const pg = (await import('pg')).default;
  const { PrismaPg } = await import('@prisma/adapter-pg');
  let migrations: string[] = [];
  if (runMigrations) {
    // A dedicated session: the advisory lock belongs to the session that took it.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const raw: RawSql = {
        exec: async (sql) => {
          await client.query(sql);
        },
        query: async <T,>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
      };
      migrations = (await migrate(raw)).all;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  const max = setting('JOBDECK_PG_POOL');
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max }) });
  return {
    prisma,
    kind: 'postgresql',
    migrations,
    checkpoints: null,
    close: async () => {
      await prisma.$disconnect().catch(() => undefined);
    },
  };
}
