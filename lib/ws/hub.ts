import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AuthState } from '../auth/state';
import type { Store, StoreEvent } from '../store';
import { logger } from '../log';
import { CLOSE, LOG_HEADER_BYTES } from '../logs/protocol';
import type { StreamMessage } from '../api/types';
import { loadStreamLimits, type StreamLimits } from './config';
import { FramePool, JobStream, LogSendBudget, parseStreamStart, StreamQueryError } from './job-stream';
import { ListStreams } from './list-stream';

/** What a hub reads and listens to. */
export interface WsHubOptions {
  /**
   * The server's store: the streams read through it, and its bus (`change` events, StoreEvent,
   * emitted after each commit) feeds the hub's one listener, which routes them to the streams.
   */
  store: Store;
  /** Stream limits (default: from the environment, lib/ws/config.ts). */
  limits?: StreamLimits;
  /**
   * The server's auth state: a session's logout (its `onRevoke`) and every change of its
   * directory make the open sockets check their credential again.
   */
  auth?: AuthState;
}

/**
 * Who opened a socket, as the upgrade gate found it (lib/auth/gate.ts gateUpgrade): the browser
 * session (id, expiry in ms since epoch), or null for a bearer token; and how to tell whether its
 * credential still holds.
 */
export interface SocketOwner {
  session: { id: string; expiresAt: number } | null;
  /** The personal token it was opened with (ApiToken.id). */
  tokenId?: number | null;
  /** Its user (User.id). */
  userId?: number | null;
  /** When its credential ends by itself (ms since epoch; default the session's expiry); null: never. */
  expiresAt?: number | null;
  /**
   * Why its credential no longer authenticates (revoked, expired, logged out, user disabled, an
   * older epoch), or null while it does (lib/auth/guard.ts credentialProblem). Asked at every
   * change of the auth directory, at a logout, and when the credential's expiry comes.
   */
  problem?: () => string | null;
}

/** Longest timer Node keeps (ms); a later expiry is re-armed when it fires. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The server's WebSocket hub (one per server, kept in its services): owns the `ws` server
 * (noServer, no compression, small client frames), every open socket, one store-bus listener
 * that routes each change to the streams of its job and to the list stream, a heartbeat, and the
 * graceful stop (close 1001). Authentication happens before a route is called
 * (lib/server/start.ts); the hub remembers who opened each socket and closes it (4401
 * `unauthorized`, after an `error` message saying why) as soon as that credential stops
 * authenticating — a stream never outlives its session or token (docs/design.md §15).
 */
export class WsHub {
  readonly limits: StreamLimits;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private readonly alive = new WeakMap<WebSocket, boolean>();
  private readonly byJob = new Map<number, Set<JobStream>>();
  private readonly list: ListStreams;
  /** The unsent-bytes budget the job streams share while sending log bytes. */
  private readonly budget: LogSendBudget;
  /**
   * The log frame buffers the job streams share: up to twice the frames the send budget lets be
   * in flight (every frame of a 50-client replay is a reused one), trimmed to 8 spares once idle.
   */
  private readonly frames: FramePool;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly store: Store;
  private readonly auth: AuthState | undefined;
  /** Who opened each open socket (sockets opened without an owner are not here). */
  private readonly owners = new Map<WebSocket, SocketOwner>();
  private stopped = false;
  private readonly onRevoke = (sessionId: string) => {
    this.closeSession(sessionId, 'the session was logged out; log in again');
    this.recheck();
  };
  private readonly onAuthChange = () => this.recheck();
  private readonly onChange = (e: StoreEvent) => {
    try {
      const set = this.byJob.get(e.jobId);
      if (set && e.type !== 'queues' && e.type !== 'outbox') for (const s of set) s.onStoreEvent(e);
      this.list.onStoreEvent(e);
    } catch (err) {
      logger().error({ err, jobId: e.jobId }, 'ws hub listener failed');
    }
  };

  constructor(opts: WsHubOptions) {
    const limits = opts.limits ?? loadStreamLimits();
    this.limits = limits;
    this.store = opts.store;
    this.budget = new LogSendBudget(limits);
    this.frames = new FramePool(LOG_HEADER_BYTES + limits.chunkBytes, 2 * Math.ceil(limits.totalHighWater / limits.chunkBytes), 8);
    this.wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      // Clients send nothing but a tiny ping message.
      maxPayload: 4096,
      clientTracking: false,
      // How long a closing socket may take to flush and answer (ws option; missing from @types/ws).
      ...({ closeTimeout: limits.closeGraceMs } as object),
    });
    this.list = new ListStreams(this.store, limits);
    this.store.bus.on('change', this.onChange);
    this.auth = opts.auth;
    this.auth?.onRevoke?.add(this.onRevoke);
    this.auth?.directory.onChange.add(this.onAuthChange);
    this.heartbeat = setInterval(() => this.beat(), limits.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Open sockets (job and list streams). */
  get socketCount(): number {
    return this.sockets.size;
  }

  /** Bytes of log frames (header included) the job streams have sent since the hub started. */
  get logBytesSent(): number {
    return this.budget.bytesSent;
  }

  /** Spare log frame buffers the job streams share now. */
  spareFrames(): number {
    return this.frames.size;
  }

  /** Bytes queued on all open sockets and not yet written out (bounded by backpressure). */
  bufferedBytes(): number {
    let n = 0;
    for (const ws of this.sockets) n += ws.bufferedAmount;
    return n;
  }

  /** Job streams open on one job. */
  streamsOf(jobId: number): number {
    return this.byJob.get(jobId)?.size ?? 0;
  }

  private beat(): void {
    this.frames.trim();
    for (const ws of this.sockets) {
      if (this.alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      this.alive.set(ws, false);
      try {
        ws.ping();
      } catch {
        // closing
      }
    }
  }

  private accept(req: IncomingMessage, socket: Duplex, head: Buffer, owner: SocketOwner | undefined, then: (ws: WebSocket) => void): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      this.alive.set(ws, true);
      ws.on('pong', () => this.alive.set(ws, true));
      ws.on('close', () => this.sockets.delete(ws));
      // Protocol errors (bad frames, frames over maxPayload) end in a close; never crash on them.
      ws.on('error', (err) => logger().debug({ err: err.message }, 'WebSocket error'));
      then(ws);
      if (owner) this.own(ws, owner);
    });
  }

  /**
   * Remembers who opened `ws` until it closes, and closes it when its credential ends by itself
   * (a timer at its expiry) — at once when it already has — or stops authenticating (recheck()).
   */
  private own(ws: WebSocket, owner: SocketOwner): void {
    this.owners.set(ws, owner);
    const expiresAt = owner.expiresAt !== undefined ? owner.expiresAt : (owner.session?.expiresAt ?? null);
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (expiresAt === null) return;
      const left = expiresAt - Date.now();
      if (left <= 0) return this.closeSocket(ws, owner.problem?.() ?? (owner.session ? 'the session expired; log in again' : 'the token expired'));
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      timer.unref();
    };
    ws.on('close', () => {
      clearTimeout(timer);
      this.owners.delete(ws);
    });
    arm();
    this.recheckOne(ws, owner);
  }

  /** Asks every open socket's owner whether its credential still holds; closes those that do not. */
  private recheck(): void {
    for (const [ws, owner] of [...this.owners]) this.recheckOne(ws, owner);
  }

  private recheckOne(ws: WebSocket, owner: SocketOwner): void {
    const why = owner.problem?.();
    if (why) this.closeSocket(ws, why);
  }

  /** Closes every socket `sessionId` opened (4401 unauthorized, with an `error` message `why`). */
  closeSession(sessionId: string, why: string): void {
    for (const [ws, owner] of [...this.owners]) if (owner.session?.id === sessionId) this.closeSocket(ws, why);
  }

  private closeSocket(ws: WebSocket, message: string): void {
    if (ws.readyState !== ws.OPEN) return;
    const msg: StreamMessage = { type: 'error', code: 'unauthorized', message };
    try {
      ws.send(JSON.stringify(msg));
    } catch {
      // closing anyway
    }
    ws.close(CLOSE.UNAUTHORIZED, 'unauthorized');
  }

  private reject(ws: WebSocket, code: 'bad_request' | 'not_found' | 'internal', message: string, close: number): void {
    const msg: StreamMessage = { type: 'error', code, message };
    ws.send(JSON.stringify(msg));
    ws.close(close, code);
  }

  /** Upgrade handler of `/ws/jobs/:id`. */
  handleJob(req: IncomingMessage, socket: Duplex, head: Buffer, params: Record<string, string>, owner?: SocketOwner): void {
    this.accept(req, socket, head, owner, (ws) => {
      const raw = params.id ?? '';
      if (!/^[1-9][0-9]{0,9}$/.test(raw)) return this.reject(ws, 'bad_request', `job id: expected a positive integer, got "${raw}"`, CLOSE.BAD_REQUEST);
      const jobId = Number(raw);
      let start;
      try {
        start = parseStreamStart(new URL(req.url ?? '/', 'http://x').searchParams);
      } catch (err) {
        if (err instanceof StreamQueryError) return this.reject(ws, 'bad_request', err.message, CLOSE.BAD_REQUEST);
        throw err;
      }
      const stream = new JobStream(ws, jobId, start, {
        store: this.store,
        limits: this.limits,
        budget: this.budget,
        frames: this.frames,
        onDone: (s) => {
          const set = this.byJob.get(jobId);
          set?.delete(s);
          if (set && set.size === 0) this.byJob.delete(jobId);
        },
      });
      let set = this.byJob.get(jobId);
      if (!set) this.byJob.set(jobId, (set = new Set()));
      set.add(stream);
      void stream.run();
    });
  }

  /** Upgrade handler of `/ws/jobs`. */
  handleList(req: IncomingMessage, socket: Duplex, head: Buffer, owner?: SocketOwner): void {
    this.accept(req, socket, head, owner, (ws) => this.list.add(ws));
  }

  /**
   * Stops: every job stream gets `error` going_away with its resume position, every socket is
   * closed with 1001; sockets that have not closed after `graceMs` are destroyed.
   */
  async stop(graceMs = 1000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.store.bus.off('change', this.onChange);
    this.auth?.onRevoke?.delete(this.onRevoke);
    this.auth?.directory.onChange.delete(this.onAuthChange);
    clearInterval(this.heartbeat);
    for (const set of this.byJob.values()) for (const s of [...set]) s.goAway();
    this.list.closeAll(CLOSE.GOING_AWAY, 'server stopping');
    for (const ws of this.sockets) if (ws.readyState === ws.OPEN) ws.close(CLOSE.GOING_AWAY, 'server stopping');
    const deadline = Date.now() + graceMs;
    while (this.sockets.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
    this.wss.close();
  }
}
