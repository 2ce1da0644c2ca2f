/**
 * An executor backend that is only temporarily unavailable (a Slurm controller down: the
 * executor throws with `transient: true`) is docs/design.md §5 rule 6 for executors: retried with
 * backoff, never a lost attempt, never a recovery spent, never FAILED_CONTROLLER.
 * Real database (both kinds), real local processes; the fault is injected at the executor seam.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { Fixture, submit, waitTerminal, wrapExecutor } from './monitor-helpers';

class BackendDown extends Error {
  readonly transient = true;
  constructor() {
    super('cluster controller is not answering (injected)');
  }
}

describe.each(DB_KINDS)('executor outages on %s', (kind) => {
  const t = useDatabase(kind, `monitor-outage-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('launches the same attempt again after a transient launch failure, spending no recovery', async () => {
    fx = new Fixture();
    let failures = 2;
    const executor = wrapExecutor(fx.executor, {
      launch: async (r) => {
        if (failures > 0) {
          failures--;
          throw new BackendDown();
        }
        return fx.executor.launch(r);
      },
    });
    const m = fx.monitor(db, { executor });
    await m.start();
    const id = await submit(db, 'name: outage-launch\nrun: echo launched\n');
    const j = await waitTerminal(db, id);
    expect(failures).toBe(0);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.recoveryCount).toBe(0);
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j.tasks[0].attempts[0]).toMatchObject({ status: 'SUCCEEDED', cause: 'first' });
  });

  it('keeps a running attempt through more transient probe failures than the step error limit', async () => {
    fx = new Fixture();
    let failures = 8; // more than JOBDECK_MONITOR_MAX_ERRORS (3): transient ones must not count
    const executor = wrapExecutor(fx.executor, {
      probe: async (h) => {
        if (failures > 0) {
          failures--;
          throw new BackendDown();
        }
        return fx.executor.probe(h);
      },
      // No exit notification: the monitor must learn the end by probing through the outage.
      watch: () => () => undefined,
    });
    const m = fx.monitor(db, { executor, maxStepErrors: 3 });
    await m.start();
    const id = await submit(db, 'name: outage-probe\nrun: sleep 0.5; exit 0\n');
    const j = await waitTerminal(db, id, 60_000);
    expect(failures).toBe(0);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.recoveryCount).toBe(0);
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(await db.jobEvent.count({ where: { jobId: id, to: 'FAILED_CONTROLLER' } })).toBe(0);
  });

  it('with exit notifications off (JOBDECK_EXIT_WATCH=0, the polling baseline) the reconcile pass alone ends jobs', async () => {
    fx = new Fixture();
    let watched = 0;
    const executor = wrapExecutor(fx.executor, {
      watch: (h, l) => {
        watched++;
        return fx.executor.watch(h, l);
      },
    });
    const m = fx.monitor(db, { executor, exitWatch: false });
    await m.start();
    const id = await submit(db, 'name: polled\nrun: exit 0\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(watched).toBe(0);
  });
});
