/**
 * Following a job over its stream `/ws/jobs/:id` (protocol.ts; docs/design.md §8), resumed
 * across dropped connections: the one transport of the client's `tail()` and of the CLI's
 * `jobdeck logs` / `launch`.
 *
 * A consumer (the client's LogCursor, the CLI's renderer) is fed each message and log chunk and
 * says where to resume (`position()`, `since()`) and when the follow is over (`done`). On a
 * dropped connection the stream reconnects with backoff (backoff.ts) from that position, so
 * nothing is lost and nothing is passed on twice; after `reconnectTimeoutMs` (5 min by default)
 * without getting through it gives up. A server that said it is restarting (close 1001 "going
 * away" or 1012 "service restart", or a `going_away` message) is knocked on often — the wait
 * stays at most RESTART_BACKOFF_MAX_MS until it answers — so the follow carries on about as
 * soon as the new server listens. A consumer that answers a Promise pauses the socket until it
 * settles (backpressure). The abort signal stops following; the job keeps running.
 */
import WebSocket from 'ws';
import { backoffDelay } from './backoff';
import { BadRequestError, ForbiddenError, JobdeckError, LogsRemovedError, NotFoundError, ServerError, UnauthorizedError, UnreachableError } from './errors';
import { CLOSE, decodeLogChunk, type LogChunk, type Position, type StreamMessage } from './protocol';

/** What a follow feeds and asks (see the module comment). */
export interface StreamConsumer {
  /** Where to (re)start. */
  position(): Position;
  /** The eventId to resume after (status messages up to it are not sent again). */
  since(): number | undefined;
  /** True once the followed thing ended: the stream closes. */
  readonly done: boolean;
  /** A JSON message; a Promise pauses the socket until it settles. */
  message(msg: StreamMessage): void | Promise<unknown>;
  /** A log chunk; a Promise pauses the socket until it settles. */
  chunk(c: LogChunk): void | Promise<unknown>;
  /** Called about once a second while a connection stands. */
  tick?(): void;
}

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
  | { kind: 'fatal'; error: JobdeckError }
  | { kind: 'aborted' };

/** A dropped connection. */
export type Dropped = Extract<Attempt, { kind: 'dropped' }>;

/** Builds the stream URL for a position (and a rank). */
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
  onDrop(d: Dropped, now: number): number | null {
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

/** Options of followStream. */
export interface FollowStreamOptions {
  /** The server's base URL (http(s)://…, no trailing slash). */
  url: string;
  token?: string;
  /** Said first when the server refuses the token (config.ts tokenRefusedHint). */
  tokenHint: string;
  jobId: number;
  /** false: what exists now, then the end. */
  follow: boolean;
  /** Only this rank's log of multi-node attempts. */
  rank?: number;
  /** Stops following (the job keeps running). */
  signal?: AbortSignal;
  /** Give up after this many ms without a working connection (default DEFAULT_FOLLOW_RECONNECT_MS). */
  reconnectTimeoutMs?: number;
  /** Each hello, with the position the connection resumed from. */
  onHello?(resumedAt: Position): void;
  /** Each connection that ended, and its URL. */
  onAttempt?(url: string, a: Attempt): void;
  /** A connection dropped; the next try comes after `waitMs`. */
  onDropped?(d: Dropped, waitMs: number, plan: ReconnectPlan): void;
}

/** How a follow ended: the consumer is done, the signal stopped it, or the server stayed away too long. */
export type FollowEnd = { kind: 'done' | 'aborted'; connections: number } | { kind: 'gave-up'; reason: string; timeoutMs: number; connections: number };

/**
 * Follows job `jobId` into `consumer` until it is done, the signal aborts, or the server stayed
 * away `reconnectTimeoutMs`.
 * @throws NotFoundError (no such job, deleted while followed; LogsRemovedError), UnauthorizedError, ForbiddenError,
 *   BadRequestError (a refused stream query), ServerError (a protocol error), UnreachableError
 *   (`refused`: nobody listened at the first try).
 */
export async function followStream(opts: FollowStreamOptions, consumer: StreamConsumer): Promise<FollowEnd> {
  const plan = new ReconnectPlan(opts.reconnectTimeoutMs ?? DEFAULT_FOLLOW_RECONNECT_MS);
  let everOpened = false;
  let connections = 0;
  while (!consumer.done) {
    if (opts.signal?.aborted) return { kind: 'aborted', connections };
    const resumedAt = consumer.position();
    const url = streamUrl(opts.url, opts.jobId, resumedAt, opts.follow, consumer.since(), opts.rank);
    connections++;
    const res = await connectOnce(url, opts, consumer, () => opts.onHello?.(resumedAt));
    opts.onAttempt?.(url, res);
    if (res.kind === 'done') break;
    if (res.kind === 'aborted') return { kind: 'aborted', connections };
    if (res.kind === 'fatal') throw res.error;
    if (res.opened) everOpened = true;
    // Refused at the very first try: nobody listens there. A reset or a later refusal (a server
    // restarting) is retried like any drop.
    if (!everOpened && connections === 1 && res.refused) throw new UnreachableError(`cannot reach jobdeck at ${opts.url} (${res.reason})`, `job ${opts.jobId}`, opts.url, 'refused', res.reason);
    const wait = plan.onDrop(res, Date.now());
    if (wait === null) return { kind: 'gave-up', reason: res.reason, timeoutMs: plan.timeoutMs, connections };
    opts.onDropped?.(res, wait, plan);
    await sleep(wait, opts.signal);
  }
  return { kind: 'done', connections };
}

/** Reads a refused upgrade's answer (problem+json `detail`, or its text) and says what it means. */
function refusedUpgrade(code: number, body: string, opts: FollowStreamOptions): Attempt {
  let detail = body.trim();
  try {
    const j = JSON.parse(body) as { detail?: string };
    if (j.detail) detail = j.detail;
  } catch {
    /* plain text */
  }
  const what = `job ${opts.jobId}`;
  if (code === 404) return { kind: 'fatal', error: new NotFoundError(detail || `job ${opts.jobId} not found`, what) };
  if (code === 401) return { kind: 'fatal', error: unauthorized(opts, `HTTP ${code}${detail ? `: ${detail}` : ''}`) };
  if (code === 403) return { kind: 'fatal', error: new ForbiddenError(`forbidden: ${detail || "the server refused this stream to the token's user"}`, what) };
  if (code === 400) return { kind: 'fatal', error: new BadRequestError(detail || 'the server refused the stream request', what) };
  return { kind: 'dropped', reason: `HTTP ${code}${detail ? `: ${detail.slice(0, 200)}` : ''}`, progressed: false, opened: false, refused: false };
}

function unauthorized(opts: FollowStreamOptions, said: string): UnauthorizedError {
  return new UnauthorizedError(`${opts.tokenHint} — the server answered ${said}`, `job ${opts.jobId}`, said);
}

/** What the server told a connection before it closed (its `error` message), if anything. */
interface Told {
  error: string | null;
  message: string | null;
  goingAway: boolean;
}

/** The verdict of a close frame (code, reason) on an unfinished follow. */
function closeVerdict(code: number, reason: string, told: Told, opts: FollowStreamOptions): Attempt {
  const said = told.message || reason;
  const what = `job ${opts.jobId}`;
  if (code === CLOSE.NOT_FOUND) return { kind: 'fatal', error: new NotFoundError(said || `job ${opts.jobId} not found`, what) };
  if (code === CLOSE.UNAUTHORIZED) return { kind: 'fatal', error: unauthorized(opts, `close ${code}${said ? `: ${said}` : ''}`) };
  if (code === CLOSE.BAD_REQUEST) return { kind: 'fatal', error: new ServerError(`the server refused the stream request: ${said || 'bad request'}`, what) };
  // The retention policy removed the job's logs (docs/design.md "Retention"): say so, not an empty log.
  if (code === CLOSE.LOGS_REMOVED) return { kind: 'fatal', error: new LogsRemovedError(said || `job ${opts.jobId}: logs removed by the retention policy`, what) };
  const restarting = told.goingAway || RESTART_CLOSE_CODES.includes(code);
  return { kind: 'dropped', reason: told.error || reason || `closed with code ${code}`, progressed: false, opened: true, refused: false, restarting };
}

/** Error codes that mean "nobody answers at that address" (not a connection that dropped). */
const REFUSED_CODES = ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'];

function causeCode(err: unknown): string | undefined {
  const c = (err as { cause?: { code?: string; errors?: { code?: string }[] } })?.cause;
  return c?.code ?? c?.errors?.[0]?.code;
}

/** True when a fetch/WebSocket error means "nobody answers at that address" (refused, no such host, no route). */
export function isUnreachable(err: unknown): boolean {
  const code = causeCode(err) ?? (err as { code?: string })?.code;
  return !!code && REFUSED_CODES.includes(code);
}

/** A short "why" for a failed fetch or body read: the system code, else the message. */
export function failureCause(err: unknown): string {
  return causeCode(err) ?? (err as { code?: string })?.code ?? (err as { cause?: Error }).cause?.message ?? (err as Error)?.message ?? String(err);
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

/** One WebSocket connection of a follow: opens it, feeds the consumer, answers how it ended. */
function connectOnce(url: string, opts: FollowStreamOptions, consumer: StreamConsumer, onHello: () => void): Promise<Attempt> {
  return new Promise<Attempt>((resolve) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000, perMessageDeflate: false });
    const st: ConnState = { settled: false, opened: false, progressed: false, helloSeen: false, createdAt: Date.now(), openedAt: 0, lastMessage: Date.now() };
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
    const beat = heartbeat(ws, st, dropped, () => consumer.tick?.());

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
      const err = onFrame(data, isBinary, { ws, opts, consumer, st, told, onHello });
      if (err) finish({ kind: 'fatal', error: err });
      else if (consumer.done) finish({ kind: 'done' });
    });
    ws.on('close', (code: number, reason: Buffer) => finish(consumer.done ? { kind: 'done' } : closeVerdict(code, reason.toString(), told, opts)));
    ws.on('error', (err: Error) => dropped(err.message || String(err), !st.opened && isUnreachable(err)));
  });
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
 * Handles one frame: a binary log chunk or a JSON message, to the consumer (pausing the socket
 * while it is full). Answers an error for a frame that cannot be read.
 */
function onFrame(
  data: WebSocket.RawData,
  isBinary: boolean,
  c: { ws: WebSocket; opts: FollowStreamOptions; consumer: StreamConsumer; st: ConnState; told: Told; onHello: () => void },
): JobdeckError | null {
  const { ws, opts, consumer, st, told } = c;
  const paused = (p: void | Promise<unknown>) => {
    if (!p || ws.isPaused) return;
    ws.pause();
    void p.then(
      () => ws.resume(),
      () => ws.resume(),
    );
  };
  try {
    if (isBinary) {
      const buf = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
      st.progressed = true;
      paused(consumer.chunk(decodeLogChunk(buf)));
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
    paused(consumer.message(msg));
    return null;
  } catch (err) {
    return new ServerError(`bad message on the job stream: ${(err as Error).message}`, `job ${opts.jobId}`);
  }
}
