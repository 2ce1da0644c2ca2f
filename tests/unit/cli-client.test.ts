/**
 * The CLI's REST client when connections drop: a real local HTTP server (node:http) that cuts
 * chosen answers — mid-body (headers sent, then the socket destroyed: undici's "terminated"),
 * or before any answer — and counts what it received. The retry waits and the clock are fakes,
 * so the backoff is checked without sleeping.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { JobdeckClient } from '../../lib/cli/client';
import { CliError } from '../../lib/cli/errors';
import { EXIT } from '../../lib/cli/exit-codes';

type Plan = 'mid-body' | 'reset' | '503' | 'ok';

interface Fake {
  url: string;
  requests: { method: string; url: string; body: string }[];
  close(): Promise<void>;
}

/** A server that answers the n-th request as plans[n] says ('ok' once the plans run out). */
async function fakeServer(plans: Plan[], answer: unknown = { id: 7, name: 'x' }): Promise<Fake> {
  const requests: Fake['requests'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, body });
      const plan = plans[requests.length - 1] ?? 'ok';
      const text = JSON.stringify(answer);
      if (plan === 'reset') {
        req.socket.resetAndDestroy();
        return;
      }
      if (plan === '503') {
        res.writeHead(503, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ title: 'Service Unavailable', status: 503, detail: 'the server is stopping' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      if (plan === 'mid-body') {
        res.write(text.slice(0, 3), () => setTimeout(() => req.socket.destroy(), 20));
        return;
      }
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A client with a fake clock: sleep(ms) advances it at once. */
function client(url: string, retryTimeoutMs = 60_000) {
  let t = 0;
  const waits: number[] = [];
  const notices: string[] = [];
  const c = new JobdeckClient(
    { url, token: 'jd_t' },
    {
      retryTimeoutMs,
      now: () => t,
      sleep: async (ms) => {
        waits.push(ms);
        t += ms;
      },
      onRetry: (r) => notices.push(`${r.what}: ${r.cause}`),
    },
  );
  return { c, waits, notices };
}

async function failure(p: Promise<unknown>): Promise<CliError> {
  try {
    await p;
  } catch (err) {
    return err as CliError;
  }
  throw new Error('expected a failure');
}

let fake: Fake | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

describe('JobdeckClient — a dropped answer', () => {
  it('a GET whose body is cut is retried with the backoff and answers the job', async () => {
    fake = await fakeServer(['mid-body', 'mid-body', 'reset']);
    const { c, waits, notices } = client(fake.url);
    const job = await c.get(7);
    expect(job).toEqual({ id: 7, name: 'x' });
    expect(fake.requests.map((r) => `${r.method} ${r.url}`)).toEqual(Array(4).fill('GET /api/jobs/7'));
    expect(waits).toEqual([250, 500, 1000]);
    expect(notices[0]).toMatch(/^job 7: /);
  });

  it('a GET answered 503 (a stopping server, a proxy) is retried too', async () => {
    fake = await fakeServer(['503']);
    const { c, waits } = client(fake.url);
    expect(await c.get(7)).toEqual({ id: 7, name: 'x' });
    expect(waits).toEqual([250]);
  });

  it('retries end after the budget: "cannot reach" (exit 6), never a raw "terminated"', async () => {
    fake = await fakeServer(Array(100).fill('mid-body'));
    const { c, waits } = client(fake.url, 3000);
    const e = await failure(c.get(7));
    expect(e).toBeInstanceOf(CliError);
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toContain(`cannot reach jobdeck at ${fake.url}`);
    expect(e.message).toMatch(/gave up after \d+ s of retries/);
    expect(waits).toEqual([250, 500, 1000]); // the next wait (2000) would pass 3000 ms
  });

  it('a POST that is not idempotent (cancel) is sent once: exit 6, and it says the server may have done it', async () => {
    fake = await fakeServer(['mid-body']);
    const { c, waits } = client(fake.url);
    const e = await failure(c.cancel({ ids: [7] }));
    expect(e).toBeInstanceOf(CliError);
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toContain('before its answer to cancel');
    expect(e.message).toContain('may or may not have done it');
    expect(fake.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('a submit with a submissionId is idempotent: sent again with the same id', async () => {
    fake = await fakeServer(['reset', 'mid-body'], { id: 12, submissionId: 'sub-1', status: 'PENDING' });
    const { c } = client(fake.url);
    const r = await c.submit({ cmd: 'true', submissionId: 'sub-1' });
    expect(r.id).toBe(12);
    expect(fake.requests.map((q) => JSON.parse(q.body).submissionId)).toEqual(['sub-1', 'sub-1', 'sub-1']);
  });

  it('a submit without a submissionId is not sent twice', async () => {
    fake = await fakeServer(['mid-body']);
    const { c } = client(fake.url);
    expect((await failure(c.submit({ cmd: 'true' }))).exitCode).toBe(EXIT.UNREACHABLE);
    expect(fake.requests).toHaveLength(1);
  });

  it('refused at the first try: exit 6 at once, no retry', async () => {
    fake = await fakeServer([]);
    const url = fake.url;
    await fake.close();
    fake = null;
    const { c, waits } = client(url);
    const e = await failure(c.get(7));
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toContain(`cannot reach jobdeck at ${url} (ECONNREFUSED)`);
    expect(waits).toEqual([]);
  });
});
