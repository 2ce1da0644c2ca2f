/**
 * A full disk must not turn a finished job into re-runs: with the data folder on a small tmpfs
 * (mounted and unmounted here: the tests run as root, and fail saying why where mount is
 * refused), a job that fills it
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
import { existsSync, mkdtempSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
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

/** The log pump's marker line (docs/design.md §8 "A full disk and the log"). */
const MARKER = /\[jobdeck\] (\d+) bytes of output lost here: the disk was full \(ENOSPC\)\n/g;

/**
 * The bytes lost when `log` is `printed` with runs left out, each replaced by its marker (`marks`,
 * in order) — the pump starts a marker on a line of its own, with a newline of its own when the
 * loss began mid-line, so each marker is tried with and without one; `trailing`: the last run may
 * have no marker. Null when the log is not that.
 */
function lostRuns(log: string, printed: string, marks: RegExpExecArray[], trailing: boolean): number | null {
  const go = (k: number, from: number, pos: number, lost: number): number | null => {
    const end = k < marks.length ? marks[k].index : log.length;
    const seg = log.slice(from, end);
    const candidates = k < marks.length && seg.endsWith('\n') && seg.length > 1 ? [seg, seg.slice(0, -1)] : [seg];
    for (const c of candidates) {
      if (!printed.startsWith(c, pos)) continue;
      if (k === marks.length) {
        const rest = printed.length - pos - c.length;
        if (rest === 0 || trailing) return lost + rest;
        continue;
      }
      const n = Number(marks[k][1]);
      const r = go(k + 1, end + marks[k][0].length, pos + c.length + n, lost + n);
      if (r !== null) return r;
    }
    return null;
  };
  return go(0, 0, 0, 0);
}

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

describe.each(DB_KINDS)('a full data folder on %s', (kind) => {
  let t: TestDatabase;
  let db: PrismaClient;
  let fx: Fixture;
  let disk: { dir: string; unmount(): void } | undefined;
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
    disk = undefined;
  });

  /** An in-process monitor whose data folder is a fresh 8 MB tmpfs (unmounted after each test). */
  async function onSmallDisk() {
    const m = mountTmpfs(8);
    if (typeof m === 'string') throw new Error(m);
    disk = m;
    fx = new Fixture();
    fx.home = m.dir;
    const mon = fx.monitor(db, { maxRecoveries: 3, recoveryBackoffMs: 50 });
    await mon.start();
    return { m, mon };
  }

  it.each([0, 3])('a job that fills the disk and exits %i ends with that code, run once', async (code) => {
    const { m, mon } = await onSmallDisk();
    // Fills the disk from the attempt folder (the default workdir), then ends: the wrapper's exit
    // record can no longer be written.
    const id = await submit(db, `name: fill-${code}\nrun: |\n  head -c 64M /dev/zero > filler 2>/dev/null\n  exit ${code}\n`);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe(code === 0 ? 'SUCCEEDED' : 'FAILED');
    expect(j.recoveryCount).toBe(0);
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j.tasks[0].attempts[0]).toMatchObject({ exitCode: code, status: code === 0 ? 'SUCCEEDED' : 'FAILED' });
    expect(j.tasks[0].attempts[0].statusReason).toMatch(/disk is full/);
    // The wrapper published no record the disk refused (an empty one reads as malformed: the
    // attempt lost, whichever of the reap and a read of the folder the monitor sees first).
    const record = path.join(path.dirname(j.tasks[0].attempts[0].logPath!), 'exit');
    expect(existsSync(record) ? readFileSync(record, 'utf8') : 'no record').not.toBe('');
    // Reads are served with the disk still full.
    const store = storeOf(db);
    expect((await detail(store, id)).status).toBe(j.status);
    expect((await list(store, { limit: 10, beforeId: null, afterName: null, sort: 'newest' })).jobs.some((x) => x.id === id)).toBe(true);
    // Health says so (degraded, still ok); a new job waits (no attempt) while the disk is full.
    const h = await health(() => t.db, m.dir);
    expect(h.ok).toBe(true);
    expect(h.degraded?.[0]).toMatch(/disk is full/);
    const next = await submit(db, 'name: after\nrun: echo after\n');
    await mon.reconcileNow();
    const waiting = (await detail(store, next));
    expect(waiting.status).toBe('PENDING');
    expect(waiting.tasks[0].attemptList).toHaveLength(0);
    // Room again: health is plain, and the waiting job runs.
    // The job ran in its attempt's workspace (`work/`, docs/design.md §16).
    rmSync(path.join(path.dirname(j.tasks[0].attempts[0].logPath!), 'work', 'filler'));
    expect((await health(() => t.db, m.dir)).degraded).toBeUndefined();
    expect((await waitTerminal(db, next, 120_000)).status).toBe('SUCCEEDED');
  });
  // The log pump (docs/design.md §8): what the log could not take is counted and marked. Lines
  // alternate stdout and stderr (one pipe: the log keeps their order); the disk fills after line
  // 40 and, in the first case, frees after line 240, so the marker goes before line 241's bytes;
  // in the second it stays full, so neither the marker nor the exit record can be written and the
  // count reaches the attempt through the pump's own file.
  it.each([true, false])('a job printing while the disk fills (room again: %s) has its lost bytes counted and marked', async (frees) => {
    await onSmallDisk();
    const pad = 'x'.repeat(50);
    const line = (i: number) => `line ${String(i).padStart(4, '0')} ${pad}\n`;
    const lines = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => line(a + k)).join('');
    const last = frees ? 300 : 240;
    const printed = lines(1, last);
    const run = [
      `p() { for i in $(seq $1 $2); do if [ $((i % 2)) = 0 ]; then printf 'line %04d ${pad}\\n' $i; else printf 'line %04d ${pad}\\n' $i >&2; fi; done; }`,
      'p 1 40',
      'head -c 64M /dev/zero > filler 2>/dev/null',
      'p 41 240',
      // Room again only once the pump has taken all of lines 1–240 from the pipe — each byte in
      // the log (../run.log) or counted lost (../exit.lost, beside the exit record): on a busy
      // machine it could otherwise read them after the rm, find room, and lose nothing (a CI run did).
      ...(frees ? [`w=0; until [ $(( $(tr -d ' ' < ../exit.lost) + $(stat -c %s ../run.log) )) -ge ${lines(1, 240).length} ] || [ $w -ge 1200 ]; do sleep 0.05; w=$((w+1)); done`, 'rm filler', 'p 241 300'] : []),
    ];
    const id = await submit(db, `name: lost-${frees}\nrun: |\n${run.map((l) => `  ${l}\n`).join('')}`);
    const j = await waitTerminal(db, id);
    const att = j.tasks[0].attempts[0];
    expect(j.status).toBe('SUCCEEDED');
    expect(j.recoveryCount).toBe(0);
    const log = readFileSync(att.logPath!, 'utf8');
    if (!frees) rmSync(path.join(path.dirname(att.logPath!), 'work', 'filler'));
    // The log must be exactly what was printed with runs of bytes left out, each run replaced by
    // a marker that names its length (no reordering, nothing else added); while the disk stays
    // full at the end, the last run has no marker (it could not be written).
    const marks = [...log.matchAll(MARKER)];
    if (frees) expect(marks.length).toBeGreaterThan(0);
    const lost = lostRuns(log, printed, marks, !frees);
    expect(lost).not.toBeNull();
    expect(lost).toBeGreaterThan(4096);
    expect(att.logLostBytes).toBe(lost);
    const view = (await detail(storeOf(db), id)).tasks[0].attemptList[0];
    expect(view.logLostBytes).toBe(lost);
    // The next job, with room, has exactly its output and nothing lost.
    const next = await submit(db, 'name: after\nrun: |\n  echo out; echo err >&2; printf end\n');
    const n = await waitTerminal(db, next, 120_000);
    expect(n.status).toBe('SUCCEEDED');
    expect(readFileSync(n.tasks[0].attempts[0].logPath!, 'utf8')).toBe('out\nerr\nend');
    expect(n.tasks[0].attempts[0].logLostBytes).toBeNull();
  });
});

describe('a real server with its data folder on a full disk (PostgreSQL)', () => {
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
    // Without a token it is told that the disk is full, not where the data folder is; with one, where.
    expect(JSON.stringify(h)).not.toContain(disk.dir);
    expect(JSON.stringify(await (await first.api('/api/health')).json())).toContain(disk.dir);
    await first.stop();

    // The disk is still full: the server starts, and serves the job and the list.
    const second = await startServerProcess({ home: disk.dir, token: first.token, env });
    servers.push(second);
    expect((await ended(second)).status).toBe('SUCCEEDED');
    expect((await second.api('/api/jobs')).status).toBe(200);
    expect(((await (await fetch(`${second.url}/api/health`)).json()) as { degraded?: string[] }).degraded).toHaveLength(1);
  });
});
