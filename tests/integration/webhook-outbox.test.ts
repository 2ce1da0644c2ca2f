/**
 * The webhook outbox (docs/design.md §10 "Webhooks"): delivery rows are written by the guarded
 * write itself, in the statement of the JobEvent that causes them — one per matching enabled
 * subscription, none for a write that lost its guard — on both database kinds, with a real
 * monitor and real processes running the seed pipeline (a restart, then FAILED).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createSubscription, transitionJob, transitionJobsWhere, transitionMany } from '../../lib/store';
import { webhookPayload } from '../../lib/monitor/webhooks/format';
import { storeOf } from '../helpers/store';
import { example, Fixture, submit, waitTerminal } from './monitor-helpers';

describe.each(DB_KINDS)('webhook outbox on %s', (kind) => {
  const t = useDatabase(kind, `webhook-outbox-${kind}`);
  let db: PrismaClient;
  let fx: Fixture | undefined;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
    fx = undefined;
  });

  const sub = (name: string, events: string[], extra: Partial<Parameters<typeof createSubscription>[1]> = {}) =>
    createSubscription(storeOf(db), { name, url: 'http://127.0.0.1:9/hook', events, format: 'json', secretEnc: 'x', ...extra });

  it('the seed pipeline with job.failed + task.restarted: exactly one of each, with task, attempt, exit code and restart count', async () => {
    const s = await sub('ops', ['job.failed', 'task.restarted']);
    await sub('other-jobs', ['*'], { jobNameGlob: 'nightly-*' });
    await sub('off', ['*'], { enabled: false });
    fx = new Fixture();
    const m = fx.monitor(db, { webhooks: { enabled: false } });
    await m.start();
    const id = await submit(db, example('seed-retry-pipeline'));
    await waitTerminal(db, id);
    const rows = await db.webhookDelivery.findMany({ orderBy: { jobEventId: 'asc' } });
    expect(rows.map((r) => [r.subscriptionId, r.eventType, r.status])).toEqual([
      [s.id, 'task.restarted', 'pending'],
      [s.id, 'job.failed', 'pending'],
    ]);
    // The body every try sends, built from the snapshot the statement stored.
    const [restart, failed] = rows.map((r) => webhookPayload(r.payload) as { type: string; data: Record<string, any> });
    expect(restart.type).toBe('task.restarted');
    expect(restart.data).toMatchObject({ task: { index: 0, restarts: 1 }, attempt: { number: 2, cause: 'restart' }, previousAttempt: { number: 1, status: 'FAILED', exitCode: 1 }, exitCode: 1, restartCount: 1 });
    expect(restart.data.job).toMatchObject({ id, name: 'retry-each-task' });
    expect(failed.data).toMatchObject({ to: 'FAILED', task: { index: 0, status: 'FAILED', exitCode: 1 }, attempt: { number: 2, status: 'FAILED', exitCode: 1 }, exitCode: 1, restartCount: 1 });
    expect(failed.data.job).toMatchObject({ id, status: 'FAILED', restartCount: 1 });
    expect(failed.data.job.endedAt).toMatch(/Z$/);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    for (const r of rows) expect(r.id).toMatch(/^msg_[0-9a-f]{32}$/);
    const events = await db.jobEvent.findMany({ where: { id: { in: rows.map((r) => r.jobEventId!) } } });
    expect(events.map((e) => [e.entity, e.to])).toEqual([
      ['attempt', 'STARTING'],
      ['job', 'FAILED'],
    ]);
  });

  it('writes nothing for a write that lost its guard, and one row per matching subscription for a batch cancel', async () => {
    const a = await sub('a', ['job.cancelled']);
    const b = await sub('b', ['*'], { metadataFilter: { team: 'ml' } });
    const store = storeOf(db);
    const id1 = await submit(db, example('hello'));
    const lost = await transitionJob(store, id1, 'RUNNING', 'CANCELLED');
    expect(lost.outcome).toBe('lost');
    expect(await db.webhookDelivery.count()).toBe(0);
    const id2 = await submit(db, example('hello'));
    await db.job.update({ where: { id: id2 }, data: { metadata: { team: 'ml', x: 1 } } });
    const r = await transitionJobsWhere(store, { ids: [id1, id2], from: 'PENDING', to: 'CANCELLED', reason: 'test', tasks: { from: 'PENDING', to: 'CANCELLED' } });
    expect(r.applied).toEqual([id1, id2]);
    const rows = await db.webhookDelivery.findMany({ orderBy: [{ jobEventId: 'asc' }, { subscriptionId: 'asc' }] });
    expect(rows.map((x) => [x.jobId, x.subscriptionId, x.eventType])).toEqual([
      [id1, a.id, 'job.cancelled'],
      [id2, a.id, 'job.cancelled'],
      [id2, b.id, 'job.cancelled'],
    ]);
    expect(webhookPayload(rows[2].payload).data).toMatchObject({ job: { id: id2, status: 'CANCELLED', metadata: { team: 'ml', x: 1 } }, task: { index: 0, status: 'CANCELLED' } });
  });

  it('notify: [name] routes a job to a subscription whatever its filters; a namedOnly subscription hears only the jobs that name it', async () => {
    const pager = await sub('pager', ['job.cancelled'], { namedOnly: true });
    const nightly = await sub('nightly', ['job.cancelled'], { jobNameGlob: 'nightly-*' });
    const store = storeOf(db);
    const plain = await submit(db, 'name: plain\nrun: "true"\n');
    const named = await submit(db, 'name: adhoc\nnotify: [pager, nightly, nobody]\nrun: "true"\n');
    const night = await submit(db, 'name: nightly-1\nrun: "true"\n');
    await transitionJobsWhere(store, { ids: [plain, named, night], from: 'PENDING', to: 'CANCELLED', tasks: { from: 'PENDING', to: 'CANCELLED' } });
    const rows = await db.webhookDelivery.findMany({ orderBy: [{ jobEventId: 'asc' }, { subscriptionId: 'asc' }] });
    expect(rows.map((x) => [x.jobId, x.subscriptionId])).toEqual([
      [named, pager.id],
      [named, nightly.id],
      [night, nightly.id],
    ]);
  });
  it('with job leases: a write fenced out writes no row; the owner\'s fenced write and another server\'s cancel of an owned job write theirs', async () => {
    const a = await sub('a', ['job.cancelled']);
    const store = storeOf(db);
    const [stale, owned, other] = [await submit(db, example('hello')), await submit(db, example('hello')), await submit(db, example('hello'))];
    await db.job.updateMany({ where: { id: { in: [stale, owned, other] } }, data: { ownerId: 'srv-a', leaseEpoch: 2 } });
    const cancel = (id: number) => [{ entity: 'job' as const, id, from: 'PENDING' as const, to: 'CANCELLED' as const, reason: 'test' }];
    // A server paused past its lease wakes with epoch 1: nothing written, no notification.
    const lost = await transitionMany(store, cancel(stale), { jobId: stale, ownerId: 'srv-a', epoch: 1 });
    expect(lost).toMatchObject({ outcome: 'lost', reason: 'gone', fenced: true });
    expect(await db.webhookDelivery.count()).toBe(0);
    expect((await transitionMany(store, cancel(owned), { jobId: owned, ownerId: 'srv-a', epoch: 2 })).outcome).toBe('applied');
    // A cancel sent to a server that does not own the job carries no fence (a durable request).
    const r = await transitionJobsWhere(store, { ids: [other], from: 'PENDING', to: 'CANCELLED', reason: 'test', tasks: { from: 'PENDING', to: 'CANCELLED' } });
    expect(r.applied).toEqual([other]);
    const rows = await db.webhookDelivery.findMany({ orderBy: { jobEventId: 'asc' } });
    expect(rows.map((x) => [x.jobId, x.subscriptionId, x.eventType])).toEqual([
      [owned, a.id, 'job.cancelled'],
      [other, a.id, 'job.cancelled'],
    ]);
  });
});
