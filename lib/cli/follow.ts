/**
 * Follows a job over its WebSocket stream (`/ws/jobs/:id`, lib/logs/protocol.ts) and writes what
 * FollowRenderer makes of it: log bytes to stdout, markers to stderr. The bytes are exact unless
 * stdout is a terminal: then escape sequences other than colours are removed
 * (lib/cli/terminal-safe.ts; `raw` keeps them).
 *
 * Survives a dropped connection: it reconnects with backoff (lib/cli/backoff.ts) and resumes
 * from the renderer's position (last task, attempt and byte offset received), so nothing is lost
 * and nothing is printed twice; after `reconnectTimeoutMs` (5 min by default) without getting
 * through it gives up with STOPPED_FOLLOWING. A server that said it is restarting (close 1001
 * "going away" or 1012 "service restart", or a `going_away` message) is knocked on often — the
 * backoff stays at most RESTART_BACKOFF_MAX_MS until it answers — so the follow carries on about
 * as soon as the new server listens (docs/cli.md, "Dropped connections"). Respects stdout
 * backpressure (pauses the socket until `drain`). Ctrl-C (the `signal`) stops following; the job
 * keeps running.
 */
import WebSocket from 'ws';
import { isTerminal } from '../jobs/status';
import type { StreamMessage } from '../api/types';
import { CLOSE, decodeLogChunk } from '../logs/protocol';
import { tokenRefusedHint, type Connection } from './config';
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
  /** Give up reconnecting after this many ms without a working connection (default DEFAULT_FOLLOW_RECONNECT_MS). */
  reconnectTimeoutMs?: number;
  /** Prints each connection and how it ended to stderr (JOBDECK_DEBUG). */
  debug?: boolean;
  /** Write the log bytes exactly even when stdout is a terminal (`--raw`). */
  raw?: boolean;
  /** Only this rank's log of multi-node attempts (`--rank K`); default every rank's, prefixed. */
  rank?: number;
  /** Prefix each log line with the ISO time it was written (`--timestamps`). */
  timestamps?: boolean;
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

/** How long a follow keeps reconnecting to a lost server by default (ms): 5 minutes. */
export const DEFAULT_FOLLOW_RECONNECT_MS = 5 * 60_000;
/** Send `{"type":"ping"}` after this long without a message from the server (ms). */
export const PING_AFTER_MS = 10_000;
/** Give the connection up (and reconnect) after this long without any message (ms). */
export const DEAD_AFTER_MS = 25_000;
/** While the server said it is restarting, never wait longer than this between tries (ms). */
export const RESTART_BACKOFF_MAX_MS = 1000;
/** WebSocket close codes that mean "the server is restarting" (RFC 6455 1001 going away, 1012 service restart). */
export const RESTART_CLOSE_CODES: readonly number[] = [1001, 1012];
/** Give a new connection up when its `hello` has not come within this long (ms). */
export const HELLO_WITHIN_MS = 10_000;
/** A connection whose hello stood this long counts as a good one even without new data (ms). */
const GOOD_CONNECTION_MS = 5000;

/** How one connection ended. */
export type Attempt =
  | { kind: 'done' }
  | {
      kind: 'dropped';
      reason: string;
      /** It delivered something (or stood with its hello for a while): the outage starts again. */
      progressed: boolean;
      opened: boolean;
      /** Refused before opening (nobody listens there). */
      refused: boolean;
      /** The server said it is restarting (RESTART_CLOSE_CODES or a `going_away` message). */
      restarting?: boolean;
      /** The server's hello came on this connection (so it is up again). */
      helloSeen?: boolean;
    }
  | { kind: 'fatal'; error: CliError }
  | { kind: 'aborted' };

/** Builds the stream URL for a position (and a rank, for `--rank K`). */
export function streamUrl(base: string, jobId: number, pos: Position, follow: boolean, since?: number, rank?: number): string {
  const u = new URL(`${base.replace(/^http/, 'ws')}/ws/jobs/${jobId}`);
  u.searchParams.set('task', String(pos.task));
  u.searchParams.set('attempt', String(pos.attempt));
  u.searchParams.set('offset', String(pos.offset));
  if (pos.offsets && pos.offsets.length > 1) u.searchParams.set('offsets', pos.offsets.join(','));
  u.searchParams.set('follow', follow ? '1' : '0');
  if (since !== undefined) u.searchParams.set('since', String(since));
  if (rank !== undefined) u.searchParams.set('rank', String(rank));
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
 * The reconnect rhythm of one follow: how long to wait after each dropped connection, when to
 * give up, and whether the server said it is restarting. Pure (the clock is passed in).
 */
export class ReconnectPlan {
  private failures = 0;
  private outageSince: number | null = null;
  /** The server said it is restarting and has not answered since. */
  restarting = false;

  constructor(readonly timeoutMs: number) {}

  /**
   * Accounts for a dropped connection at `now` (ms). Answers the wait before the next try (ms),
   * or null when the outage has lasted timeoutMs: give up.
   */
  onDrop(d: Extract<Attempt, { kind: 'dropped' }>, now: number): number | null {
    if (d.helloSeen) this.restarting = false;
    if (d.restarting) this.restarting = true;
    if (d.progressed) {
      this.outageSince = null;
      this.failures = 0;
    }
    this.outageSince ??= now;
    if (now - this.outageSince >= this.timeoutMs) return null;
    // A good connection that dropped is tried again at once, unless its server is going away.
    if (d.progressed && !this.restarting) return 0;
    this.failures++;
    const delay = backoffDelay(this.failures);
    return this.restarting ? Math.min(RESTART_BACKOFF_MAX_MS, delay) : delay;
  }
}

/**
 * Follows job `jobId` until the end (or the scope's end), Ctrl-C, or giving up on a lost server.
 * @throws CliError NOT_FOUND (no such job), UNAUTHORIZED, UNREACHABLE (never connected),
 *   INTERNAL (protocol error). Stopping early is not thrown: it answers exitCode STOPPED_FOLLOWING.
 */
export async function followJob(opts: FollowOptions): Promise<FollowResult> {
  const sameTerminal = !!opts.stdout.isTTY && !!opts.stderr.isTTY;
  const terminalSafe = !!opts.stdout.isTTY && !opts.raw;
  const r = new FollowRenderer({ jobId: opts.jobId, scope: opts.scope, follow: opts.follow, colors: opts.colors, sameTerminal, terminalSafe, rank: opts.rank, timestamps: opts.timestamps });
  const plan = new ReconnectPlan(opts.reconnectTimeoutMs ?? DEFAULT_FOLLOW_RECONNECT_MS);
  let everOpened = false;
  let connections = 0;
  let warned = false;
  const c = opts.colors;

  while (!r.done) {
    if (opts.signal?.aborted) return stopFollowing(opts, r, '', connections);
    const url = streamUrl(opts.conn.url, opts.jobId, r.position(), opts.follow, r.since(), opts.rank);
    connections++;
    const resumeAt = r.position();
    const res = await connectOnce(url, opts, r, () => {
      if (!warned) return;
      warned = false;
      opts.stderr.write(`${c.dim(`↻ reconnected to jobdeck; resuming at task ${resumeAt.task}, attempt ${resumeAt.attempt}, byte ${resumeAt.offset}`)}\n`);
    });
    if (opts.debug) opts.stderr.write(`[jobdeck debug] ${url} → ${JSON.stringify(res.kind === 'fatal' ? { kind: 'fatal', message: res.error.message } : res)}\n`);
    if (res.kind === 'done') break;
    if (res.kind === 'aborted') return stopFollowing(opts, r, '', connections);
    if (res.kind === 'fatal') throw res.error;
    if (res.opened) everOpened = true;
    // Refused at the very first try: nobody listens there. A reset or a later refusal (a server
    // restarting) is retried like any drop.
    if (!everOpened && connections === 1 && res.refused) throw new CliError(unreachableMessage(opts.conn.url), EXIT.UNREACHABLE);
    if (res.progressed) warned = false;
    const wait = plan.onDrop(res, Date.now());
    if (wait === null) return stopFollowing(opts, r, ` (lost the connection to ${opts.conn.url} for ${Math.round(plan.timeoutMs / 1000)} s: ${res.reason})`, connections);
    if (!warned && (!res.progressed || plan.restarting)) {
      warned = true;
      const why = plan.restarting ? `: the server is restarting; reconnecting for up to ${formatWait(plan.timeoutMs)}…` : ` (${res.reason}); reconnecting…`;
      opts.stderr.write(`${c.yellow(`⚠ lost the connection to jobdeck${why}`)}\n`);
    }
    await sleep(wait, opts.signal);
  }
  const outcome = r.outcome();
  const exitCode = !opts.follow ? EXIT.OK : outcome.terminal && outcome.status ? exitCodeForStatus(outcome.status) : EXIT.OK;
  return { exitCode, outcome, connections };
}

/** "5 min", "90 s" — a reconnect limit as the user reads it. */
function formatWait(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

/** Ends a follow early (Ctrl-C, closed stdout, server lost): flushes, says so, answers STOPPED_FOLLOWING. */
function stopFollowing(opts: FollowOptions, r: FollowRenderer, why: string, connections: number): FollowResult {
  // A closed stdout (`| head`) ends quietly, like any Unix filter; Ctrl-C and giving up say so
  // (after a colour reset the log may owe the terminal).
  if (opts.signal?.reason !== OUTPUT_CLOSED) {
    for (const o of r.flush()) if (o.to === 'out') opts.stdout.write(o.data);
    const ended = r.jobSummary() && isTerminal('job', r.jobSummary()!.status);
    const tail = ended
      ? `Stopped following job ${opts.jobId}${why}.`
      : `Stopped following job ${opts.jobId}${why}; it keeps running (\`jobdeck logs ${opts.jobId}\` follows it again, \`jobdeck cancel ${opts.jobId}\` stops it).`;
    opts.stderr.write(`\n${opts.colors.yellow(tail)}\n`);
  }
  return { exitCode: EXIT.STOPPED_FOLLOWING, outcome: r.outcome(), connections };
}

/** Reads a refused upgrade's answer (problem+json `detail`, or its text) and says what it means. */
function refusedUpgrade(code: number, body: string, opts: FollowOptions): Attempt {
  let detail = body.trim();
  try {
    const j = JSON.parse(body) as { detail?: string };
    if (j.detail) detail = j.detail;
  } catch {
    /* plain text */
  }
  if (code === 404) return { kind: 'fatal', error: new CliError(detail || `job ${opts.jobId} not found`, EXIT.NOT_FOUND) };
  if (code === 401 || code === 403) return { kind: 'fatal', error: unauthorized(opts, `HTTP ${code}${detail ? `: ${detail}` : ''}`) };
  if (code === 400) return { kind: 'fatal', error: new CliError(detail || 'the server refused the stream request', EXIT.USAGE) };
  return { kind: 'dropped', reason: `HTTP ${code}${detail ? `: ${detail.slice(0, 200)}` : ''}`, progressed: false, opened: false, refused: false };
}

/** The error of a refused token: where the token came from, and what the server said. */
function unauthorized(opts: FollowOptions, said: string): CliError {
  return new CliError(`${tokenRefusedHint(opts.conn.tokenSource)} — the server answered ${said}`, EXIT.UNAUTHORIZED);
}

/** What the server told a connection before it closed (its `error` message), if anything. */
interface Told {
  /** `code: message` of the last `error` message. */
  error: string | null;
  /** The text to show the user for a refusal (a deleted job, …). */
  message: string | null;
  /** A `going_away` message came: the server is stopping. */
  goingAway: boolean;
}

/** The verdict of a close frame (code, reason) on an unfinished follow. */
function closeVerdict(code: number, reason: string, told: Told, opts: FollowOptions): Attempt {
  const said = told.message || reason;
  if (code === 4404) return { kind: 'fatal', error: new CliError(said || `job ${opts.jobId} not found`, EXIT.NOT_FOUND) };
  if (code === 4401) return { kind: 'fatal', error: unauthorized(opts, `close ${code}${said ? `: ${said}` : ''}`) };
  if (code === 4400) return { kind: 'fatal', error: new CliError(`the server refused the stream request: ${said || 'bad request'}`, EXIT.INTERNAL) };
  // The retention policy removed the job's logs (docs/design.md "Retention"): say so, not an empty log.
  if (code === CLOSE.LOGS_REMOVED) return { kind: 'fatal', error: new CliError(said || `job ${opts.jobId}: logs removed by the retention policy`, EXIT.NOT_FOUND) };
  const restarting = told.goingAway || RESTART_CLOSE_CODES.includes(code);
  return { kind: 'dropped', reason: told.error || reason || `closed with code ${code}`, progressed: false, opened: true, refused: false, restarting };
}

/** One WebSocket connection of a follow: opens it, feeds the renderer, answers how it ended. */
function connectOnce(url: string, opts: FollowOptions, r: FollowRenderer, onHello: () => void): Promise<Attempt> {
  return new Promise<Attempt>((resolve) => {
    const headers: Record<string, string> = {};
    if (opts.conn.token) headers.authorization = `Bearer ${opts.conn.token}`;
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000, perMessageDeflate: false });
    const st = { settled: false, opened: false, progressed: false, helloSeen: false, createdAt: Date.now(), openedAt: 0, lastMessage: Date.now() };
    const told: Told = { error: null, message: null, goingAway: false };

    const finish = (a: Attempt) => {
      if (st.settled) return;
      st.settled = true;
      clearInterval(beat);
      opts.signal?.removeEventListener('abort', onAbort);
      if (a.kind === 'dropped') {
        a.progressed = st.progressed || (st.helloSeen && Date.now() - st.openedAt > GOOD_CONNECTION_MS);
        a.opened = st.opened;
        a.helloSeen = st.helloSeen;
        if (told.goingAway) a.restarting = true;
      }
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) {
        if (a.kind === 'done') ws.close(1000);
        else ws.terminate();
      }
      resolve(a);
    };
    const dropped = (reason: string, refused = false) => finish({ kind: 'dropped', reason, progressed: false, opened: false, refused });
    const onAbort = () => finish({ kind: 'aborted' });
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // Lines held for their time (--timestamps) go out once they waited long enough.
    const beat = heartbeat(ws, st, dropped, () => {
      for (const o of r.tick()) o.to === 'out' ? opts.stdout.write(o.data) : opts.stderr.write(o.text);
    });

    ws.on('open', () => {
      st.opened = true;
      st.openedAt = st.lastMessage = Date.now();
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d.length < 4000 ? d : ''));
      res.on('end', () => finish(refusedUpgrade(res.statusCode ?? 0, body, opts)));
      res.on('error', () => dropped(`HTTP ${res.statusCode}`));
    });
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (st.settled) return;
      st.lastMessage = Date.now();
      const err = onFrame(data, isBinary, { ws, opts, r, st, told, onHello });
      if (err) finish({ kind: 'fatal', error: err });
      else if (r.done) finish({ kind: 'done' });
    });
    ws.on('close', (code: number, reason: Buffer) => finish(r.done ? { kind: 'done' } : closeVerdict(code, reason.toString(), told, opts)));
    ws.on('error', (err: Error) => dropped(err.message || String(err), !st.opened && isUnreachable(err)));
  });
}

/** The state of one connection that its handlers share. */
interface ConnState {
  settled: boolean;
  opened: boolean;
  progressed: boolean;
  helloSeen: boolean;
  createdAt: number;
  openedAt: number;
  lastMessage: number;
}

/**
 * The connection's watchdog, once a second: a server that does not answer the handshake or
 * send its hello, or goes silent (half-open TCP, a server stuck while stopping), must not hang
 * the follow forever; a quiet one is pinged first.
 */
function heartbeat(ws: WebSocket, st: ConnState, dropped: (reason: string) => void, onBeat: () => void): ReturnType<typeof setInterval> {
  const beat = setInterval(() => {
    if (st.settled) return;
    onBeat();
    const now = Date.now();
    if (!st.opened) {
      if (now - st.createdAt > HELLO_WITHIN_MS) dropped(`the server did not answer the connection within ${HELLO_WITHIN_MS / 1000} s`);
      return;
    }
    const idle = now - st.lastMessage;
    if (!st.helloSeen && now - st.openedAt > HELLO_WITHIN_MS) dropped(`no hello from the server within ${HELLO_WITHIN_MS / 1000} s`);
    else if (idle > DEAD_AFTER_MS) dropped(`no answer from the server for ${Math.round(idle / 1000)} s`);
    else if (idle > PING_AFTER_MS && ws.readyState === WebSocket.OPEN) ws.send('{"type":"ping"}');
  }, 1000);
  beat.unref?.();
  return beat;
}

/**
 * Handles one frame: a binary log chunk or a JSON message, through the renderer to the sinks
 * (pausing the socket while stdout is full). Answers an error for a frame that cannot be read.
 */
function onFrame(
  data: WebSocket.RawData,
  isBinary: boolean,
  c: { ws: WebSocket; opts: FollowOptions; r: FollowRenderer; st: ConnState; told: Told; onHello: () => void },
): CliError | null {
  const { ws, opts, r, st, told } = c;
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
  try {
    if (isBinary) {
      const buf = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
      st.progressed = true;
      write(r.chunk(decodeLogChunk(buf)));
      return null;
    }
    const msg = JSON.parse(data.toString()) as StreamMessage | { type: 'pong' };
    if (msg.type === 'pong') return null;
    if (msg.type === 'hello') {
      st.helloSeen = true;
      c.onHello();
    } else if (msg.type === 'error') {
      told.error = `${msg.code}: ${msg.message}`;
      if (msg.code === 'going_away') told.goingAway = true;
      told.message = msg.code === 'deleted' ? `job ${opts.jobId} was deleted while following it${msg.message ? ` (${msg.message})` : ''}` : msg.message;
    } else st.progressed = true;
    write(r.message(msg));
    return null;
  } catch (err) {
    return new CliError(`bad message on the job stream: ${(err as Error).message}`, EXIT.INTERNAL);
  }
}
