/**
 * The database layer: openDatabase() (PGlite or PostgreSQL, migrated, the PGlite folder locked)
 * returns a Database handle. The server opens one at start-up (lib/server/start.ts) and hands it
 * to whoever needs it; nothing here keeps an open database of its own, so `next build` and route
 * bundles never touch PGlite or the migration files.
 */
export { pingDatabase } from './ping';
export { openDatabase, type Database, type DatabaseKind, type OpenOptions } from './client';
