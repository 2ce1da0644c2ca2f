/**
 * Follows a job over its WebSocket stream (`/ws/jobs/:id`, lib/logs/protocol.ts) and writes what
 * FollowRenderer makes of it: log bytes raw to stdout, markers to stderr.
 *
 * Survives a dropped connection: it reconnects with backoff (250 ms doubling to 5 s) and resumes
 * from the renderer's position (last task, attempt and byte offset received), so nothing is lost
 * and nothing is printed twice; after `reconnectTimeoutMs` without getting through it gives up
 * with STOPPED_FOLLOWING. Respects stdout backpressure (pauses the socket until `drain`).
 * Ctrl-C (the `signal`) stops following; the job keeps running.
 */
import WebSocket from 'ws';
import { decodeLogChunk, type StreamMessage } from '../logs/protocol';
import type { Connection } from './config';
import { CliError } from './errors';
import { EXIT, exitCodeForStatus } from './exit-codes';
import { type Colors } from './format';
import { FollowRenderer, type FollowOutcome, type Output, type Position } from './follow-render';
import { isUnreachable, unreachableMessage } from './client';

/** A writable the follower writes to (process.stdout / stderr, or a test sink). */
export interface Sink {
  write(chunk: string | Uint8Array): boolean;
  once(event: 'drain', cb: () => void): unknown;
  isTTY?: boolean;
}

/** Options of followJob. */
export interface FollowOptions {
  conn: Connection;
  jobId: number;
  scope?: { task: number; attempt?: number };
  /** false = `--no-follow`: print what exists and stop. */
  follow: boolean;
  stdout: Sink;
  stderr: Sink;
  colors: Colors;
  /** Aborted by Ctrl-C: stop following (exit STOPPED_FOLLOWING). */
  signal?: AbortSignal;
  /** Give up reconnecting after this many ms without a working connection (default 60 000). */
  reconnectTimeoutMs?: number;
  /** Called with each connect URL (tests observe resumes). */
  onConnect?: (url: string) => void;
}

/** What followJob ended with. */
export interface FollowResult {
  exitCode: number;
  outcome: FollowOutcome;
  /** How many times it connected (1 = no reconnect). */
  connections: number;
}

type Attempt =
  | { kind: 'done' }
  | { kind: 'dropped'; reason: string; progressed: boolean; opened: boolean; refused: boolean }
  | { kind: 'fatal'; error: CliError }
  | { kind: 'aborted' };

/** Builds the stream URL for a position. */
export function streamUrl(base: string, jobId: number, pos: Position, follow: boolean, since?: number): string {
  const u = new URL(`${base.replace(/^http/, 'ws')}/ws/jobs/${jobId}`);
  u.searchParams.set('task', String(pos.task));
  u.searchParams.set('attempt', String(pos.attempt));
  u.searchParams.set('offset', String(pos.offset));
  u.searchParams.set('follow', follow ? '1' : '0');
  if (since !== undefined) u.searchParams.set('since', String(since));
  return u.toString();
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Follows job `jobId` until the end (or the scope's end), Ctrl-C, or giving up on a lost server.
 * @throws CliError NOT_FOUND (no such job), UNAUTHORIZED, UNREACHABLE (never connected),
 *   INTERNAL (protocol error). Stopping early is not thrown: it answers exitCode STOPPED_FOLLOWING.
 */
export async function followJob(opts: FollowOptions): Promise<FollowResult> {
  const sameTerminal = !!opts.stdout.isTTY && !!opts.stderr.isTTY;
  const r = new FollowRenderer({ jobId: opts.jobId, scope: opts.scope, follow: opts.follow, colors: opts.colors, sameTerminal });
  const timeout = opts.reconnectTimeoutMs ?? 60_000;
  let everOpened = false;
  let connections = 0;
  let backoff = 250;
  let outageSince: number | null = null;
  let warned = false;
  const c = opts.colors;

  const stopped = (why: string): FollowResult => {
    const tail = `Stopped following job ${opts.jobId}${why}; it keeps running (\`jobdeck logs ${opts.jobId}\` follows it again, \`jobdeck cancel ${opts.jobId}\` stops it).`;
    opts.stderr.write(`\n${c.yellow(tail)}\n`);
    return { exitCode: EXIT.STOPPED_FOLLOWING, outcome: r.outcome(), connections };
  };

  while (!r.done) {
    if (opts.signal?.aborted) return stopped('');
    const url = streamUrl(opts.conn.url, opts.jobId, r.position(), opts.follow, r.since());
    connections++;
    opts.onConnect?.(url);
    const res = await connectOnce(url, opts, r);
    if (res.kind === 'done') break;
    if (res.kind === 'aborted') return stopped('');
    if (res.kind === 'fatal') throw res.error;
    if (res.opened) everOpened = true;
    if (!everOpened && res.refused) throw new CliError(unreachableMessage(opts.conn.url), EXIT.UNREACHABLE);
    if (res.progressed) {
      outageSince = null;
      backoff = 250;
      if (warned) warned = false;
    }
    const now = Date.now();
    outageSince ??= now;
    if (now - outageSince >= timeout) return stopped(` (lost the connection to ${opts.conn.url} for ${Math.round(timeout / 1000)} s: ${res.reason})`);
    if (!warned && !res.progressed) {
      warned = true;
      opts.stderr.write(`${c.yellow(`⚠ lost the connection to jobdeck (${res.reason}); reconnecting…`)}\n`);
    }
    await sleep(res.progressed ? 0 : backoff, opts.signal);
    if (!res.progressed) backoff = Math.min(backoff * 2, 5000);
  }
  const outcome = r.outcome();
  const exitCode = !opts.follow ? EXIT.OK : outcome.terminal && outcome.status ? exitCodeForStatus(outcome.status) : EXIT.OK;
  return { exitCode, outcome, connections };
}

function connectOnce(url: string, opts: FollowOptions, r: FollowRenderer): Promise<Attempt> {
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    let opened = false;
    let progressed = false;
    let lastError: string | null = null;
    let lastErrorMessage: string | null = null;
    const headers: Record<string, string> = {};
    if (opts.conn.token) headers.authorization = `Bearer ${opts.conn.token}`;
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000, perMessageDeflate: false });

    const finish = (a: Attempt) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) {
        if (a.kind === 'done') ws.close(1000);
        else ws.terminate();
      }
      resolve(a);
    };
    const onAbort = () => finish({ kind: 'aborted' });
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const write = (outs: Output[]) => {
      let blocked = false;
      for (const o of outs) {
        const ok = o.to === 'out' ? opts.stdout.write(o.data) : opts.stderr.write(o.text);
        if (!ok && o.to === 'out') blocked = true;
      }
      if (blocked && !ws.isPaused) {
        ws.pause();
        opts.stdout.once('drain', () => ws.resume());
      }
    };

    ws.on('open', () => {
      opened = true;
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d.length < 4000 ? d : ''));
      res.on('end', () => {
        let detail = body.trim();
        try {
          const j = JSON.parse(body) as { detail?: string };
          if (j.detail) detail = j.detail;
        } catch {
          /* plain text */
        }
        const code = res.statusCode ?? 0;
        if (code === 404) finish({ kind: 'fatal', error: new CliError(detail || `job ${opts.jobId} not found`, EXIT.NOT_FOUND) });
        else if (code === 401 || code === 403) finish({ kind: 'fatal', error: new CliError(`${detail || 'unauthorized'} (HTTP ${code}; set --token or JOBDECK_TOKEN)`, EXIT.UNAUTHORIZED) });
        else if (code === 400) finish({ kind: 'fatal', error: new CliError(detail || 'the server refused the stream request', EXIT.USAGE) });
        else finish({ kind: 'dropped', reason: `HTTP ${code}${detail ? `: ${detail.slice(0, 200)}` : ''}`, progressed, opened, refused: false });
      });
      res.on('error', () => finish({ kind: 'dropped', reason: `HTTP ${res.statusCode}`, progressed, opened, refused: false }));
    });
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (settled) return;
      progressed = true;
      try {
        if (isBinary) {
          const buf = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
          write(r.chunk(decodeLogChunk(buf)));
        } else {
          const msg = JSON.parse(data.toString()) as StreamMessage;
          if (msg.type === 'error') {
            lastError = `${msg.code}: ${msg.message}`;
            lastErrorMessage = msg.code === 'deleted' ? `job ${opts.jobId} was deleted while following it${msg.message ? ` (${msg.message})` : ''}` : msg.message;
          }
          write(r.message(msg));
        }
      } catch (err) {
        finish({ kind: 'fatal', error: new CliError(`bad message on the job stream: ${(err as Error).message}`, EXIT.INTERNAL) });
        return;
      }
      if (r.done) finish({ kind: 'done' });
    });
    ws.on('close', (code: number, reason: Buffer) => {
      const told = lastErrorMessage || reason.toString();
      const why = lastError || reason.toString() || `closed with code ${code}`;
      if (r.done) return finish({ kind: 'done' });
      if (code === 4404) return finish({ kind: 'fatal', error: new CliError(told || `job ${opts.jobId} not found`, EXIT.NOT_FOUND) });
      if (code === 4401) return finish({ kind: 'fatal', error: new CliError(`${told || 'unauthorized'} (set --token or JOBDECK_TOKEN)`, EXIT.UNAUTHORIZED) });
      if (code === 4400) return finish({ kind: 'fatal', error: new CliError(`the server refused the stream request: ${told || 'bad request'}`, EXIT.INTERNAL) });
      finish({ kind: 'dropped', reason: why, progressed, opened, refused: false });
    });
    ws.on('error', (err: Error) => {
      finish({ kind: 'dropped', reason: err.message || String(err), progressed, opened, refused: !opened && isUnreachable(err) });
    });
  });
}
