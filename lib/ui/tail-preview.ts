/**
 * The end of a long log first (docs/design.md §8, "Long logs in the browser"). The job stream
 * sends a job's logs from their first byte, and a browser takes seconds to receive and lay out a
 * 300,000-line log — the end, what a user opens a job to see, came last. So when a job's logs are
 * long, a second job stream starts near the end of the latest attempt's log (the protocol's
 * resume position: task, attempt, offset) into a buffer of its own, which the viewer shows at
 * once and follows live; the first stream keeps loading the whole log behind it, unseen. Once it
 * has every byte the preview has, the preview stream stops and the viewer shows the whole log —
 * line numbers, search over everything, folds — from then on. Browser-safe; the sockets are the
 * JobStream's.
 */
import type { LogRange, StreamMessage } from '../api/types';
import type { ConnectionState } from './connection';
import { JobStream } from './job-stream';
import { LogBuffer } from './log-buffer';
import { compareAttempt, type StreamPosition } from './resume';

/** A job whose latest attempt's log is longer than this (bytes, ~45,000 lines of 90 bytes) opens with its end. */
export const PREVIEW_MIN_BYTES = 4 * 1024 * 1024;
/** How much of the latest attempt's log the preview shows at first (bytes, ~2,800 lines of 90 bytes). */
export const PREVIEW_TAIL_BYTES = 256 * 1024;

/**
 * Where a preview of the latest attempt starts, given its log range answer (`size`: the log's
 * length now, in log bytes), or null when that log alone is short enough to come at once.
 */
export function previewStart(range: Pick<LogRange, 'task' | 'attempt' | 'size'>, tailBytes = PREVIEW_TAIL_BYTES): StreamPosition | null {
  if (range.size <= tailBytes) return null;
  return { task: range.task, attempt: range.attempt, offset: range.size - tailBytes };
}

/** True when a stream at `main` (the next byte it wants) has received every byte one at `preview` has. */
export function caughtUp(main: StreamPosition, preview: StreamPosition): boolean {
  const c = compareAttempt(main, preview);
  return c > 0 || (c === 0 && main.offset >= preview.offset);
}

/** What a TailPreview reports to its owner. */
export interface TailPreviewEvents {
  /** The preview's buffer changed (coalesce renders). */
  onChange(): void;
  /** Its socket's state (connecting, live, …) changed. */
  onState(state: ConnectionState, restarting: boolean): void;
  /** A control message (the job's status moved on: refresh what the page shows of it). */
  onControl(msg: StreamMessage): void;
}

/** One preview: its buffer, fed by its own job stream from `from`. */
export class TailPreview {
  readonly buffer = new LogBuffer();
  readonly stream: JobStream;
  /** True once its stream said `end`. */
  get ended(): boolean {
    return this.stream.ended;
  }

  private events: TailPreviewEvents | null = null;

  constructor(
    readonly jobId: number,
    readonly from: StreamPosition,
    opts: { wsBase?: string } = {},
  ) {
    this.buffer.startAt(from.task, from.attempt, from.offset);
    this.buffer.subscribe(() => this.events?.onChange());
    this.stream = new JobStream({
      jobId,
      buffer: this.buffer,
      start: from,
      // The page's connection indicator follows the job's own stream.
      connectionName: null,
      onControl: (msg) => this.events?.onControl(msg),
      onState: (state, info) => this.events?.onState(state, info.restarting),
      ...(opts.wsBase ? { wsBase: opts.wsBase } : {}),
    });
  }

  /** Who hears of its changes (the page, while it shows the preview). */
  listen(events: TailPreviewEvents): void {
    this.events = events;
  }

  start(): void {
    this.stream.start();
  }

  stop(): void {
    this.stream.stop();
  }

  /** True when a stream at `main` has every byte this preview has shown (the whole log can take over). */
  overtakenBy(main: StreamPosition): boolean {
    return caughtUp(main, this.stream.tracker.position);
  }
}
