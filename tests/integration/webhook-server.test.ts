/**
 * Webhooks through a real `node server.ts` process (tests/helpers/server.ts) and a real HTTP
 * receiver on 127.0.0.1, on both database kinds (docs/design.md §10 "Webhooks"): the API
 * answers the secret once and never again (nor logs it); kill -9 between a job's end and the
 * delivery loses nothing (delivered after the restart); kill -9 during a delivery may send it
 * twice, under the same id; a 50 MB answer does not grow the server's memory (RSS of the real
 * process). Needs a built app (`npx next build`, or JOBDECK_NEXT_DIST set to a built dist).
 */
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { Receiver } from '../helpers/webhook-receiver';
import { runCli } from './cli-run';
import { waitFor } from './monitor-helpers';

const ENV = {
  JOBDECK_WEBHOOK_ALLOW_PRIVATE: '1',
  JOBDECK_WEBHOOK_RETRY_BASE_MS: '50',
  JOBDECK_WEBHOOK_RETRY_MAX_MS: '300',
  JOBDECK_WEBHOOK_TIMEOUT_MS: '1000',
  JOBDECK_WEBHOOK_LEASE_MS: '2000',
  JOBDECK_RECONCILE_MS: '200',
};

interface Delivery {
  id: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  responseHead: string | null;
  createdAt: string;
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

describe.each(DB_KINDS)('webhooks through a server process on %s', (kind) => {
  const t = useServerDatabase(kind, `webhook-server-${kind}`, { isolation: 'test' });
  const servers: ServerProcess[] = [];
  const receivers: Receiver[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0).reverse()) await s.dispose({ keepHome: false });
    for (const r of receivers.splice(0)) await r.down();
  });

  async function start(prev?: ServerProcess): Promise<ServerProcess> {
    const s = await t.start({ env: ENV, ...(prev ? { home: prev.home, token: prev.token } : {}) });
    servers.push(s);
    return s;
  }
  async function receiver(): Promise<Receiver> {
    const r = await new Receiver().up();
    receivers.push(r);
    return r;
  }
  async function subscribe(s: ServerProcess, name: string, url: string, events: string[]): Promise<string> {
    const r = await s.api('/api/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, url, events }) });
    expect(r.status).toBe(201);
    return ((await r.json()) as { secret: string }).secret;
  }
  async function submit(s: ServerProcess, cmd: string): Promise<number> {
    const r = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd }) });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: number }).id;
  }
  async function deliveries(s: ServerProcess, name: string): Promise<Delivery[]> {
    const r = await s.api(`/api/webhooks/${name}/deliveries`);
    expect(r.status).toBe(200);
    return ((await r.json()) as { deliveries: Delivery[] }).deliveries.reverse();
  }
  async function terminal(s: ServerProcess, id: number): Promise<void> {
    await waitFor(async () => ['SUCCEEDED', 'FAILED'].includes(((await (await s.api(`/api/jobs/${id}`)).json()) as { status: string }).status), `job ${id} to end`, 120_000);
  }

  it('the secret is answered once, never again, and never logged; bad input is a 400 naming the field', async () => {
    const s = await start();
    const r = await receiver();
    const secret = await subscribe(s, 'ops', r.url, ['job.failed']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    for (const path of ['/api/webhooks', '/api/webhooks/ops', '/api/webhooks/ops/deliveries']) expect(await (await s.api(path)).text()).not.toContain(secret.slice(6));
    const rot = (await (await s.api('/api/webhooks/ops/rotate', { method: 'POST' })).json()) as { secret: string };
    expect(rot.secret).not.toBe(secret);
    const bad = await s.api('/api/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x', url: 'file:///etc/passwd', events: ['job.failed'] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/^url: only http and https are allowed, not file$/);
    const ev = await s.api('/api/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'y', url: r.url, events: ['job.exploded'] }) });
    expect(((await ev.json()) as { detail: string }).detail).toMatch(/events\[0\]: unknown event "job.exploded"/);
    expect(s.output()).not.toContain(secret.slice(6));
    expect(s.output()).not.toContain(rot.secret.slice(6));
    const key = readFileSync(`${s.home}/webhook.key`);
    expect(key.length).toBeGreaterThan(0);
  });

  it('the CLI: add prints the secret once; list, test, deliveries, disable, rotate, redeliver, rm', async () => {
    const s = await start();
    const r = await receiver();
    const add = await runCli(s, ['webhooks', 'add', 'ops', r.url, '--events', 'job.failed,task.restarted', '--format', 'slack']);
    expect(add.code).toBe(0);
    const secret = /Signing secret \(shown only now\): (whsec_\S+)/.exec(add.stdout)![1];
    const list = await runCli(s, ['webhooks', 'list']);
    expect(list.stdout.trimEnd()).toMatch(/^NAME\s+ENABLED\s+FORMAT\s+EVENTS\s+URL\nops\s+yes\s+slack\s+job\.failed,task\.restarted\s+http:\/\/127\.0\.0\.1:\d+\/hook$/);
    expect(list.stdout).not.toContain(secret.slice(6));
    const test = await runCli(s, ['webhooks', 'test', 'ops']);
    const id = /Test event queued: (msg_[0-9a-f]{32})/.exec(test.stdout)![1];
    await waitFor(async () => (await deliveries(s, 'ops'))[0]?.status === 'delivered', 'the test event');
    const log = await runCli(s, ['webhooks', 'deliveries', 'ops']);
    // TIME: when the event was queued, to the second (UTC), as the API's createdAt says.
    expect(log.stdout).toMatch(/^ID\s+TIME\s+EVENT\s+JOB\s+STATUS\s+TRIES\s+CODE\s+MS\s+NEXT TRY\s+ERROR$/m);
    const queuedAt = (await deliveries(s, 'ops'))[0].createdAt.slice(0, 19);
    expect(log.stdout).toMatch(new RegExp(`^${id}\\s+${queuedAt}Z\\s+test\\s+-\\s+delivered\\s+1\\s+204\\s+\\d+\\s+-`, 'm'));
    expect(r.verified(secret).map((g) => g.id)).toEqual([id]);
    expect(JSON.parse(r.got[0].body).text).toMatch(/test event/);
    const bad = await runCli(s, ['webhooks', 'add', 'x', r.url, '--events', 'job.nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--events: unknown event "job.nope"/);
    expect((await runCli(s, ['webhooks', 'disable', 'ops'])).stdout).toMatch(/^ops\s+no \(disabled by an operator\)/m);
    expect((await runCli(s, ['webhooks', 'enable', 'ops'])).stdout).toMatch(/^ops\s+yes/m);
    const rot = await runCli(s, ['webhooks', 'rotate', 'ops']);
    const secret2 = /shown only now; the old one no longer signs\): (whsec_\S+)/.exec(rot.stdout)![1];
    expect((await runCli(s, ['webhooks', 'redeliver', 'ops', id])).stdout).toBe(`Delivery ${id} queued again.\n`);
    await waitFor(async () => r.got.length === 2 && (await deliveries(s, 'ops'))[0]?.status === 'delivered', 'redelivered');
    expect(r.got[1].id).toBe(id);
    expect(() => new Webhook(secret2).verify(r.got[1].body, r.got[1].headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(secret).verify(r.got[1].body, r.got[1].headers as Record<string, string>)).toThrow();
    expect((await runCli(s, ['webhooks', 'rm', 'ops'])).stdout).toBe('Webhook ops deleted.\n');
    expect((await runCli(s, ['webhooks', 'list', '--json'])).stdout.trim()).toBe('[]');
  });

  it('kill -9 between the job end and the delivery (receiver closed): delivered after the restart', async () => {
    const s1 = await start();
    const r = await receiver();
    const secret = await subscribe(s1, 'ops', r.url, ['job.started', 'job.succeeded']);
    await r.down();
    const id = await submit(s1, 'true');
    await terminal(s1, id);
    await waitFor(async () => (await deliveries(s1, 'ops')).some((d) => d.attempts >= 1), 'a refused try');
    await s1.kill9();
    await r.up();
    const s2 = await start(s1);
    await waitFor(async () => (await deliveries(s2, 'ops')).every((d) => d.status === 'delivered'), 'delivered after the restart', 120_000);
    const ds = await deliveries(s2, 'ops');
    expect(ds.map((d) => d.eventType)).toEqual(['job.started', 'job.succeeded']);
    // At least once: a try whose answer came after the client's 1 s timeout (a loaded machine) is
    // sent again under its id, so the receiver de-duplicates on it, as a real one would.
    const got = r.verified(secret);
    const firsts = got.filter((g, i) => got.findIndex((h) => h.id === g.id) === i);
    expect(firsts.map((g) => g.id)).toEqual(ds.map((d) => d.id));
    expect(firsts.map((g) => g.payload.data.job.id)).toEqual([id, id]);
    const n = (await (await s2.api(`/api/jobs/${id}/notifications`)).json()) as { deliveries: Delivery[] };
    expect(n.deliveries.map((d) => [d.eventType, d.status])).toEqual([
      ['job.started', 'delivered'],
      ['job.succeeded', 'delivered'],
    ]);
  });

  it('kill -9 during a delivery (receiver holds the request): sent again after the restart under the same id', async () => {
    const s1 = await start();
    const r = await receiver();
    r.mode = 'hold';
    const secret = await subscribe(s1, 'ops', r.url, ['job.succeeded']);
    const id = await submit(s1, 'true');
    await terminal(s1, id);
    await waitFor(async () => r.got.length >= 1, 'the request held open');
    await s1.kill9();
    r.mode = 'ok';
    const s2 = await start(s1);
    await waitFor(async () => (await deliveries(s2, 'ops'))[0]?.status === 'delivered', 'delivered after the restart', 120_000);
    const ids = r.verified(secret).map((g) => g.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBe((await deliveries(s2, 'ops'))[0].id);
  });

  it('a 50 MB response body does not grow the server\u2019s memory: read to 1 KiB, then the socket is dropped', async () => {
    const s = await start();
    const r = await receiver();
    r.mode = 'big';
    await subscribe(s, 'big', r.url, ['*']);
    const pid = s.proc.pid!;
    // One small try first, so that what is measured is the big answers alone.
    await s.api('/api/webhooks/big/test', { method: 'POST' });
    await waitFor(async () => (await deliveries(s, 'big')).every((d) => d.status === 'delivered'), 'the first test');
    const before = rssBytes(pid);
    const tries = 6;
    for (let i = 0; i < tries; i++) await s.api('/api/webhooks/big/test', { method: 'POST' });
    await waitFor(async () => {
      const ds = await deliveries(s, 'big');
      return ds.length === tries + 1 && ds.every((d) => d.status === 'delivered');
    }, 'six big answers read');
    const after = rssBytes(pid);
    const ds = await deliveries(s, 'big');
    for (const d of ds) expect(d.responseHead).toHaveLength(1024);
    // 7 × 50 MB offered; the kernel's socket buffers took a little of each before the drop.
    expect(r.bigWritten).toBeLessThan((tries + 1) * r.bigBytes * 0.25);
    expect(after - before).toBeLessThan(40 * 1024 * 1024);
  });
});
