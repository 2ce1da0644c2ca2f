import type { Database } from './client';
import { shared } from '../shared';

export type { Database, DatabaseKind } from './client';

/** Thrown when code asks for the database before the server opened it. */
export class DatabaseNotOpenError extends Error {
  constructor() {
    super('database not open: jobdeck opens it at start-up (server.ts → initDatabase())');
    this.name = 'DatabaseNotOpenError';
  }
}

/**
 * The process-wide database opened by the server (lib/db/client.ts initDatabase()). Route
 * handlers and lib/ code use this; it never opens a database itself, so `next build` and route
 * bundles never touch PGlite or the migration files.
 * @throws DatabaseNotOpenError when nothing opened it.
 */
export async function getDatabase(): Promise<Database> {
  const p = shared().db;
  if (!p) throw new DatabaseNotOpenError();
  return p;
}
