/**
 * Leftovers: processes an attempt started and did not wait for (`sleep 301 &`) must not outlive
 * the attempt. When the monitor sees an attempt end (exited or lost) it stops what is left of its
 * process group / session (executor.cancel with the leftover grace) right after the status write;
 * the next attempt, the next task and the next job needing those CPUs start only once the
 * leftovers are gone; deleting a job stops anything of it still running. Model: Ray's job
 * supervisor and Slurm, which both end every process of a job when the job ends.
 * Real database (both kinds), real processes, in-process monitor.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { isLiveState, readProcStat } from '../../lib/executors/local/proc';
import { deleteJobs } from '../../lib/control';
import { storeOf } from '../helpers/store';
import { Fixture, groupAlive, jobTree, submit, waitFor, waitTerminal, wrapExecutor } from './monitor-helpers';

/** True while `pid` is a live (non-zombie) process. */
function alive(pid: number): boolean {
  const s = readProcStat(pid);
  return !!s && isLiveState(s.state);
}

/** Reads a pid a job wrote into `file` (waits for it). */
async function pidFrom(file: string): Promise<number> {
  return waitFor(async () => {
    if (!existsSync(file)) return null;
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 1 ? n : null;
  }, `a pid in ${file}`);
}

/**
 * A bash line that prints "<label>: gone" when process `$var` is gone or a zombie (already
 * killed, waiting for a parent that never reaps), else "<label>: ALIVE (state X)".
 */
function stateLine(label: string, pidFile: string): string {
  return `p=$(cat ${pidFile}); s=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -d' ' -f1); case "$s" in ''|Z|X) echo "${label}: gone";; *) echo "${label}: ALIVE (state $s)";; esac`;
}

describe.each(DB_KINDS)('attempt leftovers on %s', (kind) => {
  const t = useDatabase(kind, `monitor-leftovers-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  const extra: number[] = [];
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    for (const pid of extra.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await fx?.cleanup(db);
  });

  it('a job that leaves `sleep 301 &` behind ends SUCCEEDED and nothing of its process group remains', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const childFile = path.join(fx.home, 'child');
    const id = await submit(db, ['name: leftover', 'run: |', `  sleep 301 & echo $! > ${childFile}`, '  echo started; exit 0', ''].join('\n'));
    const child = await pidFrom(childFile);
    extra.push(child);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    const pgid = j.tasks[0].attempts[0].pid!;
    expect(pgid).toBeGreaterThan(1);
    // sleep dies on SIGTERM: gone well within the leftover grace.
    await waitFor(async () => !groupAlive(pgid), `the process group ${pgid} to be empty`, 120_000);
    expect(alive(child)).toBe(false);
  });

  it('a failed attempt’s leftovers are gone before the restart starts, and a task’s before the next task', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const c1 = path.join(fx.home, 'child-a1');
    const c2 = path.join(fx.home, 'child-a2');
    // Attempt 1 leaves a child and fails; attempt 2 reports on it, leaves another child and
    // succeeds; task 1 reports on that one.
    const yaml = [
      'name: leftover-restart',
      'job_recovery:',
      '  max_restarts_on_errors: 1',
      'run: |',
      '  if [ "$JOBDECK_ATTEMPT" = 1 ]; then',
      `    sleep 302 & echo $! > ${c1}`,
      '    exit 1',
      '  fi',
      `  ${stateLine('attempt 1 child', c1)}`,
      `  sleep 303 & echo $! > ${c2}`,
      '  exit 0',
      '---',
      'run: |',
      `  ${stateLine('task 0 child', c2)}`,
      '',
    ].join('\n');
    const id = await submit(db, yaml);
    extra.push(await pidFrom(c1));
    const j = await waitTerminal(db, id);
    extra.push(await pidFrom(c2));
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts.map((a) => a.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(readFileSync(j.tasks[0].attempts[1].logPath!, 'utf8')).toContain('attempt 1 child: gone');
    expect(readFileSync(j.tasks[1].attempts[0].logPath!, 'utf8')).toContain('task 0 child: gone');
    for (const a of [...j.tasks[0].attempts, ...j.tasks[1].attempts]) {
      await waitFor(async () => !groupAlive(a.pid!), `the process group ${a.pid} to be empty`, 120_000);
    }
  });

  it('a job whose leftover ignores SIGTERM keeps its CPUs until SIGKILL after the grace; the next job starts after', async () => {
    fx = new Fixture(); // the executor has 4 CPUs
    const graceMs = 1200;
    const m = fx.monitor(db, { leftoverGraceMs: graceMs });
    await m.start();
    const child = path.join(fx.home, 'stubborn');
    const a = await submit(db, [
      'name: stubborn-leftover',
      'resources:',
      '  cpus: 4',
      'run: |',
      `  ( trap '' TERM; exec sleep 304 ) & echo $! > ${child}`,
      '  exit 0',
      '',
    ].join('\n'));
    const b = await submit(db, ['name: after', 'resources:', '  cpus: 4', 'run: |', `  ${stateLine('previous job child', child)}`, ''].join('\n'));
    extra.push(await pidFrom(child));
    const ja = await waitTerminal(db, a);
    expect(ja.status).toBe('SUCCEEDED');
    const jb = await waitTerminal(db, b);
    expect(jb.status).toBe('SUCCEEDED');
    expect(readFileSync(jb.tasks[0].attempts[0].logPath!, 'utf8')).toContain('previous job child: gone');
    // The stubborn child got its grace: job b started no sooner than the grace after a's end.
    expect(jb.tasks[0].attempts[0].startedAt!.getTime() - ja.endedAt!.getTime()).toBeGreaterThanOrEqual(graceMs - 100);
  });

  it('deleting a job stops what is left of its attempts (even when its monitor never reaped them)', async () => {
    fx = new Fixture();
    // A monitor whose executor cannot stop anything: as if jobdeck died between the status write
    // and the reap of the leftovers.
    const m = fx.monitor(db, { executor: wrapExecutor(fx.executor, { cancel: async () => undefined }) });
    await m.start();
    const childFile = path.join(fx.home, 'child');
    const id = await submit(db, ['name: leftover-delete', 'run: |', `  sleep 305 & echo $! > ${childFile}`, '  exit 0', ''].join('\n'));
    const child = await pidFrom(childFile);
    extra.push(child);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(alive(child)).toBe(true);
    const r = await deleteJobs(storeOf(db), [id], { home: fx.home, executor: () => fx.executor });
    expect(r.deleted).toEqual([id]);
    expect(alive(child)).toBe(false);
    expect(groupAlive(j.tasks[0].attempts[0].pid!)).toBe(false);
    expect(await jobTree(db, id)).toBeNull();
  });

  // docs/design.md §7: an exit watch only while the attempt runs — the step that finds it ended
  // settles it without a new one (for a local attempt: an fs.watch made and removed at once).
  it('each attempt is watched once: the step that settles its end makes no new watch', async () => {
    fx = new Fixture();
    const watches = new Map<string, number>();
    const executor = wrapExecutor(fx.executor, {
      watch: (h, l) => {
        watches.set(h.ref, (watches.get(h.ref) ?? 0) + 1);
        return fx.executor.watch(h, l);
      },
    });
    const m = fx.monitor(db, { executor });
    await m.start();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await submit(db, ['name: watched-once', 'run: |', '  sleep 0.3; echo done', ''].join('\n')));
    for (const id of ids) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
    expect(watches.size).toBe(3);
    expect([...watches.values()]).toEqual([1, 1, 1]);
  });
});
