/**
 * Migrated databases made once and copied by every suite (docs/testing.md, "Database templates"):
 * creating a database from nothing costs PGlite an initdb (~4 s of CPU) and PostgreSQL every
 * migration (~1–2 s), per suite and per server start; a copy of a migrated one costs a fraction.
 * The copies are real databases of the same engine and schema; what the first start of an empty
 * database does is tested where it is the subject (db-first-start, migrations, readme-first-job).
 *
 * - PostgreSQL: a database `jd_tpl_<key>` on the test server, cloned by `CREATE DATABASE …
 *   TEMPLATE` (tests/helpers/db.ts). It does not accept connections, so nothing (autovacuum
 *   included) holds it while it is cloned.
 * - PGlite: a migrated data folder `<tmp>/jobdeck-test-templates/pglite-<key>/db`, copied into a
 *   fresh server's data folder (tests/helpers/server.ts), and its dump `dump.tar`, loaded by the
 *   in-memory databases of useDatabase().
 *
 * `<key>` hashes the migration files and the PGlite version: a changed migration makes a new
 * template. Whoever needs one first makes it — vitest's and Playwright's global setups, or a
 * single test file run alone — in a private place it then renames into place (atomic; a loser of
 * the race drops its own copy), so concurrent runs never see half a template.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate, migrationsDir, readMigrations } from '../../lib/db/migrate';
import { initPgliteFolder } from '../../lib/db/pglite-init';
import { testPgUrl } from './pg-admin';

const ROOT = path.resolve(__dirname, '..', '..');
const TEMPLATES = path.join(os.tmpdir(), 'jobdeck-test-templates');

/** What the templates are made of: every migration, and the PGlite that reads the folder. */
export function templateKey(): string {
  const h = createHash('sha1');
  for (const m of readMigrations(migrationsDir())) h.update(`${m.name}\0${m.checksum}\0`);
  h.update(JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')).version as string);
  return h.digest('hex').slice(0, 12);
}

/** The PGlite template of the current migrations: its data folder and its dump. */
export interface PgliteTemplate {
  /** A migrated PGlite data folder (never opened by a test: copy it). */
  dir: string;
  /** `dumpDataDir()` of the same database, a tarball for `PGlite.create({ loadDataDir })`. */
  dump: string;
}

function pgliteTemplatePaths(key: string): PgliteTemplate & { root: string } {
  const root = path.join(TEMPLATES, `pglite-${key}`);
  return { root, dir: path.join(root, 'db'), dump: path.join(root, 'dump.tar') };
}

/** The PGlite template, made when missing. */
export async function pgliteTemplate(): Promise<PgliteTemplate> {
  const key = templateKey();
  const want = pgliteTemplatePaths(key);
  if (existsSync(want.dump)) return want;
  mkdirSync(TEMPLATES, { recursive: true });
  const tmp = path.join(TEMPLATES, `.making-${key}-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(tmp);
    const dir = path.join(tmp, 'db');
    // The product's own path to a migrated folder: initdb in a child process, then the migrations.
    await initPgliteFolder(dir);
    const { PGlite } = await import('@electric-sql/pglite');
    const { pgliteExtensions } = await import('../../lib/db/pglite-extensions.mjs');
    const pglite = await PGlite.create(dir, { extensions: await pgliteExtensions() });
    let dump: Blob;
    try {
      await migrate({
        exec: async (sql) => {
          await pglite.exec(sql);
        },
        query: async <T,>(sql: string, params: unknown[] = []) => (await pglite.query<T>(sql, params)).rows,
      });
      dump = await pglite.dumpDataDir('none');
    } finally {
      await pglite.close();
    }
    writeFileSync(path.join(tmp, 'dump.tar'), Buffer.from(await dump.arrayBuffer()));
    try {
      renameSync(tmp, want.root);
    } catch (err) {
      // Another run made it meanwhile: use theirs.
      if (!existsSync(want.dump)) throw err;
    }
    pruneOld(`pglite-${key}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return want;
}

/** Removes PGlite templates of older migrations not used for a day (a developer's temp folder). */
function pruneOld(keep: string): void {
  for (const name of readdirSync(TEMPLATES)) {
    if (name === keep) continue;
    const p = path.join(TEMPLATES, name);
    try {
      if (Date.now() - statSync(p).mtimeMs > 86_400_000) rmSync(p, { recursive: true, force: true });
    } catch {
      /* another run is removing it */
    }
  }
}

/** Copies the PGlite template's folder to `dest` (a server's `<home>/db`, which must not exist). */
export async function copyPgliteTemplate(dest: string): Promise<void> {
  const t = await pgliteTemplate();
  cpSync(t.dir, dest, { recursive: true, errorOnExist: true, force: false });
}

/** The dump of the PGlite template, as a Blob for `PGlite.create({ loadDataDir })`. */
export async function pgliteTemplateDump(): Promise<Blob> {
  const t = await pgliteTemplate();
  return new Blob([readFileSync(t.dump)]);
}

/** Name of the PostgreSQL template database of the current migrations. */
export function pgTemplateName(): string {
  return `jd_tpl_${templateKey()}`;
}

/** The PostgreSQL template database, made when missing; answers its name. */
export async function pgTemplate(): Promise<string> {
  const name = pgTemplateName();
  const admin = new pg.Client({ connectionString: testPgUrl() });
  await admin.connect();
  try {
    if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return name;
    const tmp = `jd_tplnew_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE DATABASE "${tmp}"`);
    try {
      const u = new URL(testPgUrl());
      u.pathname = `/${tmp}`;
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      try {
        await migrate({
          exec: async (sql) => {
            await c.query(sql);
          },
          query: async <T,>(sql: string, params: unknown[] = []) => (await c.query(sql, params)).rows as T[],
        });
      } finally {
        await c.end();
      }
      await admin.query(`ALTER DATABASE "${tmp}" ALLOW_CONNECTIONS false`);
      try {
        await admin.query(`ALTER DATABASE "${tmp}" RENAME TO "${name}"`);
      } catch (err) {
        // 42P04: another run made it meanwhile; use theirs.
        if ((err as { code?: string }).code !== '42P04') throw err;
        await admin.query(`DROP DATABASE IF EXISTS "${tmp}"`);
      }
    } catch (err) {
      await admin.query(`DROP DATABASE IF EXISTS "${tmp}" WITH (FORCE)`).catch(() => undefined);
      throw err;
    }
    return name;
  } finally {
    await admin.end();
  }
}
