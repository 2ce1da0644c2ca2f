/**
 * Times an attempt reports are causal: it starts (handed to its executor) before it ends (the
 * end the attempt recorded itself), even for attempts that exit before the monitor writes
 * RUNNING — fast failures and restarts are exactly those.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { example, Fixture, submit, waitTerminal } from './monitor-helpers';

describe.each(DB_KINDS)('attempt times on %s', (kind) => {
  const t = useDatabase(kind, `monitor-times-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
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
});
