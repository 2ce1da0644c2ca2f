/**
 * The webhook dispatcher against a REAL HTTP receiver on 127.0.0.1 (tests/helpers/webhook-receiver.ts)
 * with a real monitor and real processes, on both database kinds (docs/design.md §10
 * "Webhooks"): the seed pipeline's job.failed and task.restarted arrive exactly once each,
 * signed (verified with standardwebhooks' own Webhook.verify); a receiver that refuses
 * connections, then answers 500, then 204 gets every event once it is back, in order, under the
 * ids of the failed tries; a redirect is not followed; a URL that resolves to a private address
 * is refused at create and again at send; a delivery that fails past its retry window is
 * `failed` and disables its subscription; the Slack format.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { Receiver } from '../helpers/webhook-receiver';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createWebhook, patchWebhook, redeliverWebhook, removeWebhook, rotateWebhook, testWebhook } from '../../lib/api/webhooks';
import type { Actor } from '../../lib/jobs/roles';
import type { MonitorOptions } from '../../lib/monitor/monitor';
import { storeOf } from '../helpers/store';
import { example, Fixture, submit, waitFor, waitTerminal } from './monitor-helpers';

process.env.JOBDECK_WEBHOOK_ALLOW_PRIVATE = '1';

const FAST: MonitorOptions['webhooks'] = { allowPrivate: true, retryBaseMs: 20, retryMaxMs: 150, timeoutMs: 2000 };

describe.each(DB_KINDS)('webhook delivery on %s', (kind) => {
  const t = useDatabase(kind, `webhook-delivery-${kind}`);
  let db: PrismaClient;
  let fx: Fixture | undefined;
  const receivers: Receiver[] = [];
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
    fx = undefined;
    for (const r of receivers.splice(0)) await r.down();
  });

  const receiver = async () => {
    const r = await new Receiver().up();
    receivers.push(r);
    return r;
  };
  const create = (name: string, url: string, events: string[], extra: Record<string, unknown> = {}) =>
    createWebhook({ store: storeOf(db), home: fx!.home }, { name, url, events: events as never, ...extra });
  const allDone = (n: number) => waitFor(async () => (await db.webhookDelivery.count({ where: { status: { not: 'pending' } } })) >= n, `${n} deliveries done`);

  it('writes an audit row for each change an admin makes to a subscription: create, change, rotate, test, redeliver, delete', async () => {
    fx = new Fixture();
    const admin: Actor = { userId: 1, name: 'admin', role: 'admin', tokenId: null, tokenPrefix: 'jd_admintoke', ip: '127.0.0.1' };
    const c = { store: storeOf(db), home: fx.home };
    await createWebhook(c, { name: 'audited', url: 'http://127.0.0.1:9/hook', events: ['job.failed'] as never }, admin);
    await patchWebhook(c.store, 'audited', { enabled: false }, admin);
    await rotateWebhook(c, 'audited', admin);
    const test = await testWebhook(c.store, 'audited', admin);
    await redeliverWebhook(c.store, 'audited', test.id, admin);
    await removeWebhook(c.store, 'audited', admin);
    const rows = await db.auditEvent.findMany({ where: { target: 'webhook:audited' }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.action)).toEqual(['webhook.create', 'webhook.update', 'webhook.rotate', 'webhook.test', 'webhook.redeliver', 'webhook.delete']);
    expect(rows.every((r) => r.userName === 'admin' && r.tokenPrefix === 'jd_admintoke' && r.ip === '127.0.0.1')).toBe(true);
    expect(rows.map((r) => r.detail)).toEqual([
      { url: 'http://127.0.0.1:9/hook', events: ['job.failed'], format: 'json' },
      { changed: ['enabled'], enabled: false },
      null,
      { delivery: test.id },
      { delivery: test.id },
      { url: 'http://127.0.0.1:9/hook' },
    ]);
    // The secret is in no row.
    expect(JSON.stringify(rows)).not.toMatch(/whsec_/);
  });

  it('the seed pipeline: exactly one task.restarted and one job.failed arrive, signed, saying which task, attempt, exit code and restart count', async () => {
    fx = new Fixture();
    const r = await receiver();
    const { secret } = await create('ops', r.url, ['job.failed', 'task.restarted']);
    expect(secret).toMatch(/^whsec_/);
    const m = fx.monitor(db, { webhooks: FAST });
    await m.start();
    const id = await submit(db, example('seed-retry-pipeline'));
    await waitTerminal(db, id);
    await allDone(2);
    const got = r.verified(secret);
    expect(got.map((g) => g.payload.type)).toEqual(['task.restarted', 'job.failed']);
    const [restart, failed] = got.map((g) => g.payload);
    expect(restart.data).toMatchObject({ job: { id, name: 'retry-each-task' }, task: { index: 0 }, attempt: { number: 2, cause: 'restart' }, exitCode: 1, restartCount: 1 });
    expect(failed.data).toMatchObject({ job: { id, status: 'FAILED' }, task: { index: 0, status: 'FAILED' }, attempt: { number: 2 }, exitCode: 1, restartCount: 1 });
    const rows = await db.webhookDelivery.findMany({ orderBy: { jobEventId: 'asc' } });
    expect(rows.map((x) => [x.id, x.status, x.attempts, x.lastStatusCode])).toEqual(got.map((g) => [g.id, 'delivered', 1, 204]));
    // A wrong secret does not verify.
    expect(() => r.verified('whsec_' + Buffer.alloc(24, 1).toString('base64'))).toThrow();
  });

  it('receiver refusing connections, then 500s, then up: every event arrives once, in order, under the ids of the failed tries', async () => {
    fx = new Fixture();
    const r = await receiver();
    const { secret } = await create('flaky', r.url, ['*']);
    await r.down();
    const m = fx.monitor(db, { webhooks: FAST });
    await m.start();
    const a = await submit(db, example('hello'));
    await waitTerminal(db, a);
    const b = await submit(db, example('seed-retry-pipeline'));
    await waitTerminal(db, b);
    // Refused for a while: the first delivery is tried again and again; the others wait behind it.
    const first = await waitFor(async () => {
      const d = await db.webhookDelivery.findFirst({ orderBy: { jobEventId: 'asc' } });
      return d && d.attempts >= 3 ? d : null;
    }, 'three refused tries');
    expect(first.lastError).toMatch(/ECONNREFUSED/);
    expect(await db.webhookDelivery.count({ where: { attempts: { gt: 0 }, id: { not: first.id } } })).toBe(0);
    r.mode = { status: 500 };
    await r.up();
    await waitFor(async () => r.got.length >= 3, 'three 500s');
    r.mode = 'ok';
    await allDone(5);
    const rows = await db.webhookDelivery.findMany({ orderBy: { jobEventId: 'asc' } });
    expect(rows.map((x) => x.eventType)).toEqual(['job.started', 'job.succeeded', 'job.started', 'task.restarted', 'job.failed']);
    expect(rows.every((x) => x.status === 'delivered')).toBe(true);
    // Every try carries its delivery's id; the ids of the 500s are the first delivery's.
    const ids = r.got.map((g) => g.id);
    expect(ids.slice(0, 3)).toEqual([first.id, first.id, first.id]);
    // After the 500s, each delivery once, in event order.
    const firstOk = ids.lastIndexOf(first.id);
    expect([first.id, ...ids.slice(firstOk + 1)]).toEqual(rows.map((x) => x.id));
    expect(r.verified(secret)).toHaveLength(r.got.length);
    expect(rows[0].attempts).toBeGreaterThan(ids.filter((x) => x === first.id).length); // the refused tries counted too
  });

  it('two dispatchers on one database never send a row twice (the claim: lease + SKIP LOCKED)', async () => {
    fx = new Fixture();
    const r = await receiver();
    await create('a', r.url, ['*']);
    await create('b', r.url, ['*']);
    await create('c', r.url, ['*']);
    // A try that times out is sent again (at least once, by design): with FAST's 2 s a loaded
    // machine's stalled event loop made retries of answered requests. The claim is what is tested.
    const patient = { ...FAST, timeoutMs: 60_000 };
    const one = fx.monitor(db, { webhooks: patient });
    const two = fx.monitor(db, { webhooks: patient });
    await Promise.all([one.start(), two.start()]);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) for (const n of ['a', 'b', 'c']) ids.push((await testWebhook(storeOf(db), n)).id);
    await allDone(30);
    expect(r.got.map((g) => g.id).sort()).toEqual([...ids].sort());
  });

  it('a burst of one subscription, two dispatchers: each event once, in event order, in runs (their leases extended) over kept-alive connections; a 500 mid-run holds the rest behind it', async () => {
    fx = new Fixture();
    const r = await receiver();
    await create('burst', r.url, ['*']);
    const sub = await db.webhookSubscription.findFirstOrThrow({ where: { name: 'burst' } });
    // More rows than a run claims (WebhookSystem.RUN); payloads without a snapshot are sent as they are.
    const n = 120;
    const now = new Date();
    const rows = Array.from({ length: n }, (_, i) => ({
      id: `msg_burst${String(i).padStart(27, '0')}`,
      subscriptionId: sub.id,
      jobEventId: i + 1,
      eventType: 'job.succeeded',
      payload: { type: 'job.succeeded', timestamp: now.toISOString(), data: { eventId: i + 1 } },
      retryFrom: now,
      nextAttemptAt: now,
      createdAt: now,
    }));
    await db.webhookDelivery.createMany({ data: rows });
    const failed = rows[70].id;
    r.answer = (_n, got) => (got.id === failed && r.got.filter((g) => g.id === failed).length === 1 ? { status: 500 } : undefined);
    // The lease is twice the timeout, so a run extends its claim before each row after the first.
    const lease = { ...FAST, timeoutMs: 30_000, leaseMs: 60_000 };
    const one = fx.monitor(db, { webhooks: lease });
    const two = fx.monitor(db, { webhooks: lease });
    await Promise.all([one.start(), two.start()]);
    await allDone(n);
    const firsts = [...new Set(r.got.map((g) => g.id))];
    expect(firsts).toEqual(rows.map((x) => x.id));
    expect(r.got.map((g) => g.id).filter((id) => id === failed)).toHaveLength(2);
    expect(r.got).toHaveLength(n + 1);
    const done = await db.webhookDelivery.findMany({ where: { subscriptionId: sub.id } });
    expect(done.every((x) => x.status === 'delivered' && x.claimToken === null && x.attempts === (x.id === failed ? 2 : 1))).toBe(true);
    expect(r.connections).toBeLessThan(n / 10);
  });

  it('a redirect is not followed: the try fails with the 3xx, the target never hears of it', async () => {
    fx = new Fixture();
    const r = await receiver();
    const target = await receiver();
    r.mode = { status: 302, location: target.url };
    await create('moved', r.url, ['*']);
    const m = fx.monitor(db, { webhooks: FAST });
    await m.start();
    const d = await testWebhook(storeOf(db), 'moved');
    const row = await waitFor(async () => {
      const x = await db.webhookDelivery.findUnique({ where: { id: d.id } });
      return x && x.attempts >= 2 ? x : null;
    }, 'two tries');
    expect(row).toMatchObject({ status: 'pending', lastStatusCode: 302 });
    expect(row.lastError).toMatch(/redirect \(302.*\) not followed/);
    expect(target.got).toHaveLength(0);
  });

  it('a URL on a private address: refused at create with a clear message, and refused again at send', async () => {
    fx = new Fixture();
    process.env.JOBDECK_WEBHOOK_ALLOW_PRIVATE = '0';
    try {
      for (const [url, msg] of [
        ['ftp://example.com/x', /only http and https are allowed, not ftp/],
        ['http://127.0.0.1:8080/x', /127\.0\.0\.1 is an address in a loopback range/],
        ['http://10.1.2.3/x', /private range/],
        ['http://169.254.169.254/latest/meta-data', /linkLocal range/],
        ['http://100.64.0.1/', /carrierGradeNat range/],
        ['http://[::ffff:192.168.0.1]/', /private range/],
        // IPv4-compatible IPv6 (deprecated, but parsed): judged as the IPv4 address it carries.
        ['http://[::127.0.0.1]:8080/', /loopback range/],
        ['http://[::10.0.0.1]/', /private range/],
        ['http://[::ffff:0:127.0.0.1]/', /rfc6145 range/],
        ['http://[::1]/', /loopback range/],
        ['http://localhost:9/', /localhost resolves to .*, an address in a loopback range/],
      ] as const) {
        await expect(create('priv', url, ['*'])).rejects.toMatchObject({ status: 400, message: expect.stringMatching(msg) });
      }
    } finally {
      process.env.JOBDECK_WEBHOOK_ALLOW_PRIVATE = '1';
    }
    // Created while allowed, sent by a dispatcher that does not allow it: refused at send.
    const r = await receiver();
    await create('later', r.url, ['*']);
    const m = fx.monitor(db, { webhooks: { ...FAST, allowPrivate: false } });
    await m.start();
    const d = await testWebhook(storeOf(db), 'later');
    const row = await waitFor(async () => {
      const x = await db.webhookDelivery.findUnique({ where: { id: d.id } });
      return x && x.attempts >= 1 ? x : null;
    }, 'a try');
    expect(row.lastError).toMatch(/loopback range/);
    expect(r.got).toHaveLength(0);
  });

  it('past its retry window a delivery is failed and its subscription disabled with the reason; redeliver sends it again under its id', async () => {
    fx = new Fixture();
    const r = await receiver();
    r.mode = { status: 500 };
    await create('dead', r.url, ['*']);
    const m = fx.monitor(db, { webhooks: { ...FAST, retryWindowMs: 300 } });
    await m.start();
    const d = await testWebhook(storeOf(db), 'dead');
    await allDone(1);
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { id: d.id } });
    expect(row).toMatchObject({ status: 'failed', lastStatusCode: 500 });
    const sub = await db.webhookSubscription.findUniqueOrThrow({ where: { name: 'dead' } });
    expect(sub.enabled).toBe(false);
    expect(sub.disabledReason).toMatch(/^deliveries failed for 0 s \(last: HTTP 500\); disabled$/);
    r.mode = 'ok';
    await patchWebhook(storeOf(db), 'dead', { enabled: true });
    const n = r.got.length;
    await redeliverWebhook(storeOf(db), 'dead', d.id);
    await waitFor(async () => (await db.webhookDelivery.findUnique({ where: { id: d.id } }))?.status === 'delivered', 'redelivered');
    expect(r.got.slice(n).map((g) => g.id)).toEqual([d.id]);
  });

  it('the Slack format: text and blocks a person reads, with a link to the job page', async () => {
    fx = new Fixture();
    const r = await receiver();
    await create('slack', r.url, ['job.failed'], { format: 'slack' });
    const m = fx.monitor(db, { webhooks: { ...FAST, publicUrl: 'https://jobs.example.com' } });
    await m.start();
    const id = await submit(db, example('seed-retry-pipeline'));
    await waitTerminal(db, id);
    await allDone(1);
    const body = JSON.parse(r.got[0].body);
    expect(body.text).toMatch(new RegExp(`^:x: retry-each-task #${id} failed`));
    const blocks = JSON.stringify(body.blocks);
    expect(blocks).toContain(`<https://jobs.example.com/jobs/${id}|retry-each-task #${id}>`);
    for (const f of ['*Status:* FAILED', '*Task:* 0', '*Exit code:* 1', '*Restarts used:* 1', '*Duration:* ']) expect(blocks).toContain(f);
  });
});
