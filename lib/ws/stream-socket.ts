import type { WebSocket } from 'ws';
import { logger } from '../log';
import { CLOSE, type StreamErrorCode } from '../logs/protocol';
import type { PongMessage, StreamMessage } from '../api/types';
import { isPingMessage, type StreamLimits } from './config';
import type { LogSendBudget } from './send-memory';

/**
 * The socket side of one job stream: sending control messages and log frames, the client's
 * only message (ping), backpressure, and every way the stream ends (error, slow-consumer cut,
 * close). Kept apart from the stream's state machine so the rule "the server never buffers
 * without bound" lives in one place: a sender waits while the socket holds more than its
 * high-water mark, and a client that stops reading is cut off with a resume position
 * (docs/design.md, "Logs and streams").
 */

/** Where a client resumes (sent with `slow_consumer` and `going_away`). */
export interface ResumePosition {
  task: number;
  attempt: number;
  offset: number;
  since?: number;
  /** Each rank's offset, by rank, when the open attempt streams more than one rank. */
  offsets?: number[];
}

/** What a StreamSocket asks of the stream it carries. */
export interface StreamSocketHooks {
  readonly jobId: number;
  /** The position a client should resume from now. */
  resume(): ResumePosition;
  /** Runs once, right after the socket is marked closed: release what the stream holds, wake its loop. */
  closing(): void;
  /** Runs once, last: the stream is finished (closed for any reason). */
  done(): void;
}

/** One job stream's WebSocket (see the module doc). Closed once; every send after that is a no-op. */
export class StreamSocket {
  private isClosed = false;
  private progressFn: ((progressed: boolean) => void) | null = null;
  /** ws.send's callback: a queued frame was written out (or the socket failed). */
  readonly onSent = () => {
    const f = this.progressFn;
    this.progressFn = null;
    f?.(true);
  };

  constructor(
    readonly ws: WebSocket,
    private readonly limits: StreamLimits,
    /** Shared by the hub's job streams; without one, limits.highWater applies. */
    private readonly budget: LogSendBudget | undefined,
    private readonly hooks: StreamSocketHooks,
  ) {
    ws.on('close', () => this.finish());
    ws.on('error', () => this.finish());
    ws.on('message', (data, isBinary) => this.onClientMessage(data, isBinary));
  }

  /** True once the stream closed (for any reason). */
  get closed(): boolean {
    return this.isClosed;
  }

  private onClientMessage(data: unknown, isBinary: boolean): void {
    if (this.isClosed) return;
    if (isPingMessage(data, isBinary)) {
      this.sendRaw({ type: 'pong' });
      return;
    }
    this.fail('bad_request', `unexpected client message: a client sends nothing but {"type":"ping"} (got ${isBinary ? 'a binary frame' : 'text that is not one'})`, CLOSE.BAD_REQUEST);
  }

  /** Sends a JSON message whatever the socket holds (errors, pongs: they must get through). */
  sendRaw(msg: StreamMessage | PongMessage): void {
    if (this.isClosed) return;
    this.ws.send(JSON.stringify(msg), this.onSent);
  }

  /** Sends a JSON message; cuts the client off instead when the socket holds more than hardCap. */
  send(msg: StreamMessage): void {
    if (this.isClosed) return;
    if (this.ws.bufferedAmount > this.limits.hardCap) {
      this.cut(`more than ${this.limits.hardCap} bytes unsent`);
      return;
    }
    this.sendRaw(msg);
  }

  /**
   * Queues one binary log frame; `written` runs once the socket no longer refers to `frame`
   * (written out, or the socket failed). Call backpressure() before each frame.
   */
  sendFrame(frame: Buffer, written: () => void): void {
    if (this.budget) this.budget.bytesSent += frame.length;
    this.ws.send(frame, { binary: true }, () => {
      written();
      this.onSent();
    });
  }

  /** Sends an error message and closes with `closeCode`. */
  fail(code: StreamErrorCode, message: string, closeCode: number): void {
    if (this.isClosed) return;
    this.sendRaw({ type: 'error', code, message });
    this.close(closeCode, code);
  }

  /** Cuts off a client that does not keep up: `slow_consumer` with where to resume, close 4408. */
  cut(why: string): void {
    if (this.isClosed) return;
    const resume = this.hooks.resume();
    logger().info({ jobId: this.hooks.jobId, resume }, `job stream client cut off: ${why}`);
    this.sendRaw({ type: 'error', code: 'slow_consumer', message: `the client did not keep up (${why}); reconnect with the resume position`, resume });
    this.close(CLOSE.SLOW_CONSUMER, 'slow consumer');
  }

  /** Closes the socket with `code` and finishes the stream. */
  close(code: number, reason: string): void {
    if (this.isClosed) return;
    this.ws.close(code, reason);
    this.finish();
  }

  private finish(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.hooks.closing();
    const f = this.progressFn;
    this.progressFn = null;
    f?.(true);
    this.hooks.done();
  }

  /** Resolves true when a queued frame was written out (or the socket closed), false on timeout. */
  private waitProgress(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.progressFn = null;
        resolve(false);
      }, ms);
      this.progressFn = (p) => {
        clearTimeout(timer);
        resolve(p);
      };
    });
  }

  /**
   * Waits until the socket holds at most the high-water mark. Cuts the client off when it holds
   * more than the hard cap or makes no progress for stallMs. @returns false when closed.
   */
  async backpressure(): Promise<boolean> {
    const { hardCap, stallMs } = this.limits;
    let last = Date.now();
    while (!this.isClosed && this.ws.bufferedAmount > (this.budget?.highWater() ?? this.limits.highWater)) {
      if (this.ws.bufferedAmount > hardCap) {
        this.cut(`more than ${hardCap} bytes unsent`);
        break;
      }
      const left = last + stallMs - Date.now();
      if (left <= 0) {
        this.cut(`no progress for ${stallMs} ms`);
        break;
      }
      if (await this.waitProgress(left)) last = Date.now();
    }
    return !this.isClosed;
  }
}
