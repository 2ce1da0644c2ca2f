/**
 * The store handle: everything the statements of lib/store share, held explicitly instead of
 * process-wide. The modules of lib/store keep no state of their own — a Next.js route bundle may
 * load its own copy of them — so the handle is what is shared: build one per database with
 * createStore() and pass it to every store function.
 */
import type { Prisma, PrismaClient, Queue } from '../generated/prisma/client';
import { StoreBus } from './bus';
import { columnsOf, type ColumnTable } from './columns';
import { isSingleSession } from '../db/session';
import { PreparedStatements } from './prepared';
import { SubmitQueue } from './submit-queue';

/** One database's store: its client, its bus, its column table and its submit group commit. */
export interface Store {
  /** The client every statement runs on. */
  readonly prisma: PrismaClient;
  /** Announces the writes of this store after their commit (bus.ts). */
  readonly bus: StoreBus;
  /** The tables' columns, from the client's data model (columns.ts). */
  readonly columns: ColumnTable;
  /** submitJob()'s group commit (submit-queue.ts); `submits.stats()` counts its statements. */
  readonly submits: SubmitQueue;
  /** The Queue table as last read by cachedQueueRows() (queues.ts), and when (ms); null: read it. */
  queueCache: { rows: Queue[]; atMs: number } | null;
  /** The large statements prepared in the database's one session (PGlite; prepared.ts); null on PostgreSQL. */
  readonly prepared: PreparedStatements | null;
  /** Whether an enabled webhook subscription exists, as last read by anySubscription() (webhook-subscriptions.ts), and when (ms); null: read it. */
  webhookCache: { any: boolean; atMs: number } | null;
}

/**
 * A store inside a caller's interactive transaction (inTransaction()): writes run inside it and
 * are announced by no one (the caller commits; nothing is committed when the write returns).
 */
export interface StoreTx {
  readonly prisma: Prisma.TransactionClient;
  readonly bus: null;
  readonly columns: ColumnTable;
  /** The store's prepared statements: a transaction runs in the same session. */
  readonly prepared: PreparedStatements | null;
}

/** What a read or a guarded write runs on: a Store, or one inside a transaction. */
export type StoreScope = Store | StoreTx;

/**
 * Builds the store of one database (sync; no query). Build it once per client and share it:
 * its bus is how the monitor and the WebSocket hub hear what the API wrote.
 * @throws Error when the client's data model does not fit the store (columns.ts).
 */
export function createStore(prisma: PrismaClient): Store {
  const prepared = isSingleSession(prisma) ? new PreparedStatements() : null;
  return { prisma, bus: new StoreBus(), columns: columnsOf(prisma), submits: new SubmitQueue(prisma, prepared), prepared, queueCache: null, webhookCache: null };
}

/**
 * The store inside an interactive transaction `tx` of `store.prisma` (`prisma.$transaction(async
 * (tx) => transitionMany(inTransaction(store, tx), …))`): its writes roll back with it and are
 * never announced — use it only to compose writes the caller commits itself.
 */
export function inTransaction(store: StoreScope, tx: Prisma.TransactionClient): StoreTx {
  return { prisma: tx, bus: null, columns: store.columns, prepared: store.prepared };
}

/**
 * `store` reading through `db`, another client of the same database (the monitor's `db` option:
 * a test counts or fails its statements); `store` itself when `db` is its own client. Only for
 * reads: what runs on it is announced by no one.
 */
export function readingThrough(store: Store, db: PrismaClient): StoreScope {
  return db === store.prisma ? store : { prisma: db, bus: null, columns: store.columns, prepared: null };
}
