/**
 * Admission by priority (docs/design.md §6, "Admission"): with the real monitor, the real local
 * executor and both databases, a waiting job of higher priority starts before older ones of lower
 * priority, FIFO within a priority; strict priority: a big high-priority job that does not fit
 * yet holds back the smaller jobs behind it until it starts or leaves.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { changePriority, requestCancel } from '../../lib/control';
import { storeOf } from '../helpers/store';
import type { StoreEvent } from '../../lib/store';
import { Fixture, jobTree, submit, waitFor, waitStatus, waitTerminal } from './monitor-helpers';

/** A job of `cpus` CPUs and `priority` that appends its name to `order`, then waits for `gate` (if any). */
function job(name: string, o: { cpus: number; priority?: number; order: string; gate?: string }): string {
  const wait = o.gate ? `; while [ ! -f ${o.gate} ]; do sleep 0.05; done` : '';
  return `name: ${name}\n${o.priority === undefined ? '' : `priority: ${o.priority}\n`}resources:\n  cpus: ${o.cpus}\nrun: echo ${name} >> ${o.order}${wait}\n`;
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** Each job's status and, while PENDING, the reason the admission pass stored (Job.pendingReason). */
async function reasons(db: PrismaClient, ids: Record<string, number>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, id] of Object.entries(ids)) {
    const j = (await jobTree(db, id))!;
    out[name] = j.status === 'PENDING' ? `PENDING: ${j.pendingReason}` : j.status;
  }
  return out;
}

describe.each(DB_KINDS)('admission by priority on %s', (kind) => {
  const t = useDatabase(kind, `monitor-priority-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('with room for one job: low, low, high → the high one runs second, then the lows in order', async () => {
    fx = new Fixture();
    const order = `${fx.home}/order`;
    const gate = `${fx.home}/gate`;
    writeFileSync(order, '');
    const m = fx.monitor(db);
    await m.start();
    // Every job takes the executor's 4 CPUs: one runs at a time.
    const low1 = await submit(db, job('low1', { cpus: 4, priority: 100, order, gate }));
    await waitStatus(db, low1, 'RUNNING');
    const low2 = await submit(db, job('low2', { cpus: 4, priority: 100, order }));
    await m.idle();
    expect(await reasons(db, { low1, low2 })).toEqual({ low1: 'RUNNING', low2: 'PENDING: needs 4 CPUs, 0 of 4 free' });
    const high = await submit(db, job('high', { cpus: 4, priority: 900, order }));
    await m.idle();
    expect(await reasons(db, { low1, low2, high })).toEqual({
      low1: 'RUNNING',
      low2: 'PENDING: 1 job ahead at priority ≥ 100',
      high: 'PENDING: needs 4 CPUs, 0 of 4 free',
    });
    // Another pass with nothing changed writes no reason again (each write is announced).
    let writes = 0;
    const count = (e: StoreEvent) => void (e.type === 'updated' && e.changed === 'pendingReason' && writes++);
    storeOf(db).bus.on('change', count);
    await m.admitNow();
    storeOf(db).bus.off('change', count);
    expect(writes).toBe(0);
    writeFileSync(gate, '');
    for (const id of [low1, low2, high]) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
    expect(lines(order)).toEqual(['low1', 'high', 'low2']);
  });

  it("raising a pending job's priority moves it ahead; a job that is not PENDING keeps its priority", async () => {
    fx = new Fixture();
    const order = `${fx.home}/order`;
    const gate = `${fx.home}/gate`;
    writeFileSync(order, '');
    // No ticks: every pass comes from an event (a tick's pass would fill in the reasons asserted null).
    const m = fx.monitor(db, { reconcileMs: 60_000 });
    await m.start();
    const first = await submit(db, job('first', { cpus: 4, order, gate }));
    await waitStatus(db, first, 'RUNNING');
    const a = await submit(db, job('a', { cpus: 4, order }));
    await m.idle();
    const b = await submit(db, job('b', { cpus: 4, order }));
    await m.idle();
    // b waits behind the blocked line: no pass ran for it, so no reason is stored yet.
    expect(await reasons(db, { a, b })).toEqual({ a: 'PENDING: needs 4 CPUs, 0 of 4 free', b: 'PENDING: null' });
    expect(await changePriority(storeOf(db), b, 900)).toEqual({ kind: 'changed' });
    expect(await changePriority(storeOf(db), first, 900)).toEqual({ kind: 'notPending', status: 'RUNNING' });
    expect(await changePriority(storeOf(db), 999_999, 900)).toEqual({ kind: 'notFound' });
    await m.idle();
    expect(await reasons(db, { a, b })).toEqual({ a: 'PENDING: 1 job ahead at priority ≥ 500', b: 'PENDING: needs 4 CPUs, 0 of 4 free' });
    expect((await jobTree(db, b))!.priority).toBe(900);
    expect((await jobTree(db, first))!.priority).toBe(500);
    writeFileSync(gate, '');
    for (const id of [first, a, b]) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
    expect(lines(order)).toEqual(['first', 'b', 'a']);
  });

  it('a priority change wakes the admission pass: a small job raised above the big one blocking the line starts at once (no tick)', async () => {
    fx = new Fixture();
    const order = `${fx.home}/order`;
    const gate = `${fx.home}/gate`;
    writeFileSync(order, '');
    // No ticks during the test: every pass comes from an event.
    const m = fx.monitor(db, { reconcileMs: 60_000 });
    await m.start();
    const holder = await submit(db, job('holder', { cpus: 2, order, gate }));
    await waitStatus(db, holder, 'RUNNING');
    const big = await submit(db, job('big', { cpus: 4, order }));
    const small = await submit(db, job('small', { cpus: 1, priority: 100, order }));
    await m.idle();
    expect((await jobTree(db, small))!.status).toBe('PENDING');
    await changePriority(storeOf(db), small, 600);
    expect((await waitTerminal(db, small)).status).toBe('SUCCEEDED');
    expect((await jobTree(db, big))!.status).toBe('PENDING');
    writeFileSync(gate, '');
    expect((await waitTerminal(db, big)).status).toBe('SUCCEEDED');
    expect(lines(order)).toEqual(['holder', 'small', 'big']);
  });

  it('strict priority: a small job behind a big high-priority one that does not fit waits; once the big one starts, or leaves, the small one goes', async () => {
    fx = new Fixture();
    const order = `${fx.home}/order`;
    writeFileSync(order, '');
    // No ticks: every pass comes from an event (a tick's pass would fill in the reasons asserted null).
    const m = fx.monitor(db, { reconcileMs: 60_000 });
    await m.start();

    // The big one starts: the small one goes only after it.
    const holderGate = `${fx.home}/holder`;
    const bigGate = `${fx.home}/big`;
    const holder = await submit(db, job('holder', { cpus: 2, order, gate: holderGate }));
    await waitStatus(db, holder, 'RUNNING');
    const big = await submit(db, job('big', { cpus: 4, priority: 900, order, gate: bigGate }));
    await m.idle();
    const small = await submit(db, job('small', { cpus: 1, priority: 100, order }));
    await m.idle();
    // 2 CPUs are free and the small job would fit, but it is behind the big one.
    expect(await reasons(db, { big, small })).toEqual({ big: 'PENDING: needs 4 CPUs, 2 of 4 free', small: 'PENDING: null' });
    await m.admitNow();
    expect(await reasons(db, { big, small })).toEqual({ big: 'PENDING: needs 4 CPUs, 2 of 4 free', small: 'PENDING: 1 job ahead at priority ≥ 100' });
    writeFileSync(holderGate, '');
    await waitStatus(db, big, 'RUNNING');
    await m.idle();
    expect(await reasons(db, { big, small })).toEqual({ big: 'RUNNING', small: 'PENDING: needs 1 CPU, 0 of 4 free' });
    writeFileSync(bigGate, '');
    expect((await waitTerminal(db, small)).status).toBe('SUCCEEDED');
    expect(lines(order)).toEqual(['holder', 'big', 'small']);

    // The big one leaves (cancelled while PENDING): the small one goes at once.
    const gate2 = `${fx.home}/holder2`;
    const holder2 = await submit(db, job('holder2', { cpus: 2, order, gate: gate2 }));
    await waitStatus(db, holder2, 'RUNNING');
    const big2 = await submit(db, job('big2', { cpus: 4, priority: 900, order }));
    const small2 = await submit(db, job('small2', { cpus: 1, priority: 100, order }));
    await m.idle();
    expect((await jobTree(db, small2))!.status).toBe('PENDING');
    await requestCancel(storeOf(db), [big2]);
    expect((await waitTerminal(db, small2)).status).toBe('SUCCEEDED');
    expect((await jobTree(db, holder2))!.status).toBe('RUNNING');
    expect((await jobTree(db, big2))!.status).toBe('CANCELLED');
    writeFileSync(gate2, '');
    await waitFor(async () => (await jobTree(db, holder2))?.status === 'SUCCEEDED', 'holder2 done');
  });
  it('the reason notes the start timeout, kept fresh a minute at a time: a pass within the same minute writes nothing (injected clock)', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    let offset = 0;
    const m = fx.monitor(db, { clock: { now: () => Date.now() + offset }, startTimeoutMs: 3_600_000, reconcileMs: 60_000 });
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitStatus(db, holder, 'RUNNING');
    const w = await submit(db, 'name: waits\nrun: echo x\n');
    await m.idle();
    await m.admitNow();
    expect(await reasons(db, { w })).toEqual({ w: 'PENDING: needs 1 CPU, 0 of 4 free · start timeout in 60 min' });
    let writes = 0;
    const count = (e: StoreEvent) => void (e.type === 'updated' && e.changed === 'pendingReason' && writes++);
    storeOf(db).bus.on('change', count);
    try {
      offset = 48 * 60_000 + 5_000; // 11 min 55 s left, give or take the test's own run time
      await m.admitNow();
      expect(await reasons(db, { w })).toEqual({ w: 'PENDING: needs 1 CPU, 0 of 4 free · start timeout in 12 min' });
      expect(writes).toBe(1);
      offset += 20_000; // the same minute: the same text, no write
      await m.admitNow();
      await m.admitNow();
      expect(writes).toBe(1);
      offset = 50 * 60_000 + 5_000;
      await m.admitNow();
      expect(await reasons(db, { w })).toEqual({ w: 'PENDING: needs 1 CPU, 0 of 4 free · start timeout in 10 min' });
      expect(writes).toBe(2);
    } finally {
      storeOf(db).bus.off('change', count);
    }
    writeFileSync(gate, '');
    for (const id of [holder, w]) expect((await waitTerminal(db, id)).status).toBe('SUCCEEDED');
  });
});
