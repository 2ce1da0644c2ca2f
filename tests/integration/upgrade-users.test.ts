/**
 * Upgrade to users and roles: a database as the release before users left it (one admin token,
 * jobs, a queue, a webhook) migrates; its jobs, queue and webhook belong to the first admin
 * (user 1), and the admin token still authenticates — as that admin, also through a real server
 * started on such a PostgreSQL database (it migrates it at start); the audit log refuses edits.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../lib/auth/guard';
import { loadAuth } from '../../lib/auth/state';
import { generateToken } from '../../lib/auth/tokens';
import { migrate, readMigrations, type RawSql } from '../../lib/db/migrate';
import { createEmptyPgDatabase, DB_KINDS } from '../helpers/db';
import { pgRaw, openEmptyRawSql } from '../helpers/raw-sql';
import { startServerProcess } from '../helpers/server';

/** The first migration of users: everything before it is the release being upgraded from. */
const FIRST_USERS_MIGRATION = '20261222000000_users';

/** Rows as the previous release wrote them (its columns only). */
async function seedOldRelease(sql: RawSql): Promise<void> {
  for (const name of ['one', 'two']) {
    await sql.query(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash") VALUES ($1, 'run: echo', '{}'::jsonb, 'h')`, [name]);
  }
  await sql.exec(`INSERT INTO "Queue" ("name", "maxRunning") VALUES ('gpu', 2)`);
  await sql.exec(`INSERT INTO "WebhookSubscription" ("name", "url", "events", "secretEnc") VALUES ('ops', 'https://example.com/h', ARRAY['*'], 'x')`);
}

describe.each(DB_KINDS)('upgrade to users (%s)', (kind) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  const open = () => openEmptyRawSql(kind, 'upgrade-users', cleanups);


  it("gives the old release's jobs, queues and webhooks to the first admin", async () => {
    const sql = await open();
    const all = readMigrations();
    const old = all.filter((m) => m.name < FIRST_USERS_MIGRATION);
    expect(old.length).toBeLessThan(all.length);
    await migrate(sql, old);
    await seedOldRelease(sql);
    const result = await migrate(sql, all);
    expect(result.applied[0]).toBe(FIRST_USERS_MIGRATION);

    const users = await sql.query<{ id: number; name: string; role: string }>(`SELECT "id", "name", "role" FROM "User" ORDER BY "id"`);
    expect(users).toEqual([{ id: 1, name: 'admin', role: 'admin' }]);
    const jobs = await sql.query<{ userId: number | null }>(`SELECT "userId" FROM "Job" ORDER BY "id"`);
    expect(jobs).toEqual([{ userId: 1 }, { userId: 1 }]);
    expect(await sql.query(`SELECT "userId" FROM "Queue"`)).toEqual([{ userId: 1 }]);
    expect(await sql.query(`SELECT "userId" FROM "WebhookSubscription"`)).toEqual([{ userId: 1 }]);
    // A user created next does not collide with the migration's row.
    const next = await sql.query<{ id: number }>(`INSERT INTO "User" ("name", "role") VALUES ('ann', 'member') RETURNING "id"`);
    expect(next[0].id).toBe(2);
  });

  it('refuses to edit or delete an audit row (append-only)', async () => {
    const sql = await open();
    await migrate(sql);
    await sql.exec(`INSERT INTO "AuditEvent" ("action", "userId", "userName") VALUES ('login', 1, 'admin')`);
    await expect(sql.exec(`UPDATE "AuditEvent" SET "action" = 'x'`)).rejects.toThrow(/append-only/);
    await expect(sql.exec(`DELETE FROM "AuditEvent"`)).rejects.toThrow(/append-only/);
    expect(await sql.query(`SELECT "action" FROM "AuditEvent"`)).toEqual([{ action: 'login' }]);
  });
});

describe('the admin token after the upgrade', () => {
  it('authenticates as the first admin (user 1, role admin)', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'jd-upgrade-'));
    const token = generateToken();
    writeFileSync(path.join(home, 'token'), `${token}\n`, { mode: 0o600 });
    const { state } = loadAuth({ home, env: {} });
    const { identity } = authenticate((n) => (n === 'authorization' ? `Bearer ${token}` : undefined), state);
    expect(identity).toMatchObject({ user: { id: 1, name: 'admin', role: 'admin' }, via: 'bearer', tokenId: null });
  });
});

describe('a server started on a database of the release before users', () => {
  it('migrates it; the old admin token still works, as the admin, and its jobs are the admin\'s', async () => {
    const { url, drop } = await createEmptyPgDatabase('upgrade-server');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const token = generateToken();
    try {
      await migrate(pgRaw(client), readMigrations().filter((m) => m.name < FIRST_USERS_MIGRATION));
      await seedOldRelease(pgRaw(client));
    } finally {
      await client.end();
    }
    const server = await startServerProcess({ token, env: { DATABASE_URL: url } });
    try {
      const me = await server.api('/api/users/me');
      expect(await me.json()).toMatchObject({ id: 1, name: 'admin', role: 'admin' });
      const list = (await (await server.api('/api/jobs?status=PENDING,CANCELLED,SUCCEEDED,FAILED&limit=10')).json()) as { jobs: Array<{ name: string; owner: string }> };
      expect(list.jobs.map((j) => [j.name, j.owner]).sort()).toEqual([['one', 'admin'], ['two', 'admin']]);
      const mine = (await (await server.api('/api/jobs?owner=me')).json()) as { jobs: unknown[] };
      expect(mine.jobs).toHaveLength(2);
    } finally {
      await server.dispose();
      await drop();
    }
  });
});
