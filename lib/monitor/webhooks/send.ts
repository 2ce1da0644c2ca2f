/**
 * One webhook request (docs/design.md §10 "Webhooks"): a POST to the address checked by
 * url.ts — the connection goes to exactly that address (the `lookup` of the request
 * answers it, and a kept-alive connection is reused only for that address), so DNS cannot send
 * it elsewhere between the check and the connect. Redirects are not followed (a 3xx is a failed
 * try). At most RESPONSE_HEAD_BYTES of the body are read, then the socket is dropped: a huge
 * answer costs no memory; a whole short answer leaves the connection open for the next request.
 * The whole try is bounded by a timeout.
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

/**
 * Keep-alive connections for the dispatcher's requests (one pool per server): a subscription's
 * requests go one after another, and a new TCP (and TLS) connection for each cost more than the
 * request itself (bench/README.md "Webhooks"). A pooled connection is keyed by the address it was
 * checked and made for, too, so a request only reuses a connection to the address it has just
 * checked. Idle connections close after IDLE_MS (sooner when the receiver's Keep-Alive says so).
 */
export class WebhookAgents {
  /** How long an idle connection is kept (below the 5 s of Node's own servers). */
  static readonly IDLE_MS = 4000;
  readonly http = new PinnedHttpAgent({ keepAlive: true, timeout: WebhookAgents.IDLE_MS });
  readonly https = new PinnedHttpsAgent({ keepAlive: true, timeout: WebhookAgents.IDLE_MS });

  /** Closes every pooled connection (the server stops). */
  destroy(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

type PinnedArgs = http.ClientRequestArgs & { pinnedAddress?: string };

/** http.Agent whose pool name also holds the checked address (`pinnedAddress`). */
class PinnedHttpAgent extends http.Agent {
  override getName(o: PinnedArgs = {}): string {
    return `${super.getName(o)}:@${o.pinnedAddress ?? ''}`;
  }
}

/** https.Agent whose pool name also holds the checked address (`pinnedAddress`). */
class PinnedHttpsAgent extends https.Agent {
  override getName(o: PinnedArgs = {}): string {
    return `${super.getName(o)}:@${o.pinnedAddress ?? ''}`;
  }
}

/** Errors of a request on a reused connection that its receiver had closed meanwhile. */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * Sends one request (see the module comment); never throws: a failure is a result. With `agents`,
 * over a kept-alive connection; a request that finds its reused connection closed by the
 * receiver before any answer is sent once more on a new connection (Node's advice for
 * `req.reusedSocket`).
 */
export async function sendWebhook(r: SendRequest, agents?: WebhookAgents): Promise<SendResult> {
  const t0 = performance.now();
  const done = (x: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...x, latencyMs: Math.round(performance.now() - t0) });
  let address: CheckedAddress;
  try {
    address = await resolveWebhookHost(r.url, r.allowPrivate);
  } catch (err) {
    return done({ ok: false, statusCode: null, error: (err as Error).message, responseHead: null });
  }
  const https_ = r.url.protocol === 'https:';
  const agent = agents ? (https_ ? agents.https : agents.http) : false;
  const deadline = t0 + r.timeoutMs;
  const first = await tryOnce(r, address, agent, r.timeoutMs);
  if (!first.staleSocket) return done(first.result);
  return done((await tryOnce(r, address, false, Math.max(1, deadline - performance.now()))).result);
}

/** One POST on `agent`'s connection (or a new one): its result, and whether it failed on a reused connection the receiver had closed. */
function tryOnce(r: SendRequest, address: CheckedAddress, agent: http.Agent | false, timeoutMs: number): Promise<{ result: Omit<SendResult, 'latencyMs'>; staleSocket: boolean }> {
  const mod = r.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let kept = 0;
    let statusCode: number | null = null;
    let location: string | undefined;
    // `drop`: the socket is not reused (an error, the timeout, an answer longer than we read).
    const finish = (error: string | null, drop: boolean, staleSocket = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (drop || agent === false) req.destroy();
      const head = statusCode === null ? null : Buffer.concat(chunks).toString('utf8');
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      let why = error;
      if (!why && statusCode !== null && !ok) why = statusCode >= 300 && statusCode < 400 ? `redirect (${statusCode}${location ? ` to ${location.slice(0, 200)}` : ''}) not followed` : `HTTP ${statusCode}`;
      resolve({ result: { ok, statusCode, error: why, responseHead: head }, staleSocket });
    };
    const req = mod.request(r.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'jobdeck-webhooks', ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) },
      lookup: lookupTo(address),
      agent,
      pinnedAddress: address.address,
    } as http.RequestOptions);
    const timer = setTimeout(() => finish(statusCode === null ? `timed out after ${timeoutMs} ms` : null, true), timeoutMs);
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
        if (kept >= RESPONSE_HEAD_BYTES) finish(null, true);
      });
      // The whole answer read: the connection may serve the subscription's next request.
      res.on('end', () => finish(null, false));
      res.on('error', () => finish(null, true));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = statusCode === null && req.reusedSocket && STALE_SOCKET.has(err.code ?? '');
      finish(statusCode === null ? (err.code ? `${err.code}: ${err.message}` : err.message) : null, true, stale);
    });
    req.end(r.body);
  });
}
