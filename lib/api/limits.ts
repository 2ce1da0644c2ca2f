import { bufferedBody } from './body';
import { ApiError, badRequest, payloadTooLarge } from './errors';

/**
 * Generic input limits every route gets from apiRoute() without doing anything: the request body
 * is replaced by a stream that refuses more than the cap (413) and, for JSON bodies, nesting
 * deeper than MAX_JSON_DEPTH (400) — whether the handler calls req.json(), req.text(),
 * readBody() or reads the stream. Route-specific limits (YAML documents, aliases, names, envs)
 * belong to their parsers (lib/jobs/spec/).
 */

/** Deepest JSON nesting accepted in a request body (arrays + objects). */
export const MAX_JSON_DEPTH = 64;

/**
 * Streaming JSON nesting counter over UTF-8 bytes (multi-byte sequences never contain ASCII, so
 * bytes suffice). Tracks strings and escapes across chunk boundaries. feed() returns the byte
 * index (within the chunk) where the depth first exceeded `maxDepth`, or -1.
 */
export class JsonDepthScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Bytes seen so far. */
  seen = 0;
  constructor(readonly maxDepth: number = MAX_JSON_DEPTH) {}

  feed(chunk: Uint8Array): number {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) this.inString = false;
      } else if (b === 0x22) this.inString = true;
      else if (b === 0x5b || b === 0x7b) {
        if (++this.depth > this.maxDepth) {
          this.seen += i;
          return i;
        }
      } else if (b === 0x5d || b === 0x7d) this.depth = Math.max(0, this.depth - 1);
    }
    this.seen += chunk.length;
    return -1;
  }
}

/**
 * Depth of a JSON text's nesting, without parsing (iterative: no stack overflow on hostile
 * input). @throws ApiError 400 when deeper than `maxDepth`.
 */
export function assertJsonDepth(text: string, maxDepth: number = MAX_JSON_DEPTH): void {
  const s = new JsonDepthScanner(maxDepth);
  const at = s.feed(new TextEncoder().encode(text));
  if (at >= 0) throw badRequest(`JSON nested deeper than ${maxDepth} levels (at byte ${at})`);
}

/** True for `application/json`, `application/*+json`, `text/json`. */
export function isJsonContentType(ct: string | null | undefined): boolean {
  const t = (ct ?? '').split(';')[0].trim().toLowerCase();
  return t === 'application/json' || t === 'text/json' || (t.startsWith('application/') && t.endsWith('+json'));
}

/** A request whose body is guarded by limitRequestBody(). */
export interface LimitedRequest {
  request: Request;
  /** The limit error, once the body broke a limit (the answer must then be that error). */
  tripped(): ApiError | null;
}

/**
 * Guards a request body: a declared Content-Length over `limit` throws 413 at once (nothing is
 * read); otherwise returns a copy of the request whose body stream errors with ApiError 413 as
 * soon as more than `limit` bytes arrive (never holds more than one chunk beyond what the reader
 * took), or 400 when a JSON body nests deeper than MAX_JSON_DEPTH. On a refusal the source is
 * released, not cancelled: cancelling would destroy the socket before the 413 could be sent.
 * A body the API router already read whole (lib/api/body.ts bufferedBody) is checked at once and
 * the request returned as is.
 *
 * @param limit bytes.
 * @throws ApiError 413 when the declared length (or a body read whole) exceeds `limit`; 400 when
 *   a body read whole is JSON nested deeper than MAX_JSON_DEPTH.
 */
export function limitRequestBody(req: Request, limit: number): LimitedRequest {
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    throw payloadTooLarge(`request body is ${declared} bytes; the limit is ${limit} bytes`);
  }
  if (!req.body || req.method === 'GET' || req.method === 'HEAD') return { request: req, tripped: () => null };
  const scanner = isJsonContentType(req.headers.get('content-type')) ? new JsonDepthScanner() : null;
  const whole = bufferedBody(req);
  if (whole) {
    // Read whole already (lib/server/api-router.ts): the same checks, once, on the bytes.
    if (whole.byteLength > limit) throw payloadTooLarge(`request body exceeds the limit of ${limit} bytes`);
    if (scanner && scanner.feed(whole) >= 0) throw badRequest(`JSON body nested deeper than ${scanner.maxDepth} levels (at byte ${scanner.seen})`);
    return { request: req, tripped: () => null };
  }
  let tripped: ApiError | null = null;
  const source = req.body.getReader();
  let total = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await source.read();
      } catch (err) {
        controller.error(err);
        return;
      }
      if (r.done) {
        controller.close();
        return;
      }
      total += r.value.byteLength;
      if (total > limit) tripped = payloadTooLarge(`request body exceeds the limit of ${limit} bytes`);
      else if (scanner && scanner.feed(r.value) >= 0) tripped = badRequest(`JSON body nested deeper than ${scanner.maxDepth} levels (at byte ${scanner.seen})`);
      if (tripped) {
        source.releaseLock();
        controller.error(tripped);
        return;
      }
      controller.enqueue(r.value);
    },
    cancel() {
      source.releaseLock();
    },
  });
  // Node's fetch needs `duplex: 'half'` for a stream body (not in every RequestInit typing).
  const init: RequestInit & { duplex: 'half' } = { method: req.method, headers: req.headers, body, signal: req.signal, duplex: 'half' };
  const request = new Request(req.url, init);
  return { request, tripped: () => tripped };
}
