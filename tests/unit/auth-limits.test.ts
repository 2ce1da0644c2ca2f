import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api/errors';
import { JsonDepthScanner, MAX_JSON_DEPTH, assertJsonDepth, limitRequestBody } from '../../lib/api/limits';

function streamOf(chunks: Uint8Array[], onPull?: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      onPull?.();
      if (i < chunks.length) c.enqueue(chunks[i++]);
      else c.close();
    },
  });
}
function post(body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}): Request {
  const init: RequestInit & { duplex: 'half' } = { method: 'POST', body, headers, duplex: 'half' };
  return new Request('http://x/api/jobs', init);
}

describe('JSON depth', () => {
  it('counts nesting outside strings, across chunk boundaries and escapes', () => {
    expect(() => assertJsonDepth(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).not.toThrow();
    expect(() => assertJsonDepth(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`)).toThrow(/deeper than 64/);
    expect(() => assertJsonDepth(JSON.stringify({ s: '['.repeat(1000) + '\\"[[[' }))).not.toThrow();
    const s = new JsonDepthScanner(2);
    const enc = new TextEncoder();
    expect(s.feed(enc.encode('{"a\\'))).toBe(-1);
    expect(s.feed(enc.encode('"[[[", "b": ['))).toBe(-1);
    expect(s.feed(enc.encode('['))).toBe(0);
  });
});

describe('limitRequestBody', () => {
  it('refuses a declared Content-Length over the limit without reading', () => {
    let pulls = 0;
    const req = post(streamOf([new Uint8Array(10)], () => pulls++), { 'content-length': String(5 * 1024 * 1024) });
    expect(() => limitRequestBody(req, 1024)).toThrow(ApiError);
    expect(pulls).toBeLessThanOrEqual(1);
  });

  it('passes a body under the limit unchanged', async () => {
    const { request, tripped } = limitRequestBody(post('{"a":1}', { 'content-type': 'application/json' }), 1024);
    expect(await request.json()).toEqual({ a: 1 });
    expect(tripped()).toBeNull();
  });

  it('errors with 413 once the streamed body passes the limit, having read only up to it', async () => {
    const chunk = new Uint8Array(64 * 1024);
    let pulled = 0;
    const chunks = Array.from({ length: 800 }, () => chunk); // 50 MiB if read to the end
    const { request, tripped } = limitRequestBody(post(streamOf(chunks, () => pulled++)), 1024 * 1024);
    await expect(request.text()).rejects.toMatchObject({ status: 413 });
    expect(tripped()?.status).toBe(413);
    expect(pulled).toBeLessThan(20);
  });

  it('errors with 400 on JSON nested too deep, before the end of the body', async () => {
    const deep = new TextEncoder().encode('['.repeat(200_000));
    const { request, tripped } = limitRequestBody(post(streamOf([deep]), { 'content-type': 'application/json' }), 1024 * 1024);
    await expect(request.json()).rejects.toMatchObject({ status: 400 });
    expect(tripped()?.detail).toMatch(/deeper than 64/);
  });

  it('does not depth-check YAML bodies (their parser owns that)', async () => {
    const { request } = limitRequestBody(post('run: echo "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["', { 'content-type': 'application/yaml' }), 1024 * 1024);
    expect(await request.text()).toContain('run:');
  });
});
