/**
 * The lease fence in the one guarded write (docs/design.md "Replicas"): a status write carries
 * the owner and epoch it read; after a takeover (the epoch bumped by another server's claim) it
 * writes nothing and comes back `lost: gone` with `fenced`, and the monitor drops the job. The
 * store part runs on both kinds (the statement is the same); the monitor part on PostgreSQL,
 * where servers share a database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { claimJobs, hostCpus, registerServer, renewLeases, startAttempt, submitJob, transitionMany, withHostLock } from '../../lib/store';
import { Fixture, waitFor } from './monitor-helpers';

function newJob(name: string) {
  return { name, specYaml: `name: ${name}\nrun: echo hi\n`, spec: { name }, specHash: 'h', cpus: 1, tasks: [{ name: 't0', spec: { run: 'echo hi' } }] };
}

const server = (id: string) => ({ id, host: 'test', hostId: 'test/host', pid: process.pid });

describe.each(DB_KINDS)('lease fence on %s', (kind) => {
  const t = useDatabase(kind, `monitor-lease-${kind}`);

  it('a write under the owner and epoch applies; under a stale epoch or another owner it writes nothing and comes back fenced', async () => {
    const { store, prisma } = t;
    const job = await submitJob(store, newJob('fenced'));
    const [c] = await claimJobs(store, 'srv-a', 60_000, 10);
    expect(c).toEqual({ id: job.id, previousOwner: null, epoch: 1 });
    const task = job.tasks[0];
    const tr = [{ entity: 'job' as const, id: job.id, from: 'PENDING' as const, to: 'CANCELLED' as const, reason: 'x' }];
    // Another server's claim after the lease expired: epoch 2, owner b.
    await prisma.$executeRawUnsafe(`UPDATE "Job" SET "leaseExpiresAt" = now() - interval '1 second' WHERE "id" = $1`, job.id);
    const [c2] = await claimJobs(store, 'srv-b', 60_000, 10);
    expect(c2).toEqual({ id: job.id, previousOwner: 'srv-a', epoch: 2 });
    const events = await prisma.jobEvent.count({ where: { jobId: job.id } });
    expect(await transitionMany(store, tr, { jobId: job.id, ownerId: 'srv-a', epoch: 1 })).toEqual({ outcome: 'lost', index: 0, reason: 'gone', fenced: true });
    expect(await transitionMany(store, tr, { jobId: job.id, ownerId: 'srv-a', epoch: 2 })).toMatchObject({ outcome: 'lost', reason: 'gone', fenced: true });
    const a = await startAttempt(store, { taskId: task.id, number: 1, cause: 'first', taskFrom: 'PENDING' }, { jobId: job.id, ownerId: 'srv-a', epoch: 1 });
    expect(a).toEqual({ outcome: 'lost', reason: 'gone', fenced: true });
    expect(await prisma.jobEvent.count({ where: { jobId: job.id } })).toBe(events);
    expect(await prisma.attempt.count({ where: { jobId: job.id } })).toBe(0);
    // The owner's renewal keeps its lease; the loser's renews nothing.
    // The loser learns the job was taken over; the owner renews it.
    expect(await renewLeases(store, 'srv-a', 60_000, [job.id])).toEqual({ still: [], takenOver: [job.id] });
    await registerServer(store, server('srv-b'));
    expect(await renewLeases(store, 'srv-b', 60_000, [job.id])).toEqual({ still: [job.id], takenOver: [] });
    expect((await transitionMany(store, tr, { jobId: job.id, ownerId: 'srv-b', epoch: 2 })).outcome).toBe('applied');
    // A job that finished under its owner is no longer renewed, and is not reported taken over.
    await prisma.$executeRawUnsafe(`UPDATE "Job" SET "status" = 'SUCCEEDED' WHERE "id" = $1`, job.id);
    expect(await renewLeases(store, 'srv-b', 60_000, [job.id])).toEqual({ still: [], takenOver: [] });
  });
});

describe.each(DB_KINDS)('the claim rule on %s', (kind) => {
  const t = useDatabase(kind, `monitor-lease-claim-${kind}`);

  it('by id: only the given jobs; alone a server takes every candidate, beside another live server its fair share; finished jobs are never candidates', async () => {
    const { store, prisma } = t;
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await submitJob(store, newJob(`claim-${i}`))).id);
    const done = (await submitJob(store, newJob('claim-done'))).id;
    await prisma.$executeRawUnsafe(`UPDATE "Job" SET "status" = 'SUCCEEDED', "endedAt" = now() WHERE "id" = $1`, done);
    await registerServer(store, server('srv-a'));
    // Alone (srv-a the only live server): the ids asked for, all of them, and nothing else.
    expect((await claimJobs(store, 'srv-a', 60_000, 10, [ids[0], ids[1], done])).map((c) => c.id)).toEqual([ids[0], ids[1]]);
    // Another live server: srv-a's share of the 6 live jobs is 3, it owns 2 → one more.
    await registerServer(store, server('srv-b'));
    expect((await claimJobs(store, 'srv-a', 60_000, 10, [ids[2], ids[3]])).map((c) => c.id)).toEqual([ids[2]]);
    // A round's claim (no ids): srv-b takes its share (3) of what is free, oldest first; the finished job stays unowned.
    expect((await claimJobs(store, 'srv-b', 60_000, 10)).map((c) => c.id)).toEqual([ids[3], ids[4], ids[5]]);
    expect(await claimJobs(store, 'srv-b', 60_000, 10)).toEqual([]);
    expect((await prisma.job.findUnique({ where: { id: done } }))?.ownerId).toBeNull();
  });
});

describe('monitor fenced after a takeover on postgresql', () => {
  const t = useDatabase('postgresql', 'monitor-lease-takeover');
  let fx: Fixture;
  afterEach(async () => {
    await fx.cleanup(t.prisma);
  });

  it('a takeover between the read and the write: the launch write is fenced, nothing starts, the job is dropped', async () => {
    fx = new Fixture();
    const { store, prisma } = t;
    let takenOver = false;
    const m = fx.monitor(prisma, {
      lease: { server: server('srv-a'), leaseMs: 60_000 },
      hooks: {
        beforeWrite: async (ctx) => {
          if (takenOver) return;
          takenOver = true;
          // srv-a paused here past its lease; srv-b claims the job (epoch bumped).
          await prisma.$executeRawUnsafe(`UPDATE "Job" SET "leaseExpiresAt" = now() - interval '1 second' WHERE "id" = $1`, ctx.jobId);
          await prisma.server.create({ data: server('srv-b') });
          expect(await claimJobs(store, 'srv-b', 60_000, 10)).toHaveLength(1);
        },
      },
    });
    await m.start();
    const job = await submitJob(store, newJob('takeover'));
    await waitFor(async () => takenOver, 'the first write of srv-a');
    await m.idle();
    const row = await prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    expect(row).toMatchObject({ ownerId: 'srv-b', leaseEpoch: 2, status: 'PENDING' });
    expect(await prisma.attempt.count({ where: { jobId: job.id } })).toBe(0);
    expect(await prisma.task.findFirst({ where: { jobId: job.id } })).toMatchObject({ status: 'PENDING' });
    expect(m.state().jobsWatched).toBe(0);
  });
});

describe('admission shared by the servers of one host on postgresql', () => {
  const t = useDatabase('postgresql', 'monitor-lease-host');

  it('the host lock runs one holder at a time per host, and hosts apart do not wait for each other', async () => {
    const { store } = t;
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = withHostLock(store, 'h1/boot', 10_000, async () => {
      order.push('first in');
      await held;
      order.push('first out');
    });
    await waitFor(async () => order.length === 1, 'the first holder in');
    const second = withHostLock(store, 'h1/boot', 10_000, async () => void order.push('second in'));
    // Another host's lock is free meanwhile.
    await withHostLock(store, 'h2/boot', 10_000, async () => void order.push('other host'));
    await new Promise((r) => setTimeout(r, 200));
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'other host', 'first out', 'second in']);
  });

  it("counts a host's CPUs from the active jobs its servers own or its attempts run, not another host's", async () => {
    const { store, prisma } = t;
    await registerServer(store, { id: 'srv-h1', host: 'h1', hostId: 'h1/boot', pid: 1 });
    await registerServer(store, { id: 'srv-h2', host: 'h2', hostId: 'h2/boot', pid: 1 });
    const [owned, elsewhere, runsHere, waiting] = [await submitJob(store, newJob('a')), await submitJob(store, newJob('b')), await submitJob(store, newJob('c')), await submitJob(store, newJob('d'))];
    await prisma.job.updateMany({ where: { id: { in: [owned.id, elsewhere.id, runsHere.id] } }, data: { status: 'RUNNING' } });
    await prisma.job.update({ where: { id: owned.id }, data: { ownerId: 'srv-h1', cpus: 2 } });
    await prisma.job.update({ where: { id: elsewhere.id }, data: { ownerId: 'srv-h2', cpus: 3 } });
    await prisma.job.update({ where: { id: waiting.id }, data: { ownerId: 'srv-h1', cpus: 5 } });
    // Owned by a server of h2 (a takeover), its attempt still runs on h1.
    await prisma.job.update({ where: { id: runsHere.id }, data: { ownerId: 'srv-h2', cpus: 4 } });
    await prisma.attempt.create({ data: { taskId: runsHere.tasks[0].id, jobId: runsHere.id, number: 1, status: 'RUNNING', hostId: 'h1/boot' } });
    expect(await hostCpus(store, 'h1/boot', ['local'])).toEqual({ local: 6 });
    expect(await hostCpus(store, 'h2/boot', ['local'])).toEqual({ local: 7 });
    expect(await hostCpus(store, 'h3/boot', ['local'])).toEqual({});
  });
});
