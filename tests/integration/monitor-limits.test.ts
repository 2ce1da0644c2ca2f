/**
 * The limits through the monitor (docs/spec.md "resources", "max_duration"), on both databases,
 * with real processes in real control groups (cgroup v1 here, as root): an attempt past its
 * memory ends FAILED "out of memory: limit 64 MB" from its group's OOM count and restarts under
 * its budget, a neighbour job untouched; an attempt past its max_duration is stopped and ends
 * FAILED "exceeded max_duration 2s" — restarted under the budget, never recovered — and the
 * deadline holds across a restart of the monitor (it is the attempt's recorded start +
 * max_duration).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { Fixture, jobTree, story, submit, waitFor, waitTerminal } from './monitor-helpers';

const root = process.getuid?.() === 0;

describe.each(DB_KINDS)('monitor limits on %s', (kind) => {
  const t = useDatabase(kind, `monitor-limits-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('out of memory: FAILED with the limit, restarted per its budget, the neighbour untouched', async () => {
    // A right that is missing fails the suite, never skips it (docs/testing.md).
    if (!root) throw new Error('this test needs root: the attempts run in control groups');
    fx = new Fixture();
    await fx.monitor(db).start();
    const hog = await submit(db, 'name: hog\nresources:\n  memory: 64MB\njob_recovery:\n  max_restarts_on_errors: 1\nrun: perl -e \'$x = "a" x (256*1024*1024)\'\n');
    const calm = await submit(db, 'name: calm\nresources:\n  memory: 64MB\nrun: perl -e \'$x = "a" x (8*1024*1024); sleep 1\'\n');
    const j = await waitTerminal(db, hog);
    expect(j).toMatchObject({ status: 'FAILED', restartCount: 1, recoveryCount: 0, statusReason: 'task 0: out of memory: limit 64 MB; restarts spent (1 of 1)' });
    expect(j.tasks[0].attempts.map((a) => [a.status, a.exitCode, a.statusReason])).toEqual([
      ['FAILED', 137, 'out of memory: limit 64 MB'],
      ['FAILED', 137, 'out of memory: limit 64 MB'],
    ]);
    expect((await jobTree(db, hog))!.tasks[0].attempts[1].cause).toBe('restart');
    expect((await waitTerminal(db, calm)).status).toBe('SUCCEEDED');
  });

  it('max_duration: stopped at the deadline, FAILED with the reason, restarted under the budget, never recovered', async () => {
    fx = new Fixture();
    await fx.monitor(db).start();
    const id = await submit(db, 'name: slow\nmax_duration: 2s\njob_recovery:\n  max_restarts_on_errors: 1\nrun: sleep 60\n');
    const j = await waitTerminal(db, id, 60_000);
    expect(j).toMatchObject({ status: 'FAILED', restartCount: 1, recoveryCount: 0, statusReason: 'task 0: exceeded max_duration 2s; restarts spent (1 of 1)' });
    expect(j.tasks[0].attempts.map((a) => [a.status, a.statusReason])).toEqual([
      ['FAILED', 'exceeded max_duration 2s'],
      ['FAILED', 'exceeded max_duration 2s'],
    ]);
    for (const a of j.tasks[0].attempts) expect(a.endedAt!.getTime() - a.startedAt!.getTime()).toBeGreaterThanOrEqual(2000);
    expect((await story(db, id)).some((l) => l.includes('RECOVERING') || l.includes('LOST'))).toBe(false);
  });

  it('the deadline holds across a restart of the monitor: the attempt is stopped by the next one', async () => {
    fx = new Fixture();
    const first = fx.monitor(db);
    await first.start();
    const id = await submit(db, 'name: outlives\nmax_duration: 3s\nrun: sleep 60\n');
    const running = await waitFor(async () => {
      const j = await jobTree(db, id);
      return j?.tasks[0].attempts[0]?.status === 'RUNNING' ? j.tasks[0].attempts[0] : null;
    }, 'the attempt to run');
    await first.stop();
    // Nothing watches it while it passes its deadline; the next monitor re-adopts and stops it.
    await waitFor(async () => Date.now() - running.startedAt!.getTime() > 3500, 'the deadline to pass');
    await fx.monitor(db).start();
    const j = await waitTerminal(db, id, 30_000);
    expect(j).toMatchObject({ status: 'FAILED', recoveryCount: 0 });
    expect(j.tasks[0].attempts.map((a) => [a.number, a.status, a.statusReason])).toEqual([[1, 'FAILED', 'exceeded max_duration 3s']]);
  });
});
