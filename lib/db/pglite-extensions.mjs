// The PostgreSQL extensions jobdeck's embedded database (PGlite) loads, in one place: every
// PGlite jobdeck creates — lib/db/client.ts (in this thread), lib/db/pglite-worker-main.mjs (the
// database thread), lib/db/pglite-init.ts (the initdb child) and the tests' raw instances — takes
// its `extensions` option from here, so a migration's CREATE EXTENSION finds the same set
// everywhere. PostgreSQL ships them as contrib (trusted: the database owner may create them).
//
// Plain JavaScript importing only the PGlite package: the worker thread loads it too.

/** Extension name → the module (package subpath) that exports it under that name. */
export const PGLITE_EXTENSION_MODULES = {
  // Trigram GIN indexes: a name substring search (ILIKE '%…%') is an index scan (docs/design.md "Search").
  pg_trgm: '@electric-sql/pglite/contrib/pg_trgm',
};

/**
 * The `extensions` option of PGlite.create(): `{ name: extension }` for every entry of
 * PGLITE_EXTENSION_MODULES, loaded with dynamic imports.
 * @returns {Promise<Record<string, unknown>>}
 */
export async function pgliteExtensions() {
  const out = {};
  for (const [name, mod] of Object.entries(PGLITE_EXTENSION_MODULES)) out[name] = (await import(mod))[name];
  return out;
}
