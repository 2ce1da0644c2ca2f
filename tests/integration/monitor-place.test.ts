/**
 * A waiting job's place in line (docs/design.md §6 "Why pending"): with the real monitor, the
 * real local executor and both databases, the admission pass stores each waiting job's position
 * in its executor's line and in its queue and what waits ahead of it (Job.pendingPlace, the API's
 * JobSummary.place), updates it as the jobs ahead start, and writes nothing when nothing moved.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { getJobSummary } from '../../lib/api/views';
import { putQueue, type StoreEvent } from '../../lib/store';
import { storeOf } from '../helpers/store';
import { Fixture, submit, waitStatus, waitTerminal } from './monitor-helpers';

describe.each(DB_KINDS)('place in line on %s', (kind) => {
  const t = useDatabase(kind, `monitor-place-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  const place = async (id: number) => (await getJobSummary(storeOf(db), id))!.place;

  it('jobs of a queue at its limit each have their place, by priority; it moves up as the jobs ahead start', async () => {
    fx = new Fixture();
    const gate = (n: string) => `${fx.home}/gate-${n}`;
    const job = (n: string, priority: number, cpus = 1) =>
      submit(db, `name: ${n}\nqueue: gpu\npriority: ${priority}\nresources:\n  cpus: ${cpus}\nrun: while [ ! -f ${gate(n)} ]; do sleep 0.05; done\n`);
    await putQueue(storeOf(db), 'gpu', { maxRunning: 1, maxCpus: null, defaultPriority: null, memberMaxPriority: null });
    const m = fx.monitor(db);
    await m.start();
    const g0 = await job('g0', 500);
    await waitStatus(db, g0, 'RUNNING');
    const g1 = await job('g1', 500, 2);
    const g2 = await job('g2', 900, 0.5);
    const g3 = await job('g3', 100);
    await m.admitNow();
    await m.idle();
    expect(await place(g2)).toEqual({ position: 1, queuePosition: 1, ahead: { jobs: 0, cpus: 0, gpus: 0 } });
    expect(await place(g1)).toEqual({ position: 2, queuePosition: 2, ahead: { jobs: 1, cpus: 0.5, gpus: 0 } });
    expect(await place(g3)).toEqual({ position: 3, queuePosition: 3, ahead: { jobs: 2, cpus: 2.5, gpus: 0 } });
    expect((await getJobSummary(storeOf(db), g0))!.place).toBeNull();

    // A pass that finds every place as stored writes nothing.
    const written: number[] = [];
    const listen = (e: StoreEvent) => {
      if (e.type === 'updated' && e.changed === 'pendingReason') written.push(e.jobId);
    };
    storeOf(db).bus.on('change', listen);
    try {
      await m.admitNow();
      await m.idle();
      expect(written).toEqual([]);

      // g0 ends: g2 (first in line) starts; g1 and g3 move up, and only they are written.
      writeFileSync(gate('g0'), '');
      await waitTerminal(db, g0);
      await waitStatus(db, g2, 'RUNNING');
      await m.admitNow();
      await m.idle();
      expect(await place(g1)).toEqual({ position: 1, queuePosition: 1, ahead: { jobs: 0, cpus: 0, gpus: 0 } });
      expect(await place(g3)).toEqual({ position: 2, queuePosition: 2, ahead: { jobs: 1, cpus: 2, gpus: 0 } });
      expect(await place(g2)).toBeNull();
      expect([...new Set(written)].sort((a, b) => a - b)).toEqual([g1, g3]);
    } finally {
      storeOf(db).bus.off('change', listen);
    }
    for (const n of ['g1', 'g2', 'g3']) writeFileSync(gate(n), '');
    for (const id of [g1, g2, g3]) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
  });

  it("the overall position counts every queue's waiting jobs; the queue position only its own", async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    await putQueue(storeOf(db), 'one', { maxRunning: 1, maxCpus: null, defaultPriority: null, memberMaxPriority: null });
    const m = fx.monitor(db);
    await m.start();
    // Four CPUs, all taken: everyone waits for CPUs (strict priority line), queue "one" at its limit too.
    const big = await submit(db, `name: big\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitStatus(db, big, 'RUNNING');
    const a = await submit(db, 'name: a\nrun: "true"\n');
    const b = await submit(db, 'name: b\nqueue: one\nresources:\n  cpus: 2\nrun: "true"\n');
    const c = await submit(db, 'name: c\nrun: "true"\n');
    await m.admitNow();
    await m.idle();
    expect(await place(a)).toEqual({ position: 1, queuePosition: 1, ahead: { jobs: 0, cpus: 0, gpus: 0 } });
    expect(await place(b)).toEqual({ position: 2, queuePosition: 1, ahead: { jobs: 1, cpus: 1, gpus: 0 } });
    expect(await place(c)).toEqual({ position: 3, queuePosition: 2, ahead: { jobs: 2, cpus: 3, gpus: 0 } });
    writeFileSync(gate, '');
    for (const id of [big, a, b, c]) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
  });
});
