import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The test PostgreSQL server's administration, without the database layer: the Playwright tests
 * load this file too, and their loader cannot load the generated Prisma client (ES modules).
 */

/**
 * Admin URL of the test PostgreSQL server (a role that may CREATE DATABASE). `.ci/run` and
 * `npm test` start the server and create the role; override with JOBDECK_TEST_PG_URL.
 */
export function testPgUrl(): string {
  return process.env.JOBDECK_TEST_PG_URL || 'postgresql://jobdeck:jobdeck@127.0.0.1:5432/jobdeck';
}

function withDb(url: string, dbName: string): string {
  const u = new URL(url);
  u.pathname = `/${dbName}`;
  return u.toString();
}

/**
 * DROP DATABASE … WITH (FORCE), tried again for a few seconds when it may not end a backend:
 * an autovacuum worker that just started on the database runs as the superuser, and the test
 * role may not terminate it (SQLSTATE 42501); the worker is gone a moment later.
 */
async function dropForced(a: pg.Client, name: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '42501' || i >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Creates an empty PostgreSQL database (no migrations) and returns its URL and a drop function;
 * for tests of the migration runner itself.
 */
export function createEmptyPgDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  return createPgDatabaseFrom(null, label);
}

/**
 * Creates a PostgreSQL database as a copy of the database `template` (`CREATE DATABASE …
 * TEMPLATE`: tests/helpers/db-templates.ts), or an empty one when null; returns its URL and a
 * drop function. A template that another session is still leaving (SQLSTATE 55006) is tried
 * again for a few seconds.
 */
export async function createPgDatabaseFrom(template: string | null, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `jd_${createHash('sha1').update(label).digest('hex').slice(0, 8)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testPgUrl() });
  await admin.connect();
  try {
    for (let i = 0; ; i++) {
      try {
        await admin.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || i >= 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.end();
  }
  return {
    url: withDb(testPgUrl(), name),
    drop: async () => {
      const a = new pg.Client({ connectionString: testPgUrl() });
      await a.connect();
      try {
        await dropForced(a, name);
      } finally {
        await a.end();
      }
    },
  };
}
