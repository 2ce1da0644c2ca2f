import type { StreamLimits } from './config';

/**
 * What bounds the server memory held for log frames not yet written out, across every job
 * stream of a hub: the high-water mark the senders share (LogSendBudget) and the frame buffers
 * they reuse (FramePool). Both are one per hub, because the bound is per server, not per client:
 * 50 clients replaying a log must hold about what 16 would (docs/design.md, "Logs and streams").
 */

/**
 * The high-water mark of each job stream that is sending log bytes, from a budget they share
 * (limits.totalHighWater, bytes): with n of them at once, each stops reading its log while its
 * socket holds more than totalHighWater ÷ n unsent — never more than limits.highWater, never
 * less than one frame (limits.chunkBytes). Memory held for unsent log frames then stays near
 * the budget whatever the number of clients, plus one frame and one read-ahead per stream.
 * One per hub.
 */
export class LogSendBudget {
  private n = 0;
  /** Bytes of log frames handed to the sockets of its streams since it was made (/metrics). */
  bytesSent = 0;

  constructor(private readonly limits: Pick<StreamLimits, 'highWater' | 'totalHighWater' | 'chunkBytes'>) {}

  /** A stream starts sending log bytes (pair with leave()). */
  enter(): void {
    this.n++;
  }

  /** A stream stopped sending log bytes. */
  leave(): void {
    this.n = Math.max(0, this.n - 1);
  }

  /** Streams sending log bytes now. */
  get senders(): number {
    return this.n;
  }

  /** Each sender's high-water mark now (bytes). */
  highWater(): number {
    const { highWater, totalHighWater, chunkBytes } = this.limits;
    return Math.min(highWater, Math.max(chunkBytes, Math.floor(totalHighWater / Math.max(1, this.n))));
  }
}

/**
 * Full-size log frame buffers (LOG_HEADER_BYTES + chunkBytes) that streams reuse once the
 * socket has taken them (ws.send's callback: nothing refers to the buffer any more). Without it
 * a fast replay leaves a 256 KiB Buffer per frame to the garbage collector, and tens of MB of
 * dead frames pile up outside the JS heap. Keeps at most `keep` spares; smaller (tail) reads are
 * not pooled, so an idle follower stays small. One per hub, sized to the frames in flight (a
 * stream without one makes its own): per-stream pools, or one too small, hold or drop far more
 * (docs/design.md §8; bench/README.md, fixes table).
 */
export class FramePool {
  private readonly spare: Buffer[] = [];
  private takenSinceTrim = false;

  constructor(
    /** Bytes of a full-size frame buffer. */
    readonly frameBytes: number,
    /** Spare buffers kept at most. */
    private readonly keep = 4,
    /** Spare buffers an idle pool keeps (trim()). */
    private readonly floor = keep,
  ) {}

  /** A buffer of exactly `bytes`: a spare one when `bytes` is the full size, else a new one. */
  take(bytes: number): Buffer {
    this.takenSinceTrim = true;
    if (bytes === this.frameBytes) return this.spare.pop() ?? Buffer.allocUnsafe(bytes);
    return Buffer.allocUnsafe(bytes);
  }

  /**
   * Keeps only `floor` spares when nothing was taken since the last call: a burst's buffers go
   * back to the garbage collector once the pool idles (the hub calls this on its heartbeat).
   */
  trim(): void {
    if (!this.takenSinceTrim && this.spare.length > this.floor) this.spare.length = this.floor;
    this.takenSinceTrim = false;
  }

  /** Gives back a buffer nothing refers to any more (others than full-size ones are dropped). */
  give(buf: Buffer): void {
    if (buf.length === this.frameBytes && this.spare.length < this.keep) this.spare.push(buf);
  }

  /** Spare buffers held now. */
  get size(): number {
    return this.spare.length;
  }
}
