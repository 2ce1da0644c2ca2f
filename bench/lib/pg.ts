/** Fresh PostgreSQL databases for the bench, dropped at cleanup. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onCleanup } from './cleanup';

function withDb(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Creates an empty database `jd_bench_<label>_<random>` on the server of `adminUrl` and
 * registers its DROP (… WITH (FORCE)) as a cleanup step.
 * @returns its URL and a drop function (idempotent).
 * @throws when the server is unreachable or the role may not create databases.
 */
export async function createPgDatabase(adminUrl: string, label: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `jd_bench_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const drop = onCleanup(`drop database ${name}`, async () => {
    const a = new pg.Client({ connectionString: adminUrl });
    await a.connect();
    try {
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await a.end();
    }
  });
  return { url: withDb(adminUrl, name), name, drop };
}
