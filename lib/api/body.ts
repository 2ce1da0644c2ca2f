import { badRequest, payloadTooLarge } from './errors';

/** Largest request body the job routes accept (bytes): 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Where the custom server's API router (lib/server/api-router.ts) leaves a body it has already
 * read whole (a declared Content-Length ≤ MAX_BODY_BYTES): on the Request itself, so readBody()
 * and limitRequestBody() use the bytes without going through Web streams again. Symbol.for, so
 * every copy of this module (route bundles) sees the same key.
 */
const BUFFERED_BODY = Symbol.for('jobdeck.request.bufferedBody');

/** Marks `req` as carrying `bytes`, its whole body (already read from the socket). Returns `req`. */
export function attachBufferedBody(req: Request, bytes: Uint8Array): Request {
  (req as unknown as Record<symbol, Uint8Array>)[BUFFERED_BODY] = bytes;
  return req;
}

/** The whole body the API router read for `req`, or undefined (then read req.body). */
export function bufferedBody(req: Request): Uint8Array | undefined {
  return (req as unknown as Record<symbol, Uint8Array | undefined>)[BUFFERED_BODY];
}

/**
 * Reads a request body as UTF-8 text, streaming, and stops as soon as more than `limit` bytes
 * arrived (never buffers more than `limit` + one chunk). The one place the job routes read a
 * body, so a shared helper can replace it.
 *
 * @param limit maximum body size in bytes (default MAX_BODY_BYTES).
 * @throws ApiError 413 when the body (or its Content-Length) exceeds `limit`; 400 when the bytes
 *   are not valid UTF-8.
 */
export async function readBody(req: Request, limit: number = MAX_BODY_BYTES): Promise<string> {
  return decodeUtf8(await readBytes(req, limit));
}

/**
 * Reads a request body as bytes, streaming, with the same limit rule as {@link readBody}.
 * @throws ApiError 413 when the body (or its Content-Length) exceeds `limit`.
 */
export async function readBytes(req: Request, limit: number = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    throw payloadTooLarge(`request body is ${declared} bytes; the limit is ${limit} bytes`);
  }
  const whole = bufferedBody(req);
  if (whole) {
    if (whole.byteLength > limit) throw payloadTooLarge(`request body exceeds the limit of ${limit} bytes`);
    return whole;
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      // Release, don't cancel: cancelling destroys the connection before the 413 is sent.
      reader.releaseLock();
      throw payloadTooLarge(`request body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest('request body is not valid UTF-8 text');
  }
}
