/**
 * The restart backoff (docs/spec.md "job_recovery" `restart_backoff`; lib/jobs/retry
 * restartDelayMs): with the real monitor, the real local executor and both databases, a task
 * whose setup fails waits out its backoff before the next attempt — the job says when that is
 * (Job.nextAttemptAt, JobSummary.nextAttemptAt) — and the wait survives a restart of the
 * monitor, grows per attempt, ends with a cancel. Time moves through an injected clock, so no
 * test sleeps through a backoff.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { getJobSummary } from '../../lib/api/views';
import { requestCancel } from '../../lib/control';
import { storeOf } from '../helpers/store';
import { Fixture, jobTree, submit, waitFor, waitTerminal } from './monitor-helpers';

/** Waits until the job's task 0 has `n` attempts and its latest is terminal (FAILED_SETUP here). */
async function attemptEnded(db: PrismaClient, id: number, n: number) {
  return waitFor(async () => {
    const j = await jobTree(db, id);
    const a = j?.tasks[0].attempts;
    return a && a.length === n && a[n - 1].status === 'FAILED_SETUP' && j!.nextAttemptAt ? j : null;
  }, `job ${id}: attempt ${n} ended, its restart waiting`);
}

describe.each(DB_KINDS)('restart backoff on %s', (kind) => {
  const t = useDatabase(kind, `monitor-restart-backoff-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    offset = 0;
    await fx?.cleanup(db);
  });

  it('waits restart_backoff after a failed setup, doubling per attempt; the job says when the next attempt starts', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { clock });
    await m.start();
    const id = await submit(db, 'name: flaky-setup\nsetup: exit 1\nrun: "true"\njob_recovery:\n  max_restarts_on_errors: 2\n  restart_backoff: 60s\n');
    const j1 = await attemptEnded(db, id, 1);
    const ended1 = j1.tasks[0].attempts[0].endedAt!.getTime();
    expect(j1.nextAttemptAt!.getTime()).toBe(ended1 + 60_000);
    expect([j1.status, j1.tasks[0].status, j1.restartCount]).toEqual(['RUNNING', 'RUNNING', 0]);
    expect((await getJobSummary(storeOf(db), id))!.nextAttemptAt).toBe(new Date(ended1 + 60_000).toISOString());
    // Nothing starts before the time, however often the job is stepped.
    await m.reconcileNow();
    await m.idle();
    expect((await jobTree(db, id))!.tasks[0].attempts).toHaveLength(1);

    // The time comes: attempt 2 starts (a counted restart), fails, and waits twice as long.
    offset = ended1 + 60_000 - Date.now();
    m.wake(id);
    const j2 = await attemptEnded(db, id, 2);
    const [a1, a2] = j2.tasks[0].attempts;
    expect(a2.cause).toBe('restart');
    expect(clock.now()).toBeGreaterThanOrEqual(a1.endedAt!.getTime() + 60_000);
    expect(j2.nextAttemptAt!.getTime()).toBe(a2.endedAt!.getTime() + 120_000);
    expect(j2.restartCount).toBe(1);

    offset = a2.endedAt!.getTime() + 120_000 - Date.now();
    m.wake(id);
    const done = await waitTerminal(db, id);
    expect(done.status).toBe('FAILED_SETUP');
    expect(done.tasks[0].attempts).toHaveLength(3);
    expect(done.nextAttemptAt).toBeNull();
    expect((await getJobSummary(storeOf(db), id))!.nextAttemptAt).toBeNull();
  });

  it("the server's default applies when the spec gives none; the wait survives a restart of the monitor", async () => {
    fx = new Fixture();
    const first = fx.monitor(db, { clock, restartBackoffMs: 45_000 });
    await first.start();
    const id = await submit(db, 'name: flaky\nrun: exit 3\njob_recovery:\n  max_restarts_on_errors: 1\n');
    const j1 = await waitFor(async () => {
      const j = await jobTree(db, id);
      return j?.tasks[0].attempts[0]?.status === 'FAILED' && j.nextAttemptAt ? j : null;
    }, 'attempt 1 failed, its restart waiting');
    const due = j1.tasks[0].attempts[0].endedAt!.getTime() + 45_000;
    expect(j1.nextAttemptAt!.getTime()).toBe(due);
    await first.stop();

    // A new monitor (a restarted server) takes the same decision from what is stored.
    const second = fx.monitor(db, { clock, restartBackoffMs: 45_000 });
    await second.start();
    await second.idle();
    const again = (await jobTree(db, id))!;
    expect(again.tasks[0].attempts).toHaveLength(1);
    expect(again.nextAttemptAt!.getTime()).toBe(due);
    offset = due - Date.now();
    second.wake(id);
    const done = await waitTerminal(db, id);
    expect(done.status).toBe('FAILED');
    expect(done.tasks[0].attempts.map((a) => a.cause)).toEqual(['first', 'restart']);
  });

  it('a cancel during the wait ends the job CANCELLED without another attempt', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { clock });
    await m.start();
    const id = await submit(db, 'name: give-up\nsetup: exit 1\nrun: "true"\njob_recovery:\n  max_restarts_on_errors: 5\n  restart_backoff: 1h\n');
    await attemptEnded(db, id, 1);
    await requestCancel(storeOf(db), [id]);
    const done = await waitTerminal(db, id);
    expect(done.status).toBe('CANCELLED');
    expect(done.tasks[0].attempts).toHaveLength(1);
    expect((await getJobSummary(storeOf(db), id))!.nextAttemptAt).toBeNull();
  });
});
