/**
 * Follows a job over its WebSocket stream (`/ws/jobs/:id`, lib/logs/protocol.ts) and writes what
 * FollowRenderer makes of it: log bytes to stdout, markers to stderr. The bytes are exact unless
 * stdout is a terminal: then escape sequences other than colours are removed
 * (lib/cli/terminal-safe.ts; `raw` keeps them).
 *
 * Survives a dropped connection: it reconnects with backoff (lib/cli/backoff.ts) and resumes
 * from the renderer's position (last task, attempt and byte offset received), so nothing is lost
 * and nothing is printed twice; after `reconnectTimeoutMs` without getting through it gives up
 * with STOPPED_FOLLOWING. Respects stdout backpressure (pauses the socket until `drain`).
 * Ctrl-C (the `signal`) stops following; the job keeps running.
 */
import WebSocket from 'ws';
import { isTerminal } from '../jobs/status';
import { decodeLogChunk, type StreamMessage } from '../logs/protocol';
import type { Connection } from './config';
import { CliError } from './errors';
import { EXIT, exitCodeForStatus } from './exit-codes';
import { type Colors } from './format';
import { FollowRenderer, type FollowOutcome, type Output, type Position } from './follow-render';
import { isUnreachable, unreachableMessage } from './client';
import { backoffDelay } from './backoff';

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
  /** Prints each connection and how it ended to stderr (JOBDECK_DEBUG). */
  debug?: boolean;
  /** Write the log bytes exactly even when stdout is a terminal (`--raw`). */
  raw?: boolean;
}

/** What followJob ended with. */
export interface FollowResult {
  exitCode: number;
  outcome: FollowOutcome;
  /** How many times it connected (1 = no reconnect). */
  connections: number;
}

/** Abort reason meaning "stdout was closed" (e.g. `jobdeck logs 7 | head`): stop without a word. */
export const OUTPUT_CLOSED = 'output-closed';

/** Send `{"type":"ping"}` after this long without a message from the server (ms). */
export const PING_AFTER_MS = 10_000;
/** Give the connection up (and reconnect) after this long without any message (ms). */
export const DEAD_AFTER_MS = 25_000;
/** After the server said it is stopping (`going_away`), wait this long before reconnecting (ms). */
export const GOING_AWAY_WAIT_MS = 1000;
/** Give a new connection up when its `hello` has not come within this long (ms). */
export const HELLO_WITHIN_MS = 10_000;

type Attempt =
  | { kind: 'done' }
  | { kind: 'dropped'; reason: string; progressed: boolean; opened: boolean; refused: boolean; retryAfterMs?: number }
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
  const terminalSafe = !!opts.stdout.isTTY && !opts.raw;
  const r = new FollowRenderer({ jobId: opts.jobId, scope: opts.scope, follow: opts.follow, colors: opts.colors, sameTerminal, terminalSafe });
  const timeout = opts.reconnectTimeoutMs ?? 60_000;
  let everOpened = false;
  let connections = 0;
  let failures = 0;
  let outageSince: number | null = null;
  let warned = false;
  const c = opts.colors;

  const stopped = (why: string): FollowResult => {
    // A closed stdout (`| head`) ends quietly, like any Unix filter; Ctrl-C and giving up say so
    // (after a colour reset the log may owe the terminal).
    if (opts.signal?.reason !== OUTPUT_CLOSED) {
      for (const o of r.flush()) if (o.to === 'out') opts.stdout.write(o.data);
      const ended = r.jobSummary() && isTerminal('job', r.jobSummary()!.status);
      const tail = ended
        ? `Stopped following job ${opts.jobId}${why}.`
        : `Stopped following job ${opts.jobId}${why}; it keeps running (\`jobdeck logs ${opts.jobId}\` follows it again, \`jobdeck cancel ${opts.jobId}\` stops it).`;
      opts.stderr.write(`\n${c.yellow(tail)}\n`);
    }
    return { exitCode: EXIT.STOPPED_FOLLOWING, outcome: r.outcome(), connections };
  };

  while (!r.done) {
    if (opts.signal?.aborted) return stopped('');
    const url = streamUrl(opts.conn.url, opts.jobId, r.position(), opts.follow, r.since());
    connections++;
    const resumeAt = r.position();
    const res = await connectOnce(url, opts, r, () => {
      if (!warned) return;
      warned = false;
      opts.stderr.write(`${c.dim(`↻ reconnected to jobdeck; resuming at task ${resumeAt.task}, attempt ${resumeAt.attempt}, byte ${resumeAt.offset}`)}\n`);
    });
    if (opts.debug) opts.stderr.write(`[jobdeck debug] ${url} → ${JSON.stringify(res.kind === 'fatal' ? { kind: 'fatal', message: res.error.message } : res)}\n`);
    if (res.kind === 'done') break;
    if (res.kind === 'aborted') return stopped('');
    if (res.kind === 'fatal') throw res.error;
    if (res.opened) everOpened = true;
    // Refused at the very first try: nobody listens there. A reset or a later refusal (a server
    // restarting) is retried like any drop.
    if (!everOpened && connections === 1 && res.refused) throw new CliError(unreachableMessage(opts.conn.url), EXIT.UNREACHABLE);
    if (res.progressed) {
      outageSince = null;
      failures = 0;
      warned = false;
    }
    const now = Date.now();
    outageSince ??= now;
    if (now - outageSince >= timeout) return stopped(` (lost the connection to ${opts.conn.url} for ${Math.round(timeout / 1000)} s: ${res.reason})`);
    if (!warned && !res.progressed) {
      warned = true;
      opts.stderr.write(`${c.yellow(`⚠ lost the connection to jobdeck (${res.reason}); reconnecting…`)}\n`);
    }
    if (!res.progressed) failures++;
    await sleep(res.progressed ? (res.retryAfterMs ?? 0) : Math.max(backoffDelay(failures), res.retryAfterMs ?? 0), opts.signal);
  }
  const outcome = r.outcome();
  const exitCode = !opts.follow ? EXIT.OK : outcome.terminal && outcome.status ? exitCodeForStatus(outcome.status) : EXIT.OK;
  return { exitCode, outcome, connections };
}

function connectOnce(url: string, opts: FollowOptions, r: FollowRenderer, onHello: () => void): Promise<Attempt> {
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    let opened = false;
    let progressed = false;
    let lastError: string | null = null;
    let lastErrorMessage: string | null = null;
    let goingAway = false;
    const headers: Record<string, string> = {};
    if (opts.conn.token) headers.authorization = `Bearer ${opts.conn.token}`;
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000, perMessageDeflate: false });

    const createdAt = Date.now();
    let lastMessage = Date.now();
    let helloSeen = false;
    const openedAt = { t: 0 };
    // Heartbeat: a server that stops answering (half-open TCP, a server stuck while stopping)
    // must not hang the follow forever.
    const beat = setInterval(() => {
      if (settled) return;
      if (!opened) {
        if (Date.now() - createdAt > HELLO_WITHIN_MS) finish({ kind: 'dropped', reason: `the server did not answer the connection within ${HELLO_WITHIN_MS / 1000} s`, progressed, opened, refused: false });
        return;
      }
      const idle = Date.now() - lastMessage;
      if (!helloSeen && Date.now() - openedAt.t > HELLO_WITHIN_MS) {
        finish({ kind: 'dropped', reason: `no hello from the server within ${HELLO_WITHIN_MS / 1000} s`, progressed, opened, refused: false });
      } else if (idle > DEAD_AFTER_MS) {
        finish({ kind: 'dropped', reason: `no answer from the server for ${Math.round(idle / 1000)} s`, progressed, opened, refused: false });
      } else if (idle > PING_AFTER_MS && ws.readyState === WebSocket.OPEN) {
        ws.send('{"type":"ping"}');
      }
    }, 1000);
    beat.unref?.();

    const finish = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearInterval(beat);
      // A connection that delivered something, or stood with its hello for a while, was a good
      // one: the outage (and the backoff) start again from the next drop.
      if (a.kind === 'dropped') {
        a.progressed = progressed || (helloSeen && Date.now() - openedAt.t > 5000);
        // A stopping server is not back yet: give it a moment before knocking again.
        if (goingAway) a.retryAfterMs = GOING_AWAY_WAIT_MS;
      }
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
      openedAt.t = Date.now();
      lastMessage = Date.now();
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
      lastMessage = Date.now();
      try {
        if (isBinary) {
          const buf = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
          progressed = true;
          write(r.chunk(decodeLogChunk(buf)));
        } else {
          const msg = JSON.parse(data.toString()) as StreamMessage | { type: 'pong' };
          if (msg.type === 'pong') return;
          if (msg.type === 'hello') {
            helloSeen = true;
            onHello();
          }
          else if (msg.type !== 'error') progressed = true;
          if (msg.type === 'error') {
            lastError = `${msg.code}: ${msg.message}`;
            if (msg.code === 'going_away') goingAway = true;
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
