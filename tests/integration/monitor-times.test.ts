/**
 * Times an attempt reports are causal: it starts (handed to its executor) before it ends (the
 * end the attempt recorded itself), even for attempts that exit before the monitor writes
 * RUNNING — fast failures and restarts are exactly those. And its end is written after the last
 * look at its log's time index (docs/design.md §8 "Line times"): the look is held open here, so
 * the order is forced, not left to the machine's speed.
 */
import { readFileSync, statSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { timesPath } from '../../lib/jobs/paths';
import { LogTimeIndexer, parseTimes } from '../../lib/logs/time-index';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { example, Fixture, jobTree, submit, waitFor, waitTerminal } from './monitor-helpers';

/** A real time indexer whose last looks wait for `release()`; `entered` resolves at the first. */
class HeldIndexer extends LogTimeIndexer {
  private open!: () => void;
  private readonly gate = new Promise<void>((r) => (this.open = r));
  private enter!: () => void;
  readonly entered = new Promise<void>((r) => (this.enter = r));

  override async finish(file: string): Promise<void> {
    this.enter();
    await this.gate;
    return super.finish(file);
  }

  release(): void {
    this.open();
  }
}

const LIVE = ['STARTING', 'RUNNING'];

/** The job's status and its one attempt's, each 'live' while STARTING or RUNNING. */
async function statuses(db: PrismaClient, id: number): Promise<string[]> {
  const j = await jobTree(db, id);
  return [j!.status, j!.tasks[0].attempts[0].status].map((s) => (LIVE.includes(s) ? 'live' : s));
}

describe.each(DB_KINDS)('attempt times on %s', (kind) => {
  const t = useDatabase(kind, `monitor-times-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  let held: HeldIndexer | undefined;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    // A failed test must not leave a step waiting on a held look (the monitor's stop waits for it).
    held?.release();
    held = undefined;
    await fx?.cleanup(db);
  });

  it('never ends an attempt or a task before it started', async () => {
    fx = new Fixture();
    await fx.monitor(db).start();
    const ids = await Promise.all([submit(db, example('seed-retry-pipeline')), submit(db, example('setup-fails')), submit(db, 'name: quick\nrun: exit 0\n')]);
    for (const id of ids) {
      const j = await waitTerminal(db, id);
      for (const task of j.tasks) {
        if (task.startedAt && task.endedAt) expect(task.endedAt.getTime()).toBeGreaterThanOrEqual(task.startedAt.getTime());
        for (const a of task.attempts) {
          expect(a.startedAt, `job ${id} task ${task.index} attempt ${a.number}`).not.toBeNull();
          expect(a.endedAt!.getTime(), `job ${id} task ${task.index} attempt ${a.number}`).toBeGreaterThanOrEqual(a.startedAt!.getTime());
        }
      }
    }
  });

  it("writes an attempt's end only after the last look at its log's times", async () => {
    fx = new Fixture();
    const times = (held = new HeldIndexer({ pollMs: 50 }));
    // The wait limit raised from its default (2 s): a slow machine between the held look and the
    // reads below must not end the attempt by the limit instead.
    await fx.monitor(db, { logTimes: times, lastLookWaitMs: 600_000 }).start();
    const id = await submit(db, 'name: three-lines\nrun: echo one; echo two; echo three\n');
    await times.entered;
    // The exit is seen and the look is held: the end must wait for it, pass after pass.
    for (let i = 0; i < 5; i++) {
      expect(await statuses(db, id)).toEqual(['live', 'live']);
      await new Promise((r) => setTimeout(r, 100));
    }
    times.release();
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    // When the end is there, so is the time of every byte of the log.
    const log = j.tasks[0].attempts[0].logPath!;
    const { entries } = parseTimes(readFileSync(timesPath(log), 'utf8'));
    expect(entries.at(-1)?.[0]).toBe(statSync(log).size);
    expect(statSync(log).size).toBe('one\ntwo\nthree\n'.length);
  });

  it('ends an attempt whose last look never comes, after the wait limit', async () => {
    fx = new Fixture();
    const times = (held = new HeldIndexer({ pollMs: 50 }));
    await fx.monitor(db, { logTimes: times, lastLookWaitMs: 200 }).start();
    const id = await submit(db, 'name: held\nrun: exit 3\n');
    await times.entered;
    // An index is a convenience: a look that hangs (a stuck file system) delays the end, never holds it.
    const j = await waitFor(async () => {
      const t = await jobTree(db, id);
      return t?.status === 'FAILED' ? t : null;
    }, `job ${id} to fail`);
    expect(j.tasks[0].attempts[0].exitCode).toBe(3);
  });
});
