/**
 * A full disk must not turn a finished job into re-runs: with the data folder on a small tmpfs
 * (mounted and unmounted here; skipped, saying why, where mount is refused), a job that fills it
 * ends with its own exit code even though its wrapper could not write the exit record — jobdeck
 * was its parent and saw the exit — with a reason that says the disk is full, zero recoveries,
 * and reads served throughout; while the disk stays full, /api/health says degraded, new
 * attempts wait, and a restarted server starts and serves reads. The monitor in-process on both
 * databases (they live outside the full folder), and a real server on PostgreSQL; a PGlite
 * database inside the full folder could not record any status change, which no rule here
 * changes. The real local executor throughout.
 *
 * Needs a built app for the server case: `JOBDECK_NEXT_DIST=<dir> npx next build`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { detail, list } from '../../lib/api/jobs';
import { health } from '../../lib/api/health';
import { storeOf } from '../helpers/store';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import type { JobDetail } from '../../lib/api/types';
import { Fixture, submit, waitTerminal } from './monitor-helpers';

/** Mounts a tmpfs of `mb` MB at a new folder; null (with why) when this machine refuses. */
function mountTmpfs(mb: number): { dir: string; unmount(): void } | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmdirSync(dir);
    return `cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmdirSync(dir);
    },
  };
}

const probe = mountTmpfs(1);
const mountRefused = typeof probe === 'string' ? probe : null;
if (typeof probe !== 'string') probe.unmount();
if (mountRefused) console.warn(`skipping the full-disk tests: ${mountRefused}`);

describe.skipIf(mountRefused !== null).each(DB_KINDS)('a full data folder on %s', (kind) => {
  let t: TestDatabase;
  let db: PrismaClient;
  let fx: Fixture;
  let disk: { dir: string; unmount(): void };
  beforeAll(async () => {
    t = await createTestDatabase(kind, `disk-full-${kind}`);
    db = t.db.prisma;
  });
  afterAll(async () => {
    await t?.dispose();
  });
  afterEach(async () => {
    await fx?.cleanup(db);
    disk?.unmount();
  });

  it.each([0, 3])('a job that fills the disk and exits %i ends with that code, run once', async (code) => {
    const m = mountTmpfs(8);
    if (typeof m === 'string') throw new Error(m);
    disk = m;
    fx = new Fixture();
    fx.home = disk.dir;
    const mon = fx.monitor(db, { maxRecoveries: 3, recoveryBackoffMs: 50 });
    await mon.start();
    // Fills the disk from the attempt folder (the default workdir), then ends: the wrapper's exit
    // record can no longer be written.
    const id = await submit(db, `name: fill-${code}\nrun: |\n  head -c 64M /dev/zero > filler 2>/dev/null\n  exit ${code}\n`);
    const j = await waitTerminal(db, id, 60_000);
    expect(j.status).toBe(code === 0 ? 'SUCCEEDED' : 'FAILED');
    expect(j.recoveryCount).toBe(0);
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j.tasks[0].attempts[0]).toMatchObject({ exitCode: code, status: code === 0 ? 'SUCCEEDED' : 'FAILED' });
    expect(j.tasks[0].attempts[0].statusReason).toMatch(/disk is full/);
    // Reads are served with the disk still full.
    const store = storeOf(db);
    expect((await detail(store, id)).status).toBe(j.status);
    expect((await list(store, { limit: 10, beforeId: null, afterName: null, sort: 'newest' })).jobs.some((x) => x.id === id)).toBe(true);
    // Health says so (degraded, still ok); a new job waits (no attempt) while the disk is full.
    const h = await health(() => t.db, disk.dir);
    expect(h.ok).toBe(true);
    expect(h.degraded?.[0]).toMatch(/disk is full/);
    const next = await submit(db, 'name: after\nrun: echo after\n');
    await mon.reconcileNow();
    const waiting = (await detail(store, next));
    expect(waiting.status).toBe('PENDING');
    expect(waiting.tasks[0].attemptList).toHaveLength(0);
    // Room again: health is plain, and the waiting job runs.
    rmSync(path.join(path.dirname(j.tasks[0].attempts[0].logPath!), 'filler'));
    expect((await health(() => t.db, disk.dir)).degraded).toBeUndefined();
    expect((await waitTerminal(db, next, 30_000)).status).toBe('SUCCEEDED');
  }, 120_000);
});

describe.skipIf(mountRefused !== null)('a real server with its data folder on a full disk (PostgreSQL)', () => {
  const servers: ServerProcess[] = [];
  let pg: TestDatabase | undefined;
  let disk: { dir: string; unmount(): void } | undefined;
  afterAll(async () => {
    for (const s of servers) await s.dispose({ keepHome: true });
    disk?.unmount();
    await pg?.dispose();
  });

  it('serves reads, reports degraded health, runs the job once, and starts again while the disk is full', async () => {
    const m = mountTmpfs(16);
    if (typeof m === 'string') throw new Error(m);
    disk = m;
    pg = await createTestDatabase('postgresql', 'disk-full-server');
    const env = { DATABASE_URL: pg.url!, JOBDECK_MAX_RECOVERIES: '3', JOBDECK_RECOVERY_BACKOFF_MS: '50' };
    const first = await startServerProcess({ home: disk.dir, env });
    servers.push(first);
    const sub = await first.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'name: fill\nrun: |\n  head -c 64M /dev/zero > filler 2>/dev/null\n  exit 0\n' });
    expect(sub.status).toBe(201);
    const { id } = (await sub.json()) as { id: number };
    const ended = async (s: ServerProcess) => {
      for (;;) {
        const d = (await (await s.api(`/api/jobs/${id}`)).json()) as JobDetail;
        if (['SUCCEEDED', 'FAILED', 'FAILED_CONTROLLER', 'CANCELLED'].includes(d.status)) return d;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const d = await ended(first);
    expect(d.status).toBe('SUCCEEDED');
    expect(d.recoveryCount).toBe(0);
    expect(d.tasks[0].attemptList).toHaveLength(1);
    const h = (await (await fetch(`${first.url}/api/health`)).json()) as { ok: boolean; degraded?: string[] };
    expect(h).toMatchObject({ ok: true, degraded: [expect.stringMatching(/disk is full/)] });
    await first.stop();

    // The disk is still full: the server starts, and serves the job and the list.
    const second = await startServerProcess({ home: disk.dir, token: first.token, env });
    servers.push(second);
    expect((await ended(second)).status).toBe('SUCCEEDED');
    expect((await second.api('/api/jobs')).status).toBe(200);
    expect(((await (await fetch(`${second.url}/api/health`)).json()) as { degraded?: string[] }).degraded).toHaveLength(1);
  }, 240_000);
});
