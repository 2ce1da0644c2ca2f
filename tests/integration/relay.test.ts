/**
 * The NOTIFY relay between servers on one PostgreSQL (docs/design.md "Replicas", "Events from
 * any server"), with two real relays and two stores on the test database: a turn of writes
 * larger than one notification arrives whole, in order, and notifying logs nothing.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { NotifyRelay } from '../../lib/server/relay';
import { createStore, type StoreEvent } from '../../lib/store';
import { useDatabase } from '../helpers/use-database';
import { waitFor } from './monitor-helpers';

describe('the NOTIFY relay on postgresql', () => {
  const t = useDatabase('postgresql', 'relay');

  it('a turn of writes too big for one notification reaches the other server whole and in order, with no warning', async () => {
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (s: string) => void warnings.push(s) });
    const a = createStore(t.prisma);
    const b = createStore(t.prisma);
    const ra = new NotifyRelay(t.url!, a, 'srv-a', log);
    const rb = new NotifyRelay(t.url!, b, 'srv-b', log);
    await ra.start();
    await rb.start();
    try {
      const got: number[] = [];
      b.bus.on('change', (e: StoreEvent) => {
        if (e.remote && e.type === 'deleted') got.push(e.jobId);
      });
      const ids = Array.from({ length: 1500 }, (_, i) => 1_000_000 + i);
      // One turn: one flush, split into several notifications (8000-byte limit).
      for (const jobId of ids) a.bus.emit({ type: 'deleted', jobId });
      await waitFor(async () => got.length === ids.length, 'every deleted job on the other server', 120_000);
      expect(got).toEqual(ids);
      expect(warnings).toEqual([]);
    } finally {
      await ra.stop();
      await rb.stop();
    }
  });
});
