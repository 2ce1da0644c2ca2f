/**
 * The test fixture for a database of each kind: call it at the top of a `describe` (usually
 * `describe.each(DB_KINDS)`) and it registers the suite's set-up, isolation and clean-up itself.
 *
 * - `useDatabase(kind, name)` — a suite that works on the database in this process (store,
 *   monitor, WebSocket hub, lib/api). beforeAll opens a fresh, migrated database (an in-memory
 *   PGlite, or a new PostgreSQL database named after `name`); beforeEach empties every table
 *   (isolation `'test'`, the default) so each test starts from nothing; afterAll closes it
 *   (PGlite) or closes it and drops the database (PostgreSQL).
 * - `useServerDatabase(kind, name)` — a suite that starts jobdeck server processes on the
 *   database. beforeAll creates the PostgreSQL database (on PGlite each server keeps its own in
 *   its data folder: one process owns a PGlite folder); `start()` starts a server on it; afterAll
 *   stops every server it started, then drops the database. The servers hold the database
 *   between tests, so the suite is the unit of isolation: a fresh database per suite.
 *
 * The handles' fields are read inside hooks and tests (the database opens in beforeAll); reading
 * one earlier throws. Vitest runs after-hooks in reverse order, so a suite's own afterAll (e.g.
 * cancelling its jobs through a server) still finds the database and servers up. See
 * docs/testing.md.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Database } from '../../lib/db/client';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import type { Store } from '../../lib/store';
import { createTestDatabase, type DbKind, type TestDatabase } from './db';
import { startServerProcess, type ServerOptions, type ServerProcess } from './server';
import { storeOf } from './store';

/**
 * How tests of one suite are kept apart: `'test'` empties every table before each test;
 * `'file'` shares the suite's database across its tests (for suites whose tests build on rows a
 * `beforeAll` wrote).
 */
export type Isolation = 'test' | 'file';

/** A suite's database, open from its beforeAll to its afterAll. */
export interface DatabaseFixture {
  readonly kind: DbKind;
  /** The open, migrated database (lib/db/client). */
  readonly db: Database;
  /** `db.prisma`. */
  readonly prisma: PrismaClient;
  /** The one store of this client (tests/helpers/store.ts `storeOf`): its bus is shared by everything the suite runs on it. */
  readonly store: Store;
  /** postgresql: this suite's own database URL (for a second client); pglite: undefined. */
  readonly url: string | undefined;
}

/** Options of useDatabase. */
export interface DatabaseOptions {
  /** Default `'test'`. */
  isolation?: Isolation;
}

/**
 * Registers a fresh database of `kind` for the enclosing suite (beforeAll), emptied before each
 * test unless `isolation: 'file'` (beforeEach), closed and — PostgreSQL — dropped after it
 * (afterAll). `name` labels the PostgreSQL database (`jd_<hash of name>_<random>`).
 */
export function useDatabase(kind: DbKind, name: string, opts: DatabaseOptions = {}): DatabaseFixture {
  let t: TestDatabase | undefined;
  let tables: string[] | undefined;
  const open = (): TestDatabase => {
    if (!t) throw new Error(`useDatabase(${kind}, ${name}): the database is open only from the suite's beforeAll to its afterAll`);
    return t;
  };
  beforeAll(async () => {
    t = await createTestDatabase(kind, name);
  });
  afterAll(async () => {
    const done = t;
    t = undefined;
    await done?.dispose();
  });
  if ((opts.isolation ?? 'test') === 'test') {
    beforeEach(async () => {
      const prisma = open().db.prisma;
      tables ??= await userTables(prisma);
      await clearTables(prisma, tables);
    });
  }
  return {
    kind,
    get db() {
      return open().db;
    },
    get prisma() {
      return open().db.prisma;
    },
    get store() {
      return storeOf(open().db.prisma);
    },
    get url() {
      return open().url;
    },
  };
}

/** Every table of the schema except the migration record. */
async function userTables(prisma: PrismaClient): Promise<string[]> {
  const rows = await prisma.$queryRawUnsafe<{ name: string }[]>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations' ORDER BY tablename`,
  );
  return rows.map((r) => r.name);
}

/**
 * Empties `tables` in one statement. Identities are not restarted: ids keep growing across a
 * suite's tests as before, so per-job paths in a folder the suite shares (`job-<id>/…` logs)
 * never meet a previous test's files.
 */
async function clearTables(prisma: PrismaClient, tables: string[]): Promise<void> {
  if (tables.length) await prisma.$executeRawUnsafe(`TRUNCATE ${tables.map((n) => `"${n}"`).join(', ')} CASCADE`);
  // The first admin is the migration's row, which every database has (the admin token's user).
  if (tables.includes('User')) await prisma.$executeRawUnsafe(`INSERT INTO "User" ("id", "name", "role") VALUES (1, 'admin', 'admin') ON CONFLICT DO NOTHING`);
}

/** A suite's database for server processes, and the servers started on it. */
export interface ServerDatabaseFixture {
  readonly kind: DbKind;
  /** postgresql: the database's URL; pglite: undefined (each server keeps its PGlite in its data folder). */
  readonly url: string | undefined;
  /** postgresql: a client of this process on the same database, for reads behind the servers' back; pglite: undefined. */
  readonly db: Database | undefined;
  /** What a server process needs in its environment to use this database: `{ DATABASE_URL }`, or `{}` on pglite. */
  readonly env: Record<string, string>;
  /**
   * startServerProcess (tests/helpers/server.ts) with `env` under `opts.env`; the server is
   * killed and its data folder removed in afterAll (restarts on the same `home` included).
   */
  start(opts?: ServerOptions): Promise<ServerProcess>;
}

/** Options of useServerDatabase(). */
export interface ServerDatabaseOptions {
  /**
   * 'file' (default): one database for the suite (servers started in beforeAll may serve every
   * test). 'test': on PostgreSQL a fresh database before each test, dropped after it once the
   * test's servers are stopped — for suites whose tests each start a server on a new data folder,
   * since a database belongs to one data folder (docs/design.md §9, lib/db/identity.ts).
   */
  isolation?: 'file' | 'test';
}

/**
 * Registers the database of a suite that runs jobdeck server processes: on PostgreSQL a fresh,
 * migrated database (beforeAll, or beforeEach with `isolation: 'test'`), dropped after every
 * server `start()` started on it was stopped; on PGlite no database of its own — `start()` only
 * tracks the servers.
 */
export function useServerDatabase(kind: DbKind, name: string, opts: ServerDatabaseOptions = {}): ServerDatabaseFixture {
  let t: TestDatabase | undefined;
  let ready = false;
  const servers: ServerProcess[] = [];
  const open = (): TestDatabase | undefined => {
    if (!ready) throw new Error(`useServerDatabase(${kind}, ${name}): the database exists only from the suite's beforeAll to its afterAll`);
    return t;
  };
  const setUp = async () => {
    if (kind === 'postgresql') t = await createTestDatabase(kind, name);
    ready = true;
  };
  const tearDown = async () => {
    // Newest first: a restarted server on an earlier one's home is killed before that home goes.
    for (const s of servers.splice(0).reverse()) await s.dispose();
    ready = false;
    const done = t;
    t = undefined;
    await done?.dispose();
  };
  if (opts.isolation === 'test') {
    beforeEach(setUp);
    afterEach(tearDown);
  } else {
    beforeAll(setUp);
    afterAll(tearDown);
  }
  const env = (): Record<string, string> => {
    const url = open()?.url;
    return url ? { DATABASE_URL: url } : {};
  };
  return {
    kind,
    get url() {
      return open()?.url;
    },
    get db() {
      return open()?.db;
    },
    get env() {
      return env();
    },
    start: async (opts = {}) => {
      const s = await startServerProcess({ ...opts, env: { ...env(), ...opts.env } });
      servers.push(s);
      return s;
    },
  };
}
