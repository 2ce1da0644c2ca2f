/**
 * The position and dedupe of one `tail()` (stream.ts StreamConsumer): fed the stream's messages
 * and chunks, it answers the items to hand the caller — each log byte once, in order — and where
 * to resume (protocol.ts "Positions"): after a chunk, the attempt and the bytes passed on (per
 * rank in a multi-node attempt); after an attempt's end, the next attempt at offset 0; `since`,
 * the eventId of the attempt message that set the position, so the server re-sends no status
 * already seen (status messages between it and a drop may come again: skipped by eventId). The
 * same rule as the CLI's follower (lib/cli/follow-render.ts), which a unit test holds them to.
 * Pure and synchronous.
 */
import type { LogChunk, Position, StreamMessage } from './protocol';

/** What a tail yields: log bytes, or (with `events`) a control message. */
export type TailItem = ({ kind: 'log' } & LogChunk) | { kind: 'event'; message: StreamMessage };

const TERMINAL = new Set(['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);

/** Options of LogCursor. */
export interface CursorOptions {
  /** Only this task (0-based) — and with `attempt`, only that attempt of it (1-based). */
  scope?: { task: number; attempt?: number };
  /** The stream carries only this rank's log of multi-node attempts. */
  rank?: number;
  /** Hand on control messages too (hello, job, task, attempt, times, end). */
  events?: boolean;
}

/** See the module comment. */
export class LogCursor {
  private pos: Position;
  private rankPos = new Map<number, number>();
  private readonly received = new Map<string, number>();
  private boundary: number | undefined;
  private readonly seenEvents = new Set<number>();
  private readonly started = new Set<string>();
  private readonly ended = new Map<string, string>();
  private readonly open = new Set<string>();
  private readonly taskStatus = new Map<number, string>();
  private readonly taskPending = new Map<number, string>();
  private finished = false;
  /** The job as the first hello described it. */
  job: Extract<StreamMessage, { type: 'hello' }>['job'] | null = null;
  /** How the followed thing ended (the job's status, or the scoped task's / attempt's); null before. */
  status: string | null = null;
  /** True when `status` is terminal. */
  terminal = false;

  constructor(private readonly opts: CursorOptions = {}) {
    this.pos = { task: opts.scope?.task ?? 0, attempt: opts.scope?.attempt ?? 1, offset: 0 };
  }

  get done(): boolean {
    return this.finished;
  }

  position(): Position {
    if (this.rankPos.size === 0) return { ...this.pos };
    const n = Math.max(...this.rankPos.keys()) + 1;
    return { ...this.pos, offsets: Array.from({ length: n }, (_, k) => (k === 0 ? this.pos.offset : (this.rankPos.get(k) ?? 0))) };
  }

  since(): number | undefined {
    return this.boundary;
  }

  private primary(rank: number): boolean {
    return this.opts.rank === undefined ? rank === 0 : rank === this.opts.rank;
  }

  private key(task: number, attempt: number, rank = 0): string {
    return this.primary(rank) ? `${task}:${attempt}` : `${task}:${attempt}:r${rank}`;
  }

  private outOfScope(task: number, attempt: number): boolean {
    const s = this.opts.scope;
    return !!s && (task !== s.task || (s.attempt !== undefined && attempt !== s.attempt));
  }

  private here(task: number, attempt: number): boolean {
    return this.pos.task === task && this.pos.attempt === attempt;
  }

  /** A log chunk: the bytes not handed on before (none, part or all of it). */
  chunk(c: LogChunk): TailItem[] {
    if (this.finished || this.outOfScope(c.task, c.attempt)) return [];
    const rank = c.rank ?? 0;
    const k = this.key(c.task, c.attempt, rank);
    const here = this.here(c.task, c.attempt);
    const have = this.received.get(k) ?? (here ? (this.primary(rank) ? this.pos.offset : (this.rankPos.get(rank) ?? 0)) : 0);
    const end = c.offset + c.data.length;
    if (end <= have) return [];
    const data = c.offset < have ? c.data.subarray(have - c.offset) : c.data;
    this.received.set(k, end);
    if (!here) this.rankPos = new Map();
    if (this.primary(rank)) this.pos = { task: c.task, attempt: c.attempt, offset: end };
    else {
      if (!here) this.pos = { task: c.task, attempt: c.attempt, offset: this.received.get(this.key(c.task, c.attempt)) ?? 0 };
      this.rankPos.set(rank, end);
    }
    return [{ kind: 'log', task: c.task, attempt: c.attempt, offset: end - data.length, data, ...(rank ? { rank } : {}) }];
  }

  /** A JSON control message: the event to hand on (with `events`), none for a repeat. */
  message(msg: StreamMessage): TailItem[] {
    if (this.finished) return [];
    if ((msg.type === 'job' || msg.type === 'task') && typeof msg.eventId === 'number') {
      if (this.seenEvents.has(msg.eventId)) return [];
      this.seenEvents.add(msg.eventId);
    }
    let show = true;
    if (msg.type === 'hello') {
      show = this.job === null;
      this.job ??= msg.job;
    } else if (msg.type === 'task') show = this.onTask(msg);
    else if (msg.type === 'attempt') show = msg.phase === 'start' ? this.onStart(msg) : this.onEnd(msg);
    else if (msg.type === 'end') this.onStreamEnd(msg.status);
    else if (msg.type === 'error') show = false;
    return show && this.opts.events ? [{ kind: 'event', message: msg }] : [];
  }

  private onTask(msg: Extract<StreamMessage, { type: 'task' }>): boolean {
    if (!TERMINAL.has(this.taskStatus.get(msg.task) ?? '')) this.taskStatus.set(msg.task, msg.status);
    const s = this.opts.scope;
    if (!s) return true;
    if (msg.task !== s.task) {
      if (msg.task > s.task && msg.status !== 'PENDING' && msg.status !== 'CANCELLED') this.finishScope();
      return false;
    }
    if (TERMINAL.has(msg.status) && s.attempt === undefined) {
      if ([...this.open].some((k) => k.startsWith(`${msg.task}:`))) this.taskPending.set(msg.task, msg.status);
      else this.finish(msg.status);
    }
    return true;
  }

  private onStart(msg: Extract<StreamMessage, { type: 'attempt' }>): boolean {
    const s = this.opts.scope;
    if (this.outOfScope(msg.task, msg.attempt)) {
      if (s && (msg.task > s.task || (s.attempt !== undefined && msg.attempt > s.attempt))) this.finishScope();
      return false;
    }
    const k = `${msg.task}:${msg.attempt}`;
    if (this.started.has(k) || this.ended.has(k)) return false;
    this.started.add(k);
    this.open.add(k);
    if (typeof msg.eventId === 'number') this.boundary = msg.eventId;
    const here = this.here(msg.task, msg.attempt);
    if (!this.received.has(this.key(msg.task, msg.attempt))) this.received.set(this.key(msg.task, msg.attempt), here ? this.pos.offset : 0);
    if (!here) this.rankPos = new Map();
    this.pos = { task: msg.task, attempt: msg.attempt, offset: this.received.get(this.key(msg.task, msg.attempt))! };
    return true;
  }

  private onEnd(msg: Extract<StreamMessage, { type: 'attempt' }>): boolean {
    const k = `${msg.task}:${msg.attempt}`;
    if (this.outOfScope(msg.task, msg.attempt) || this.ended.has(k)) return false;
    this.ended.set(k, msg.status);
    this.open.delete(k);
    const pk = this.key(msg.task, msg.attempt);
    this.received.set(pk, Math.max(this.received.get(pk) ?? 0, this.here(msg.task, msg.attempt) ? this.pos.offset : 0));
    const s = this.opts.scope;
    if (s?.attempt === undefined && (msg.task > this.pos.task || (msg.task === this.pos.task && msg.attempt >= this.pos.attempt))) {
      this.pos = { task: msg.task, attempt: msg.attempt + 1, offset: 0 };
      this.rankPos = new Map();
      if (typeof msg.eventId === 'number') this.boundary = msg.eventId;
    }
    if (s?.attempt !== undefined && msg.task === s.task && msg.attempt === s.attempt) this.finish(msg.status);
    else {
      const pending = this.taskPending.get(msg.task);
      if (pending && ![...this.open].some((o) => o.startsWith(`${msg.task}:`))) {
        this.taskPending.delete(msg.task);
        this.finish(pending);
      }
    }
    return true;
  }

  private lastEndOf(task: number): string | undefined {
    let best = 0;
    let st: string | undefined;
    for (const [k, s] of this.ended) {
      const [t, a] = k.split(':').map(Number);
      if (t === task && a > best) [best, st] = [a, s];
    }
    return st;
  }

  private onStreamEnd(status: string): void {
    const s = this.opts.scope;
    if (!s) {
      this.finished = true;
      this.status = status;
      this.terminal = TERMINAL.has(status);
      return;
    }
    const ts = this.taskStatus.get(s.task);
    let st: string | null | undefined;
    if (s.attempt !== undefined) st = this.ended.get(`${s.task}:${s.attempt}`);
    else if (ts && TERMINAL.has(ts)) st = ts;
    else if (TERMINAL.has(status)) st = this.lastEndOf(s.task) ?? status;
    if (st) this.finish(st);
    else {
      this.finished = true;
      this.status = ts ?? null;
    }
  }

  private finishScope(): void {
    const s = this.opts.scope!;
    const ts = this.taskStatus.get(s.task);
    const st = s.attempt !== undefined ? this.ended.get(`${s.task}:${s.attempt}`) : ts && TERMINAL.has(ts) ? ts : this.lastEndOf(s.task);
    this.finish(st ?? 'SUCCEEDED');
  }

  private finish(status: string): void {
    if (this.finished) return;
    this.finished = true;
    this.status = status;
    this.terminal = true;
  }
}
