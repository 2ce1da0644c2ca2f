import { badRequest, payloadTooLarge } from './errors';

/** Largest request body the job routes accept (bytes): 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

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
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    throw payloadTooLarge(`request body is ${declared} bytes; the limit is ${limit} bytes`);
  }
  if (!req.body) return '';
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
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badRequest('request body is not valid UTF-8 text');
  }
}
