/**
 * The dashboard's client of the job stream `/ws/jobs/:id` (lib/logs/protocol.ts): follows a job
 * task by task and attempt by attempt, puts log bytes and story banners into a LogBuffer, and
 * reconnects with backoff from the last byte received (ResumeTracker) — nothing lost, nothing
 * twice. Control messages are handed to `onControl` so the page can update its query cache.
 * Browser-safe; the socket is injectable for tests.
 */
import { decodeLogChunk } from '../logs/protocol';
import type { StreamMessage } from '../api/types';
import { reportConnection, type ConnectionState } from './connection';
import type { LogBuffer } from './log-buffer';
import { ResumeTracker, type StreamPosition } from './resume';
import { ReconnectingSocket, type ReconnectingSocketOptions, type SocketStateInfo } from './socket';
import { bannerFor, type StoryContext } from './story';

/** Options of a JobStream. */
export interface JobStreamOptions {
  jobId: number;
  buffer: LogBuffer;
  /** `ws://host:port` (default: this page's origin with ws/wss). */
  wsBase?: string;
  /** Where to start (default the job's first byte). */
  start?: StreamPosition;
  /** Every JSON control message, after the buffer was updated. */
  onControl?: (msg: StreamMessage) => void;
  /** A reconnect succeeded (n ≥ 1): refresh anything that may have been missed. */
  onReconnect?: (n: number) => void;
  /** Passed through to the socket (tests inject a fake socket and backoff). */
  socket?: Partial<Pick<ReconnectingSocketOptions, 'createSocket' | 'backoff' | 'random' | 'now'>>;
  /** The socket's state changed (connecting, live, reconnecting, closed, failed), with its detail. */
  onState?: (state: ConnectionState, info: SocketStateInfo) => void;
  /** Name in the connection indicator (default `job:<id>`); null to stay out of it. */
  connectionName?: string | null;
}

/** This page's WebSocket origin (`ws://host` or `wss://host`). */
export function pageWsBase(): string {
  const loc = globalThis.location;
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}`;
}

/** Parses a JSON text frame into a StreamMessage, or null when it is not one. */
export function parseStreamMessage(text: string): StreamMessage | null {
  try {
    const m = JSON.parse(text) as { type?: unknown };
    return m && typeof m === 'object' && typeof m.type === 'string' ? (m as StreamMessage) : null;
  } catch {
    return null;
  }
}

/** One followed job; see the module comment. */
export class JobStream {
  readonly tracker: ResumeTracker;
  readonly story: StoryContext = { taskCount: 1, taskNames: [], tasksWithAttempts: new Set(), jobReason: null };
  /** True once the server said `end` (the job is terminal and everything was sent). */
  ended = false;
  /** Frames the client could not read (malformed), counted for display. */
  badFrames = 0;
  private readonly socket: ReconnectingSocket;

  constructor(private readonly opts: JobStreamOptions) {
    this.tracker = new ResumeTracker(opts.start);
    const name = opts.connectionName === undefined ? `job:${opts.jobId}` : opts.connectionName;
    this.socket = new ReconnectingSocket({
      url: () => `${opts.wsBase ?? pageWsBase()}/ws/jobs/${opts.jobId}?${this.tracker.query()}&follow=1`,
      onMessage: (d) => this.handle(d),
      onOpen: (n) => {
        if (n > 0) opts.onReconnect?.(n);
      },
      onState: (state, info) => {
        if (name) reportConnection(name, this.ended && state !== 'live' ? 'closed' : state, info);
        opts.onState?.(state, info);
      },
      shouldReconnect: (code) => !this.ended && code !== 1000 && !(code >= 4400 && code < 4500 && code !== 4408),
      ...opts.socket,
    });
  }

  /** Connection state of the underlying socket. */
  get state() {
    return this.socket.state;
  }

  /** The close that ended the stream, if any (code, reason). */
  get lastClose() {
    return this.socket.lastClose;
  }

  start(): void {
    this.socket.start();
  }

  stop(): void {
    this.socket.stop();
  }

  /** Retry at once if waiting for a reconnect (the browser came back online). */
  reconnectNow(): void {
    this.socket.reconnectNow();
  }

  /** Handles one frame (exposed for tests). */
  handle(data: string | ArrayBuffer | Uint8Array): void {
    const buf = this.opts.buffer;
    if (typeof data !== 'string') {
      let chunk;
      try {
        chunk = decodeLogChunk(data);
      } catch {
        this.badFrames++;
        return;
      }
      const rank = chunk.rank ?? 0;
      const verdict = this.tracker.onChunk(chunk.task, chunk.attempt, chunk.offset, chunk.data.byteLength, rank);
      if (!verdict) return;
      if (verdict.gap > 0) {
        const whose = rank > 0 ? `rank ${rank}'s log of this attempt` : "this attempt's log";
        buf.addBanner({ key: `gap:${chunk.task}:${chunk.attempt}:${rank > 0 ? `r${rank}:` : ''}${chunk.offset}`, tone: 'warning', text: `${verdict.gap} bytes of ${whose} could not be shown here — download the raw log`, task: chunk.task, attempt: chunk.attempt });
      }
      buf.appendBytes(chunk.task, chunk.attempt, verdict.skip ? chunk.data.subarray(verdict.skip) : chunk.data, rank);
      return;
    }
    const msg = parseStreamMessage(data);
    if (!msg) {
      this.badFrames++;
      return;
    }
    if (msg.type === 'times') {
      // Line times only: no story, no status (the page's caches stay as they are).
      if (Array.isArray(msg.entries)) buf.addTimes(msg.task, msg.attempt, msg.entries, msg.rank ?? 0);
      return;
    }
    if (msg.type === 'attempt') {
      if (msg.nodes) buf.setNodes(msg.task, msg.attempt, msg.nodes);
      if (msg.phase === 'start') this.tracker.onAttemptStart(msg.task, msg.attempt);
      else {
        buf.endAttempt(msg.task, msg.attempt);
        this.tracker.onAttemptEnd(msg.task, msg.attempt);
      }
    }
    if (msg.type === 'job' || msg.type === 'task' || msg.type === 'attempt') this.tracker.onEvent(msg.eventId);
    if (msg.type === 'end') this.ended = true;
    // The server is stopping to restart: the close that follows is not a failure.
    if (msg.type === 'error' && msg.code === 'going_away') this.socket.serverRestarting();
    const banner = bannerFor(msg, this.story);
    if (banner) buf.addBanner(banner);
    this.opts.onControl?.(msg);
  }
}
