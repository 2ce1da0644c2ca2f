import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  DriverAdapterError,
  type ConnectionInfo,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
  type TransactionOptions,
} from '@prisma/driver-adapter-utils';
import { logger } from '../log';
import type { RawSql } from './migrate';

/**
 * The server side of the PGlite thread (lib/db/pglite-worker-main.mjs): PGlite and its Prisma
 * driver adapter run in a worker_threads Worker; this module gives Prisma a driver adapter
 * (SqlDriverAdapterFactory → SqlDriverAdapter → Transaction) and the migration runner a RawSql
 * whose every call is one postMessage to the worker and one answer back (structured clone; byte
 * columns' buffers are transferred; answers travel in batches, settled in one tick).
 *
 * Why: PGlite runs each query synchronously in WebAssembly. In the server's thread that stalls
 * the one event loop (WebSocket messages, launches, HTTP) for the length of every query; in the
 * worker only Prisma's own work and the message copies stay on the loop — as with PostgreSQL,
 * whose queries run in another process.
 *
 * Errors: a DriverAdapterError in the worker (a PostgreSQL error the adapter mapped: unique
 * violation → Prisma P2002 …) is rebuilt here as a DriverAdapterError with the same `cause`;
 * other errors keep their name, message and plain fields (`code`, `detail` … of PGlite's
 * DatabaseError). When the worker dies (crash, terminate) every pending and later call rejects
 * with PgliteWorkerGoneError, and the death is logged.
 *
 * The worker holds the process open only while a call is pending (like an in-process PGlite,
 * which holds no handle); close() closes PGlite in the worker and then ends the thread.
 *
 * Off by default (JOBDECK_PGLITE_WORKER=1 turns it on; lib/config.ts DEFAULT_PGLITE_WORKER): each
 * query costs more than in the server's thread — the copies both ways, and fewer of Prisma's
 * batched reads (answers spread over more ticks; pglite-worker-main.mjs batches them back, in
 * part) — so on 2 cores many jobs start no sooner, for more CPU; what it buys is an event loop a
 * long query cannot stall (bench/README.md, "Measured choices").
 */

/** Thrown for calls pending when the worker died or that were made after it died or was closed. */
export class PgliteWorkerGoneError extends Error {
  readonly code = 'PGLITE_WORKER_GONE';
  constructor(message: string) {
    super(message);
    this.name = 'PgliteWorkerGoneError';
  }
}

/** A started PGlite thread, before and after its database is opened. */
export interface PgliteThread {
  /** PGlite's own start arguments (PGlite.defaultStartParams), read in the worker: the server thread never loads PGlite. */
  readonly defaultStartParams: string[];
  /** The thread (diagnostics, tests). */
  readonly thread: Worker;
  /**
   * Opens PGlite in the worker (once). The caller holds the data-folder lock and has created the
   * cluster (lib/db/pglite-init.ts); V8 flags being process-wide, a Liftoff-only flag set around
   * this call holds for the worker's compile of PGlite's WebAssembly.
   * @throws the worker's error (name, message and fields such as `code` kept) when PGlite cannot
   *   be opened; PgliteWorkerGoneError when the thread died or was closed.
   */
  open(opts: { dataDir?: string; startParams: string[] }): Promise<PgliteConnection>;
  /** Closes PGlite in the worker (if open), then ends the thread. Idempotent; never throws (a failed close is logged). */
  close(): Promise<void>;
}

/** The opened database's two faces. */
export interface PgliteConnection {
  /** Prisma driver adapter factory: `new PrismaClient({ adapter })`. */
  adapter: SqlDriverAdapterFactory;
  /** Raw SQL on the same PGlite session, for the migration runner (lib/db/migrate.ts). */
  raw: RawSql;
}

/**
 * Path of the worker program, or null when it cannot be found. Next to this file when run
 * unbundled (tsx, vitest); else `lib/db/` under the working directory (inside a bundle
 * import.meta.url is not this file) — the same lookup as lib/executors/local/launcher.ts.
 */
export function pgliteWorkerProgram(): string | null {
  const candidates: string[] = [];
  try {
    candidates.push(path.join(path.dirname(fileURLToPath(import.meta.url)), 'pglite-worker-main.mjs'));
  } catch {
    // bundled: import.meta.url is not a file URL
  }
  candidates.push(path.resolve(/*turbopackIgnore: true*/ process.cwd(), 'lib', 'db', 'pglite-worker-main.mjs'));
  return candidates.find((c) => existsSync(c)) ?? null;
}

/**
 * The worker's V8 young generation (MB). Measured (2,000 concurrent inserts + 500 list pages on a
 * file-backed PGlite, the bench machine): V8's default let the worker's new space reach 34 MB and
 * the process ended at 318–348 MB RSS; with 8 MB at 292–302 MB, in the same time (6.8–7.0 s vs
 * 6.6–7.0 s).
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/** How long close() waits for PGlite to close (it first finishes the queries queued before it) before it ends the thread anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

type Op = 'defaults' | 'open' | 'queryRaw' | 'executeRaw' | 'executeScript' | 'startTransaction' | 'commit' | 'rollback' | 'dispose' | 'exec' | 'query' | 'close';

/** An error as the worker sends it (see pglite-worker-main.mjs encodeError()). */
type WireError = { driver: DriverAdapterError['cause'] } | { name: string; message: string; stack?: string; props: Record<string, unknown> };

type Answer = { id: number; ok: true; v: unknown } | { id: number; ok: false; e: WireError };

/** A batch of answers (all resolved in one callback: see pglite-worker-main.mjs flush()), or a log line. */
type Reply = Answer[] | { log: 'warn' | 'error'; msg: string; err?: WireError };

interface Pending {
  op: Op;
  resolve(v: unknown): void;
  reject(err: Error): void;
}

function decodeError(e: WireError): Error {
  if ('driver' in e) return new DriverAdapterError(e.driver);
  const err = new Error(e.message);
  Object.assign(err, e.props);
  err.name = e.name;
  // The caller's stack, then where it failed in the worker.
  if (e.stack) err.stack = `${err.stack}\n    --- in the PGlite worker ---\n${e.stack.split('\n').slice(1).join('\n')}`;
  return err;
}

/**
 * Starts the worker thread and waits until it has loaded PGlite (not yet opened a database).
 * @param program the worker program (default: pgliteWorkerProgram()).
 * @throws Error when the program is missing; PgliteWorkerGoneError when the thread dies while
 *   starting (e.g. PGlite cannot be imported: the reason is in the message and the log).
 */
export async function startPgliteWorker(program: string | null = pgliteWorkerProgram()): Promise<PgliteThread> {
  if (!program) throw new Error('PGlite worker program (lib/db/pglite-worker-main.mjs) not found');
  // No inherited --import/--require (tsx): the program is plain JavaScript. A small young
  // generation: PGlite's per-query garbage is short-lived, and V8's default let the worker's
  // new space grow to ~34 MB of resident memory for no measurable speed (WORKER_YOUNG_GENERATION_MB).
  const thread = new Worker(program, { execArgv: [], stdout: false, stderr: false, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
  thread.unref();

  let seq = 0;
  const pending = new Map<number, Pending>();
  /** Set once the thread is closed or dead: every later call rejects with it. */
  let gone: PgliteWorkerGoneError | null = null;
  let crash: Error | null = null;

  /** Rejects every pending call: `why` plus the operation that was waiting. */
  const settleAll = (why: string) => {
    const all = [...pending.values()];
    pending.clear();
    for (const p of all) p.reject(new PgliteWorkerGoneError(`${why} (pending: ${p.op})`));
  };

  // Answers that arrived during this turn of the event loop's poll phase, settled together
  // right after it (setImmediate): one tick for all their callers, so that Prisma batches the
  // findUnique calls they make next (see pglite-worker-main.mjs flush()).
  let inbox: Answer[] = [];
  const settleInbox = () => {
    const batch = inbox;
    inbox = [];
    for (const a of batch) {
      const p = pending.get(a.id);
      if (!p) continue;
      pending.delete(a.id);
      if (a.ok) p.resolve(a.v);
      else p.reject(decodeError(a.e));
    }
    if (pending.size === 0) thread.unref();
  };
  thread.on('message', (m: Reply) => {
    if (!Array.isArray(m)) {
      logger()[m.log]({ err: m.err ? decodeError(m.err) : undefined }, m.msg);
      return;
    }
    if (!inbox.length) setImmediate(settleInbox);
    for (const a of m) inbox.push(a);
  });
  thread.on('messageerror', (err) => logger().error({ err }, 'PGlite worker: an answer could not be deserialized'));
  thread.on('error', (err) => {
    crash = err;
    logger().error({ err }, 'PGlite worker crashed');
  });
  thread.once('exit', (code) => {
    if (!gone) {
      const why = crash ? `: ${crash.message}` : '';
      gone = new PgliteWorkerGoneError(`the PGlite worker thread exited (code ${code})${why}; the embedded database is unavailable until the server restarts`);
      logger().error({ code, pending: pending.size }, 'PGlite worker exited; pending and later database calls fail');
    }
    settleAll(gone.message);
  });

  const call = <T>(op: Op, a?: unknown, tx?: number): Promise<T> => {
    if (gone) return Promise.reject(gone);
    const id = ++seq;
    return new Promise<T>((resolve, reject) => {
      try {
        thread.postMessage({ id, op, a, tx });
      } catch (err) {
        reject(err as Error);
        return;
      }
      pending.set(id, { op, resolve: resolve as (v: unknown) => void, reject });
      // An awaited database call keeps the process alive; an idle database does not.
      if (pending.size === 1) thread.ref();
    });
  };

  let closed: Promise<void> | null = null;
  const close = () =>
    (closed ??= (async () => {
      if (gone) return;
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS);
      });
      try {
        const r = await Promise.race([call('close'), limit]);
        if (r === 'timeout') logger().warn({ timeoutMs: CLOSE_TIMEOUT_MS }, 'PGlite worker: close did not finish in time; ending the thread');
      } catch (err) {
        logger().warn({ err }, 'PGlite worker: close failed');
      } finally {
        clearTimeout(timer);
      }
      if (!gone) gone = new PgliteWorkerGoneError('the embedded database was closed');
      settleAll(gone.message);
      await thread.terminate();
    })());

  let defaultStartParams: string[];
  try {
    defaultStartParams = await call<string[]>('defaults');
  } catch (err) {
    await close();
    throw err;
  }
  let opened = false;
  const open = async (opts: { dataDir?: string; startParams: string[] }): Promise<PgliteConnection> => {
    if (opened) throw new Error('PGlite worker: open() was already called');
    opened = true;
    const info = await call<{ adapterName: string; connectionInfo: ConnectionInfo }>('open', { dataDir: opts.dataDir, startParams: opts.startParams });
    const raw: RawSql = {
      exec: (sql) => call<void>('exec', sql),
      query: <T,>(sql: string, params: unknown[] = []) => call<T[]>('query', { sql, params }),
    };
    return { adapter: new WorkerAdapterFactory(call, info.adapterName, info.connectionInfo), raw };
  };
  return { defaultStartParams, thread, open, close };
}

type Call = <T>(op: Op, a?: unknown, tx?: number) => Promise<T>;

/** Prisma's adapter factory over the worker (one connection: PGlite is one session). */
class WorkerAdapterFactory implements SqlDriverAdapterFactory {
  readonly provider = 'postgres';
  constructor(
    private readonly call: Call,
    readonly adapterName: string,
    private readonly info: ConnectionInfo,
  ) {}

  connect(): Promise<SqlDriverAdapter> {
    return Promise.resolve(new WorkerAdapter(this.call, this.adapterName, this.info));
  }
}

/** SqlDriverAdapter whose calls run the worker's PrismaPGlite adapter. */
class WorkerAdapter implements SqlDriverAdapter {
  readonly provider = 'postgres';
  constructor(
    private readonly call: Call,
    readonly adapterName: string,
    private readonly info: ConnectionInfo,
  ) {}

  queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    return this.call('queryRaw', query);
  }

  executeRaw(query: SqlQuery): Promise<number> {
    return this.call('executeRaw', query);
  }

  executeScript(script: string): Promise<void> {
    return this.call('executeScript', script);
  }

  async startTransaction(isolationLevel?: IsolationLevel): Promise<Transaction> {
    const { tx, options } = await this.call<{ tx: number; options: TransactionOptions }>('startTransaction', isolationLevel);
    return new WorkerTransaction(this.call, this.adapterName, tx, options);
  }

  /** Synchronous in the interface: the worker's answer from open. */
  getConnectionInfo(): ConnectionInfo {
    return this.info;
  }

  dispose(): Promise<void> {
    return this.call('dispose');
  }
}

/** One interactive transaction held open in the worker (PGlite's transaction(), by id). */
class WorkerTransaction implements Transaction {
  readonly provider = 'postgres';
  constructor(
    private readonly call: Call,
    readonly adapterName: string,
    private readonly tx: number,
    readonly options: TransactionOptions,
  ) {}

  queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    return this.call('queryRaw', query, this.tx);
  }

  executeRaw(query: SqlQuery): Promise<number> {
    return this.call('executeRaw', query, this.tx);
  }

  commit(): Promise<void> {
    return this.call('commit', undefined, this.tx);
  }

  rollback(): Promise<void> {
    return this.call('rollback', undefined, this.tx);
  }
}
