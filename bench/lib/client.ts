/**
 * The bench's client side of jobdeck: REST calls and the two WebSockets (`/ws/jobs/:id` job
 * stream, `/ws/jobs` list stream), with the bearer token, as the CLI would speak them.
 */
import http from 'node:http';
import WebSocket from 'ws';
import type { CancelResult, JobDetail, JobList, JobSummary, ListMessage, StreamMessage, SubmitResult } from '../../lib/api/types';
import { decodeLogChunk } from '../../lib/logs/protocol';
import type { BenchServer } from './server';
import { nowMs } from './util';

/** Submits a one-command job (`{cmd}` JSON form) and returns the answer. */
export async function submitCmd(s: BenchServer, cmd: string, extra: { name?: string; submissionId?: string } = {}): Promise<SubmitResult> {
  return s.json<SubmitResult>('/api/jobs', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ cmd, ...extra }),
  });
}

/** GET /api/jobs/:id. */
export function jobDetail(s: BenchServer, id: number): Promise<JobDetail> {
  return s.json<JobDetail>(`/api/jobs/${id}`);
}

/** Every job matching `query` (e.g. "status=RUNNING"), walking the cursor 200 at a time. */
export async function listAll(s: BenchServer, query = ''): Promise<JobSummary[]> {
  const out: JobSummary[] = [];
  let cursor: string | null = null;
  for (;;) {
    const qs = new URLSearchParams(query);
    qs.set('limit', '200');
    if (cursor) qs.set('cursor', cursor);
    const page: JobList = await s.json<JobList>(`/api/jobs?${qs}`);
    out.push(...page.jobs);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}

/** POST /api/jobs/cancel for every job that is not terminal. */
export function cancelAll(s: BenchServer, signal?: AbortSignal): Promise<CancelResult> {
  return s.json<CancelResult>('/api/jobs/cancel', {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ all: true }),
  });
}

/** What a socket ended with. */
export interface Closed {
  code: number;
  reason: string;
  /** Set when the socket failed (connection refused, HTTP error on upgrade). */
  error?: string;
}

function openSocket(s: BenchServer, pathname: string): WebSocket {
  return new WebSocket(`${s.wsUrl}${pathname}`, {
    headers: { authorization: `Bearer ${s.token}` },
    perMessageDeflate: false,
    maxPayload: 64 * 1024 * 1024,
    skipUTF8Validation: true,
  });
}

function closedPromise(ws: WebSocket): Promise<Closed> {
  return new Promise<Closed>((resolve) => {
    let error: string | undefined;
    ws.on('unexpected-response', (_req, res) => {
      error = `upgrade refused: HTTP ${res.statusCode}`;
      res.resume();
      resolve({ code: -1, reason: '', error });
    });
    ws.on('error', (err) => (error = err.message));
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString(), error }));
  });
}

/** Handlers of a job stream; `t` is the wall-clock arrival time (ms, sub-ms precision). */
export interface JobStreamHandlers {
  onMessage?(msg: StreamMessage, t: number): void;
  /** A binary log frame: `bytes` log bytes at `offset` of (task, attempt). */
  onLog?(task: number, attempt: number, offset: number, bytes: number, t: number): void;
}

/** An open job stream. */
export interface JobStreamClient {
  ws: WebSocket;
  /** Resolves when the socket is open. */
  opened: Promise<void>;
  /** Resolves when the socket closed (never rejects). */
  closed: Promise<Closed>;
  /** Log bytes received so far (headers excluded). */
  logBytes(): number;
  /** Problems seen: non-contiguous offsets, undecodable frames. */
  problems: string[];
  close(): void;
}

/**
 * Opens `/ws/jobs/:id?<query>` and feeds its messages to `h`. Checks that log offsets are
 * contiguous per attempt (nothing lost, nothing twice) and records any gap in `problems`.
 */
export function openJobStream(s: BenchServer, jobId: number, query: string, h: JobStreamHandlers = {}): JobStreamClient {
  const ws = openSocket(s, `/ws/jobs/${jobId}${query ? `?${query}` : ''}`);
  let bytes = 0;
  const problems: string[] = [];
  const next = new Map<string, number>();
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    const t = nowMs();
    if (isBinary) {
      try {
        const c = decodeLogChunk(data);
        const k = `${c.task}/${c.attempt}`;
        const want = next.get(k);
        if (want !== undefined && want !== c.offset && problems.length < 10) problems.push(`task ${c.task} attempt ${c.attempt}: expected offset ${want}, got ${c.offset}`);
        next.set(k, c.offset + c.data.length);
        bytes += c.data.length;
        h.onLog?.(c.task, c.attempt, c.offset, c.data.length, t);
      } catch (err) {
        if (problems.length < 10) problems.push((err as Error).message);
      }
      return;
    }
    let msg: StreamMessage;
    try {
      msg = JSON.parse(data.toString('utf8')) as StreamMessage;
    } catch {
      if (problems.length < 10) problems.push(`not JSON: ${data.toString('utf8').slice(0, 100)}`);
      return;
    }
    h.onMessage?.(msg, t);
  });
  const closed = closedPromise(ws);
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    void closed.then((c) => reject(new Error(`job stream ${jobId} closed before opening: ${c.error ?? c.code}`)));
  });
  opened.catch(() => undefined);
  return { ws, opened, closed, logBytes: () => bytes, problems, close: () => ws.close() };
}

/** An open list stream. */
export interface ListStreamClient {
  ws: WebSocket;
  opened: Promise<void>;
  closed: Promise<Closed>;
  close(): void;
}

/** Opens `/ws/jobs` and feeds its messages to `onMessage` with their arrival time. */
export function openListStream(s: BenchServer, onMessage: (msg: ListMessage, t: number) => void): ListStreamClient {
  const ws = openSocket(s, '/ws/jobs');
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    const t = nowMs();
    if (isBinary) return;
    try {
      onMessage(JSON.parse(data.toString('utf8')) as ListMessage, t);
    } catch {
      /* ignore a malformed message */
    }
  });
  const closed = closedPromise(ws);
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    void closed.then((c) => reject(new Error(`list stream closed before opening: ${c.error ?? c.code}`)));
  });
  opened.catch(() => undefined);
  return { ws, opened, closed, close: () => ws.close() };
}

/**
 * A load generator's client for `POST /api/jobs`: node:http over a keep-alive agent with
 * `sockets` connections, one request in flight per connection — what wrk or autocannon do.
 *
 * Why not fetch(): the bench runs on the same 2 cores as the server it measures, and undici's
 * fetch costs the client ~0.6–1.5 ms of CPU per request (Web streams, Headers, Response) against
 * ~0.25 ms here (bench/README.md, "Bench-side fixes", 5). That CPU is taken from the server under test.
 */
export class SubmitClient {
  private readonly agent: http.Agent;
  private readonly url: URL;

  constructor(private readonly server: BenchServer, sockets: number) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
    this.url = new URL('/api/jobs', server.url);
  }

  /**
   * Submits a one-command job (`{cmd}` JSON form); resolves to the 2xx answer.
   * @throws Error with the status and the start of the body for any other status, or the
   *   socket's error.
   */
  submit(cmd: string, extra: { name?: string } = {}): Promise<SubmitResult> {
    const body = JSON.stringify({ cmd, ...extra });
    return new Promise<SubmitResult>((resolve, reject) => {
      const req = http.request(
        {
          host: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname,
          method: 'POST',
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.server.token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (!res.statusCode || res.statusCode < 200 || res.statusCode > 299) reject(new Error(`POST /api/jobs → ${res.statusCode}: ${text.slice(0, 500)}`));
            else {
              try {
                resolve(JSON.parse(text) as SubmitResult);
              } catch (err) {
                reject(err);
              }
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Closes the kept-alive sockets. */
  close(): void {
    this.agent.destroy();
  }
}
