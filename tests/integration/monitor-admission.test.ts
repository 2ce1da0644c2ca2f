/**
 * Admission cost under a stream of submits (docs/design.md §6, "Admission"): behind a full
 * machine, a new job that can only wait does not cost an admission pass (no database read), yet
 * still ends FAILED_NO_RESOURCE at once when too big, and everything starts once the CPUs free up;
 * a tick with nobody waiting skips its pass on a server alone with its database.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { Fixture, jobTree, submit, waitFor, waitTerminal } from './monitor-helpers';
import { storeOf } from '../helpers/store';

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
    // No ticks during the test: every pass comes from an event.
    const m = fx.monitor(db, { reconcileMs: 60_000, store: storeOf(db) });
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    await m.idle();
    const before = m.admissionStats().passes;
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
    expect(m.admissionStats().passes - before).toBeLessThanOrEqual(3);
    for (const id of waiting) expect((await jobTree(db, id))!.status).toBe('PENDING');
    expect(m.state()).toMatchObject({ jobsWaiting: 20, capacity: { used: 4, total: 4 } });
    writeFileSync(gate, '');
    for (const id of waiting) expect((await waitTerminal(db, id, 60_000)).status).toBe('SUCCEEDED');
    expect(m.state().jobsWaiting).toBe(0);
  });

  it('a burst of submits behind a full machine costs a few passes, not one after another for as long as the burst lasts', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db, { reconcileMs: 60_000, store: storeOf(db) });
    await m.start();
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    await m.idle();
    const before = m.admissionStats().passes;
    // 16 submitters, 160 jobs: a pass that runs while jobs arrive judges them when it ends.
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < 160) await submit(db, `name: b${next++}\nrun: echo b\n`);
    }));
    await m.idle();
    expect(m.admissionStats().passes - before).toBeLessThanOrEqual(4);
    writeFileSync(gate, '');
    expect((await waitTerminal(db, holder)).status).toBe('SUCCEEDED');
  });

  it('ticks with nobody waiting run a pass only every tenth tick on a server alone with its database; a job waiting makes every tick run one', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { reconcileMs: 10, store: storeOf(db) });
    await m.start();
    const ticksFor = async (n: number) => {
      const from = m.admissionStats();
      await waitFor(async () => m.admissionStats().ticks >= from.ticks + n, `${n} ticks`, 30_000);
      const to = m.admissionStats();
      return { ticks: to.ticks - from.ticks, passes: to.passes - from.passes };
    };
    await ticksFor(3);
    const idle = await ticksFor(40);
    // This monitor has no host lock (no leases), on either database: one pass every tenth tick.
    expect(idle.passes).toBeGreaterThanOrEqual(Math.floor(idle.ticks / 10) - 1);
    expect(idle.passes).toBeLessThanOrEqual(Math.ceil(idle.ticks / 10) + 1);
    const gate = `${fx.home}/gate-ticks`;
    const holder = await submit(db, `name: holder\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, holder))?.status === 'RUNNING', 'holder running');
    const waiting = await submit(db, 'name: waits\nresources:\n  cpus: 1\nrun: echo w\n');
    await m.idle();
    const busy = await ticksFor(20);
    // A tick runs while a pass from the tick before may still be going (joined, not doubled).
    expect(busy.passes).toBeGreaterThanOrEqual(busy.ticks / 2);
    writeFileSync(gate, '');
    expect((await waitTerminal(db, waiting, 20_000)).status).toBe('SUCCEEDED');
  });

  it('a job ending with nothing waiting costs no admission pass; with a job waiting, its end admits it at once', async () => {
    fx = new Fixture();
    // No ticks during the test: every pass comes from an event.
    const m = fx.monitor(db, { reconcileMs: 60_000, store: storeOf(db) });
    await m.start();
    const gate = `${fx.home}/gate-alone`;
    const alone = await submit(db, `name: alone\nresources:\n  cpus: 4\nrun: while [ ! -f ${gate} ]; do sleep 0.05; done\n`);
    await waitFor(async () => (await jobTree(db, alone))?.status === 'RUNNING', 'alone running');
    await m.idle();
    const before = m.admissionStats().passes;
    writeFileSync(gate, '');
    expect((await waitTerminal(db, alone)).status).toBe('SUCCEEDED');
    await m.idle();
    // Nobody waits: neither the end nor the reap of its leftovers runs a pass.
    expect(m.admissionStats().passes - before).toBe(0);

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
