/**
 * The custom server's API router (lib/server/api-router.ts) against a real server process:
 * every route file under app/api is served by it with the methods it exports; unknown paths and
 * methods get problem+json 404 / 405 with `Allow` (Next would answer its HTML 404 page: these
 * prove the router, not Next, answers `/api/…`); HEAD and OPTIONS behave like Next's defaults;
 * JSON answers carry Content-Length; a 20 MB log download streams intact, and a client that
 * drops one half-way leaves the server answering.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRouteFiles } from '../helpers/security';
import { startServerProcess, type ServerProcess } from '../helpers/server';

describe('API router', () => {
  let server: ServerProcess;
  const api = (p: string, init?: RequestInit) => server.api(p, init);

  beforeAll(async () => {
    server = await startServerProcess();
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('serves every route file under app/api with each method it exports', async () => {
    const files = apiRouteFiles();
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      // OPTIONS lists what the router registered for that path.
      const res = await api(f.path, { method: 'OPTIONS' });
      expect(res.status, `${f.file}: OPTIONS ${f.path}`).toBe(204);
      const allow = (res.headers.get('allow') ?? '').split(/,\s*/);
      for (const m of f.methods) expect(allow, `${f.file}: ${m}`).toContain(m);
    }
  });

  it('answers an unknown API path with 404 and a method a route lacks with 405 + Allow, as problem+json', async () => {
    const nope = await api('/api/no-such-thing');
    expect(nope.status).toBe(404);
    expect(nope.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await nope.json()).detail).toBe('no API endpoint at /api/no-such-thing');

    const wrong = await api('/api/health', { method: 'PUT', body: 'x' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await wrong.json()).detail).toMatch(/PUT is not supported on \/api\/health/);
    // The connection is still usable after an unread body.
    expect((await api('/api/health')).status).toBe(200);

    // A dynamic segment that is not valid percent-encoding: 400 saying which segment, not 404.
    const malformed = await api('/api/jobs/%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).detail).toMatch(/segment 3 of \/api\/jobs\/%E0%A4%A is not valid percent-encoding/);
    // …and a path no route matches stays 404 whatever its encoding.
    expect((await api('/api/no-such-thing/%E0%A4%A')).status).toBe(404);
  });

  it('answers HEAD like GET without a body, and JSON with Content-Length', async () => {
    const get = await api('/api/jobs?limit=1');
    const text = await get.text();
    expect(get.status).toBe(200);
    expect(get.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    const head = await api('/api/jobs?limit=1', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
  });

  it('streams a 20 MB log download intact; a client that drops one half-way leaves the server answering', async () => {
    const bytes = 20_000_000;
    const sub = await api('/api/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cmd: `yes 0123456789abcdef | head -c ${bytes}`, name: 'download' }),
    });
    expect(sub.status).toBe(201);
    const { id } = await sub.json();
    for (let i = 0; ; i++) {
      const job = await (await api(`/api/jobs/${id}`)).json();
      if (job.status === 'SUCCEEDED') break;
      expect(['PENDING', 'STARTING', 'RUNNING'], JSON.stringify(job)).toContain(job.status);
      expect(i).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 100));
    }
    const want = createHash('sha256');
    const line = Buffer.from('0123456789abcdef\n');
    const whole = Buffer.alloc(bytes);
    for (let n = 0; n < bytes; n += line.length) line.copy(whole, n, 0, Math.min(line.length, bytes - n));
    want.update(whole);

    const res = await api(`/api/jobs/${id}/logs/download`);
    expect(res.status).toBe(200);
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.length).toBe(bytes);
    expect(createHash('sha256').update(got).digest('hex')).toBe(want.digest('hex'));

    for (let k = 0; k < 3; k++) {
      const ac = new AbortController();
      const part = await api(`/api/jobs/${id}/logs/download`, { signal: ac.signal });
      const reader = part.body!.getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      ac.abort();
      await reader.closed.catch(() => undefined);
    }
    const health = await api('/api/health');
    expect(health.status).toBe(200);
    expect(server.output()).not.toMatch(/"level":50/);
  });
});
