/**
 * Admission cost under a stream of submits (docs/design.md §6, "Admission"): behind a full
 * machine, a new job that can only wait does not cost an admission pass (no database read), yet
 * still ends FAILED_NO_RESOURCE at once when too big, and everything starts once the CPUs free up.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { Fixture, jobTree, submit, waitFor, waitTerminal } from './monitor-helpers';
import { storeOf } from '../helpers/store';

/** `db` with its `job.groupBy` calls (the admission pass's first read) counted. */
function countingGroupBy(db: PrismaClient): { db: PrismaClient; calls: () => number } {
  let n = 0;
  const job = new Proxy(db.job, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'groupBy' || typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        n++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const wrapped = new Proxy(db, { get: (target, prop, receiver) => (prop === 'job' ? job : Reflect.get(target, prop, receiver)) });
  return { db: wrapped, calls: () => n };
}

describe.each(DB_KINDS)('admission behind a full machine on %s', (kind) => {
  const t = useDatabase(kind, `monitor-admission-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('new jobs that can only wait cost no admission pass; a too-big one still fails at once; all start when CPUs free up', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const counted = countingGroupBy(db);
    // No ticks during the test: every pass comes from an event.
    const m = fx.monitor(counted.db, { reconcileMs: 60_000, store: storeOf(db) });
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    await m.idle();
    const before = counted.calls();
    const waiting: number[] = [];
    for (let i = 0; i < 20; i++) {
      waiting.push(await submit(db, `name: w${i}\nrun: echo ${i}\n`));
      await new Promise((r) => setImmediate(r));
      await m.idle();
    }
    const big = await submit(db, 'name: big\nresources:\n  cpus: 64\nrun: echo never\n');
    expect((await waitTerminal(db, big)).status).toBe('FAILED_NO_RESOURCE');
    await m.idle();
    // One pass for the first waiting job (it finds the queue blocked), one for the too-big job.
    expect(counted.calls() - before).toBeLessThanOrEqual(3);
    for (const id of waiting) expect((await jobTree(db, id))!.status).toBe('PENDING');
    expect(m.state()).toMatchObject({ jobsWaiting: 20, capacity: { used: 4, total: 4 } });
    writeFileSync(gate, '');
    for (const id of waiting) expect((await waitTerminal(db, id, 60_000)).status).toBe('SUCCEEDED');
    expect(m.state().jobsWaiting).toBe(0);
  });

  it('a burst of submits behind a full machine costs a few passes, not one after another for as long as the burst lasts', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const counted = countingGroupBy(db);
    const m = fx.monitor(counted.db, { reconcileMs: 60_000, store: storeOf(db) });
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    await m.idle();
    const before = counted.calls();
    // 16 submitters, 160 jobs: a pass that runs while jobs arrive judges them when it ends.
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < 160) await submit(db, `name: b${next++}\nrun: echo b\n`);
    }));
    await m.idle();
    expect(counted.calls() - before).toBeLessThanOrEqual(4);
    writeFileSync(gate, '');
    expect((await waitTerminal(db, holder)).status).toBe('SUCCEEDED');
  });

  it('a job ending with nothing waiting costs no admission pass; with a job waiting, its end admits it at once', async () => {
    fx = new Fixture();
    const counted = countingGroupBy(db);
    // No ticks during the test: every pass comes from an event.
    const m = fx.monitor(counted.db, { reconcileMs: 60_000, store: storeOf(db) });
    await m.start();
    const gate = `${fx.home}/gate-alone`;
    const alone = await submit(db, `name: alone\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, alone))?.status === 'RUNNING', 'alone running');
    await m.idle();
    const before = counted.calls();
    writeFileSync(gate, '');
    expect((await waitTerminal(db, alone)).status).toBe('SUCCEEDED');
    await m.idle();
    // Nobody waits: neither the end nor the reap of its leftovers runs a pass.
    expect(counted.calls() - before).toBe(0);

    // A job waiting behind a full machine: the end (or the reap after it) admits it without a tick.
    const gate2 = `${fx.home}/gate-holder`;
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate2} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    const next = await submit(db, 'name: next\nresources:\n  cpus: 4\nrun: echo next\n');
    await m.idle();
    expect((await jobTree(db, next))!.status).toBe('PENDING');
    writeFileSync(gate2, '');
    expect((await waitTerminal(db, next, 20_000)).status).toBe('SUCCEEDED');
  });
});
