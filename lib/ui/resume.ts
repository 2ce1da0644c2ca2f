/**
 * Where a job-stream client is in the job's logs, so that a reconnect resumes exactly after the
 * last byte it received: nothing lost, nothing twice (docs/design.md §8, "Logs and streams"). Pure, browser-safe.
 *
 * Positions order by (task, attempt); within an attempt, by byte offset — of each rank's log, in
 * a multi-node attempt (resumed with `offsets`). The server streams attempts in order and never
 * goes back, so a chunk of an earlier attempt, or bytes before the rank's current offset, are
 * repeats (after a resume) and are dropped.
 */

/** A point in a job's logs: byte `offset` of attempt `attempt` (1-based) of task `task` (0-based). */
export interface StreamPosition {
  task: number;
  attempt: number;
  offset: number;
}

/** What to keep of a chunk: drop its first `skip` bytes; `gap` bytes before it never arrived. */
export interface ChunkVerdict {
  skip: number;
  gap: number;
}

/** Orders two (task, attempt) pairs: negative when a is earlier. */
export function compareAttempt(a: { task: number; attempt: number }, b: { task: number; attempt: number }): number {
  return a.task - b.task || a.attempt - b.attempt;
}

/** Tracks the resume position of one job stream. */
export class ResumeTracker {
  private pos: StreamPosition;
  /** Next offsets of ranks ≥ 1 of the position's attempt (a multi-node attempt). */
  private ranks = new Map<number, number>();

  constructor(start: StreamPosition = { task: 0, attempt: 1, offset: 0 }) {
    this.pos = { ...start };
  }

  private moveTo(task: number, attempt: number): void {
    this.pos = { task, attempt, offset: 0 };
    this.ranks = new Map();
  }

  /** The next byte wanted (a copy). */
  get position(): StreamPosition {
    return { ...this.pos };
  }

  /**
   * Accounts for a log chunk holding bytes [offset, offset + length) of (task, attempt).
   * Returns null when every byte was already received (drop the chunk), else how many leading
   * bytes to skip and how many bytes are missing before it (0 unless the server skipped some).
   */
  onChunk(task: number, attempt: number, offset: number, length: number, rank = 0): ChunkVerdict | null {
    const cmp = compareAttempt({ task, attempt }, this.pos);
    if (cmp < 0) return null;
    if (cmp > 0) this.moveTo(task, attempt);
    const have = rank > 0 ? (this.ranks.get(rank) ?? 0) : this.pos.offset;
    const end = offset + length;
    if (end <= have) return null;
    const skip = Math.max(0, have - offset);
    const gap = Math.max(0, offset - have);
    if (rank > 0) this.ranks.set(rank, end);
    else this.pos.offset = end;
    return { skip, gap };
  }

  /** An attempt started: a later one moves the position to its byte 0. */
  onAttemptStart(task: number, attempt: number): void {
    if (compareAttempt({ task, attempt }, this.pos) > 0) this.moveTo(task, attempt);
  }

  /**
   * An attempt ended (its log was sent to the end): the position moves to the next attempt's
   * byte 0 — (task, attempt + 1, 0), which the server reads as "whatever comes next", also the
   * next task (lib/logs/protocol.ts, Positions).
   */
  onAttemptEnd(task: number, attempt: number): void {
    if (compareAttempt({ task, attempt }, this.pos) >= 0) this.moveTo(task, attempt + 1);
  }

  /** The last status event id seen (`since`), so a resume does not repeat status messages. */
  private lastEvent: number | null = null;

  /** Records a status message's event id. */
  onEvent(eventId: number | undefined): void {
    if (typeof eventId === 'number' && Number.isSafeInteger(eventId) && eventId >= 0 && (this.lastEvent === null || eventId > this.lastEvent)) this.lastEvent = eventId;
  }

  /** Each rank's next offset in the position's attempt (rank 0's is `offset`); [] for one rank. */
  get rankOffsets(): number[] {
    if (this.ranks.size === 0) return [];
    const n = Math.max(...this.ranks.keys()) + 1;
    return Array.from({ length: n }, (_, k) => (k === 0 ? this.pos.offset : (this.ranks.get(k) ?? 0)));
  }

  /**
   * The query string for `/ws/jobs/:id` that resumes here
   * (`task=…&attempt=…&offset=…[&offsets=…][&since=…]`).
   */
  query(): string {
    const since = this.lastEvent === null ? '' : `&since=${this.lastEvent}`;
    const ranks = this.rankOffsets;
    const offsets = ranks.length > 1 ? `&offsets=${ranks.join(',')}` : '';
    return `task=${this.pos.task}&attempt=${this.pos.attempt}&offset=${this.pos.offset}${offsets}${since}`;
  }
}
