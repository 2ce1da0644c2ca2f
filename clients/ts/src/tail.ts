/**
 * A followed job's logs as an async iterable (JobdeckClient.tail): the follow (stream.ts) runs
 * while the caller iterates, its items queued between them. The socket pauses while the caller
 * has not taken what came (more than HIGH_WATER items waiting), and stopping the iteration
 * (break, return, a throw) stops the follow.
 */
import type { JobStatus } from './api.gen';
import type { LogCursor, TailItem } from './cursor';
import type { FollowEnd, StreamConsumer } from './stream';

/** The job's logs followed: an async iterable of TailItem; after it ends, `status` says how the job (or the task / attempt followed) ended. */
export interface LogTail extends AsyncIterable<TailItem> {
  /** How the followed thing ended; null before the end. */
  readonly status: JobStatus | null;
  /** How many connections the follow took (1 when none dropped). */
  readonly connections: number;
}

/** Items waiting for the caller past which the socket pauses; it resumes under LOW_WATER. */
const HIGH_WATER = 64;
const LOW_WATER = 16;

/** See the module comment. */
export class Tail implements LogTail {
  private conns = 0;

  constructor(
    private readonly cursor: LogCursor,
    private readonly run: (consumer: StreamConsumer, signal: AbortSignal) => Promise<FollowEnd>,
    private readonly signal: AbortSignal | undefined,
    private readonly gaveUp: (end: Extract<FollowEnd, { kind: 'gave-up' }>) => Error,
  ) {}

  get status(): JobStatus | null {
    return (this.cursor.status as JobStatus | null) ?? null;
  }

  get connections(): number {
    return this.conns;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<TailItem> {
    const cursor = this.cursor;
    const queue: TailItem[] = [];
    // Who waits: the iteration for items (wake), the socket for room (drained).
    const waiting: { wake: (() => void) | null; drained: (() => void) | null } = { wake: null, drained: null };
    const push = (items: TailItem[]): void | Promise<void> => {
      queue.push(...items);
      waiting.wake?.();
      if (queue.length > HIGH_WATER) return new Promise<void>((r) => (waiting.drained = r));
    };
    const consumer: StreamConsumer = {
      position: () => cursor.position(),
      since: () => cursor.since(),
      get done() {
        return cursor.done;
      },
      message: (m) => push(cursor.message(m)),
      chunk: (c) => push(cursor.chunk(c)),
    };
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    this.signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: { end: FollowEnd } | { error: unknown } | null = null;
    void this.run(consumer, stop.signal)
      .then(
        (end) => (outcome = { end }),
        (error: unknown) => (outcome = { error }),
      )
      .finally(() => waiting.wake?.());
    try {
      for (;;) {
        while (queue.length) {
          yield queue.shift()!;
          if (queue.length <= LOW_WATER) waiting.drained?.();
        }
        const o = outcome as { end: FollowEnd } | { error: unknown } | null;
        if (o && 'error' in o) throw o.error;
        if (o) {
          this.conns = o.end.connections;
          if (o.end.kind === 'gave-up') throw this.gaveUp(o.end);
          return;
        }
        await new Promise<void>((r) => (waiting.wake = r));
        waiting.wake = null;
      }
    } finally {
      this.signal?.removeEventListener('abort', onAbort);
      stop.abort();
      waiting.drained?.();
    }
  }
}
