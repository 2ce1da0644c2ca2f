/**
 * One webhook request (docs/design.md §10 "Webhooks"): a POST to the address checked by
 * url.ts — the connection goes to exactly that address (the `lookup` of the request
 * answers it), so DNS cannot send it elsewhere between the check and the connect. Redirects are
 * not followed (a 3xx is a failed try). At most RESPONSE_HEAD_BYTES of the body are read, then
 * the socket is dropped: a huge answer costs no memory. The whole try is bounded by a timeout.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveWebhookHost, type CheckedAddress } from './url';

/** Bytes of a response body kept (and read) at most. */
export const RESPONSE_HEAD_BYTES = 1024;

/** What one try found. */
export interface SendResult {
  /** True for a 2xx answer. */
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** Why the try failed (null when ok). */
  error: string | null;
  /** The first ≤ 1 KiB of the body, as text (null when no answer came). */
  responseHead: string | null;
}

/** One request to send. */
export interface SendRequest {
  url: URL;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
}

function lookupTo(a: CheckedAddress): LookupFunction {
  return (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, r: Array<{ address: string; family: number }>) => void)(null, [{ address: a.address, family: a.family }]);
    else cb(null, a.address, a.family);
  };
}

/** Sends one request (see the module comment); never throws: a failure is a result. */
export async function sendWebhook(r: SendRequest): Promise<SendResult> {
  const t0 = performance.now();
  const done = (x: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...x, latencyMs: Math.round(performance.now() - t0) });
  let address: CheckedAddress;
  try {
    address = await resolveWebhookHost(r.url, r.allowPrivate);
  } catch (err) {
    return done({ ok: false, statusCode: null, error: (err as Error).message, responseHead: null });
  }
  const mod = r.url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let kept = 0;
    let statusCode: number | null = null;
    let location: string | undefined;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      const head = statusCode === null ? null : Buffer.concat(chunks).toString('utf8');
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      let why = error;
      if (!why && statusCode !== null && !ok) why = statusCode >= 300 && statusCode < 400 ? `redirect (${statusCode}${location ? ` to ${location.slice(0, 200)}` : ''}) not followed` : `HTTP ${statusCode}`;
      resolve(done({ ok, statusCode, error: why, responseHead: head }));
    };
    const req = mod.request(r.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'jobdeck-webhooks', ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) },
      lookup: lookupTo(address),
      agent: false,
    });
    const timer = setTimeout(() => finish(statusCode === null ? `timed out after ${r.timeoutMs} ms` : null), r.timeoutMs);
    req.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      location = res.headers.location;
      res.on('data', (c: Buffer) => {
        const room = RESPONSE_HEAD_BYTES - kept;
        if (room > 0) {
          chunks.push(c.subarray(0, room));
          kept += Math.min(room, c.length);
        }
        // Enough read: drop the socket instead of draining the rest.
        if (kept >= RESPONSE_HEAD_BYTES) finish(null);
      });
      res.on('end', () => finish(null));
      res.on('error', () => finish(null));
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish(statusCode === null ? (err.code ? `${err.code}: ${err.message}` : err.message) : null));
    req.end(r.body);
  });
}
