/**
 * Queue limits at admission (docs/design.md §6, "Admission"): with the real monitor, the real
 * local executor and both databases, a queue limited to 2 running jobs never runs a third at once
 * while the CPUs are free for others, and a job of the default queue passes the waiting ones.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { putQueue } from '../../lib/store';
import { storeOf } from '../helpers/store';
import { Fixture, jobTree, submit, waitStatus, waitTerminal } from './monitor-helpers';

/** Most lines "start" not yet matched by an "end" at any point of `log`. */
function maxAtOnce(log: string): number {
  let now = 0;
  let max = 0;
  for (const l of readFileSync(log, 'utf8').split('\n')) {
    if (l.startsWith('start')) max = Math.max(max, ++now);
    if (l.startsWith('end')) now--;
  }
  return max;
}

describe.each(DB_KINDS)('admission with queue limits on %s', (kind) => {
  const t = useDatabase(kind, `monitor-queues-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('a queue limited to 2 never runs a third job at once; a default-queue job passes its waiting jobs', async () => {
    fx = new Fixture();
    const log = `${fx.home}/log`;
    const gate = `${fx.home}/gate`;
    writeFileSync(log, '');
    await putQueue(storeOf(db), 'gpu', { maxRunning: 2, maxCpus: null, defaultPriority: null, memberMaxPriority: null });
    const m = fx.monitor(db);
    await m.start();
    const gpu: number[] = [];
    // The first two wait for the gate; the executor's 4 CPUs would fit all five.
    for (let i = 0; i < 5; i++) {
      const wait = i < 2 ? `while [ ! -f ${gate} ]; do sleep 0.05; done; ` : 'sleep 0.2; ';
      gpu.push(await submit(db, `name: g${i}\nqueue: gpu\nrun: echo start g${i} >> ${log}; ${wait}echo end g${i} >> ${log}\n`));
    }
    await waitStatus(db, gpu[0], 'RUNNING');
    await waitStatus(db, gpu[1], 'RUNNING');
    const other = await submit(db, 'name: other\nrun: echo other\n');
    expect((await waitTerminal(db, other)).status).toBe('SUCCEEDED');
    await m.idle();
    for (const id of gpu.slice(2)) {
      const j = (await jobTree(db, id))!;
      expect([j.status, j.pendingReason]).toEqual(['PENDING', 'queue gpu at its limit (2 of 2 running)']);
    }
    writeFileSync(gate, '');
    for (const id of gpu) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
    expect(maxAtOnce(log)).toBe(2);
    // Jobs admitted by one pass start together, in either order.
    const starts = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('start'));
    expect([starts.slice(0, 2).sort(), starts.slice(2).sort()]).toEqual([['start g0', 'start g1'], ['start g2', 'start g3', 'start g4']]);
  });

  it("a queue's CPU limit holds its jobs back, and raising a limit admits them at once", async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    await putQueue(storeOf(db), 'batch', { maxRunning: null, maxCpus: 2, defaultPriority: null, memberMaxPriority: null });
    // No ticks: the limit change itself must wake the pass.
    const m = fx.monitor(db, { reconcileMs: 60_000 });
    await m.start();
    const a = await submit(db, `name: a\nqueue: batch\nresources:\n  cpus: 2\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitStatus(db, a, 'RUNNING');
    const b = await submit(db, 'name: b\nqueue: batch\nrun: echo b\n');
    await m.idle();
    const held = (await jobTree(db, b))!;
    expect([held.status, held.pendingReason]).toEqual(['PENDING', 'queue batch at its CPU limit (2 of 2 CPUs in use)']);
    await putQueue(storeOf(db), 'batch', { maxRunning: null, maxCpus: 3, defaultPriority: null, memberMaxPriority: null });
    expect((await waitTerminal(db, b)).status).toBe('SUCCEEDED');
    expect((await jobTree(db, a))!.status).toBe('RUNNING');
    writeFileSync(gate, '');
    expect((await waitTerminal(db, a)).status).toBe('SUCCEEDED');
  });
});
