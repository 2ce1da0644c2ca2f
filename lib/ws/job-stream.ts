import type { WebSocket } from 'ws';
import { getJobSummary, toTaskSummary } from '../api/views';
import type { Attempt, JobEvent } from '../generated/prisma/client';
import { isTerminal, type AttemptStatus, type JobStatus, type TaskStatus } from '../jobs/status';
import { attemptOf, jobExists, jobWithTasks, restartOrdinal, type Store, type StoreEvent } from '../store';
import { logger } from '../log';
import { LogTruncatedError } from '../logs/reader';
import { CLOSE, LOG_HEADER_BYTES, logsRemovedText, PROTOCOL_VERSION } from '../logs/protocol';
import { AttemptLogs } from './attempt-logs';
import type { StreamLimits } from './config';
import { JobEventFeed } from './event-feed';
import { FramePool, type LogSendBudget } from './send-memory';
import type { StreamStart } from './stream-start';
import { StreamSocket, type ResumePosition } from './stream-socket';

export { FramePool, LogSendBudget } from './send-memory';
export { parseStreamStart, StreamQueryError, type StreamStart } from './stream-start';

/**
 * One client's job stream on `/ws/jobs/:id` (protocol: lib/logs/protocol.ts; design:
 * docs/design.md §8, "Logs and streams"): the stream's state machine, one loop per connection
 * over the job's JobEvents in id order and each attempt's log from the start position. Its
 * parts: the events in order (event-feed.ts), the socket with backpressure and the ways a stream
 * ends (stream-socket.ts), the open attempt's log — or its ranks' logs (attempt-logs.ts) — one
 * slice of log frames at a time (log-pump.ts), and what the hub's streams share to bound memory
 * (send-memory.ts).
 */

/** Resolves on wake() or after a timeout; a wake() with nobody waiting is kept for the next wait. */
class Waker {
  private fn: (() => void) | null = null;
  private flag = false;
  wake(): void {
    this.flag = true;
    const f = this.fn;
    this.fn = null;
    f?.();
  }
  wait(ms: number): Promise<void> {
    if (this.flag) {
      this.flag = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.fn = null;
        resolve();
      }, ms);
      this.fn = () => {
        clearTimeout(timer);
        this.flag = false;
        resolve();
      };
    });
  }
}

interface OpenAttempt {
  task: number;
  number: number;
  row: Attempt;
  /** Its log (rank 0), or its ranks' logs (a multi-node attempt), as this stream sends them. */
  logs: AttemptLogs;
  /** Ranks of the attempt (its task's num_nodes). */
  nodes: number;
  /** Its terminal status is known: drain the log to its end, then send the end message. */
  terminal: boolean;
  endEventId: number | null;
  endEventAt: Date | null;
  /** The last read reached the end of every file (or its limit). */
  atEof: boolean;
  lastRefresh: number;
}

const key = (t: number, a: number) => `${t}/${a}`;
const before = (t: number, a: number, t0: number, a0: number) => t < t0 || (t === t0 && a < a0);

/** What a JobStream needs from its surroundings (the hub). */
export interface StreamDeps {
  /** The store whose bus feeds onStoreEvent(); the stream reads through it. */
  store: Store;
  limits: StreamLimits;
  /** Shared by the hub's job streams; without one, each stream uses limits.highWater. */
  budget?: LogSendBudget;
  /**
   * Frame buffers shared by the hub's job streams (sized LOG_HEADER_BYTES + limits.chunkBytes);
   * without one, the stream makes its own.
   */
  frames?: FramePool;
  /** Called once when the stream is finished (closed for any reason). */
  onDone(stream: JobStream): void;
}
/** One connection's job stream. Start with run(); the hub feeds it store events. */
export class JobStream {
  private readonly waker = new Waker();
  private readonly events: JobEventFeed;
  private readonly sock: StreamSocket;
  private open: OpenAttempt | null = null;
  private readonly finished = new Set<string>();
  private readonly pos: { task: number; attempt: number; offset: number };
  /** Every status message for events ≤ this id was sent (or deliberately skipped). */
  private lastEventId = 0;
  private jobStatus: JobStatus = 'PENDING';
  private reached: boolean;
  private readonly taskInfo = new Map<number, { name: string | null; maxRestarts: number; nodes: number }>();
  /** The reusable log frame buffers (the hub's, or the stream's own; set on its first log read). */
  private frames: FramePool | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly jobId: number,
    readonly start: StreamStart,
    private readonly deps: StreamDeps,
  ) {
    this.events = new JobEventFeed(deps.store, jobId, deps.limits);
    this.pos = { task: start.task, attempt: start.attempt, offset: start.offset };
    this.reached = (start.task === 0 && start.attempt === 1 && start.offset === 0) || start.since !== null;
    if (start.since !== null) this.lastEventId = start.since;
    this.sock = new StreamSocket(ws, deps.limits, deps.budget, {
      jobId,
      resume: () => this.resumePosition(),
      closing: () => {
        void this.open?.logs.close();
        this.waker.wake();
      },
      done: () => this.deps.onDone(this),
    });
  }

  private get closed(): boolean {
    return this.sock.closed;
  }

  /** The position a client should resume from now (after everything queued on the socket). */
  resumePosition(): ResumePosition {
    const o = this.open;
    const pos: ResumePosition = { ...this.pos, ...(this.lastEventId > 0 ? { since: this.lastEventId } : {}) };
    if (o && o.task === pos.task && o.number === pos.attempt) {
      pos.offset = o.logs.firstOffset;
      const ranks = o.logs.offsets();
      if (ranks.size > 1) pos.offsets = Array.from({ length: o.nodes }, (_, k) => ranks.get(k) ?? 0);
    }
    return pos;
  }

  /** A store change of this job (from the hub's bus listener). */
  onStoreEvent(e: StoreEvent): void {
    if (this.closed) return;
    if (e.type === 'deleted') {
      this.sock.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
      return;
    }
    if (e.type === 'logs-removed') {
      this.sock.fail('logs_removed', `job ${this.jobId}: ${logsRemovedText(new Date())}`, CLOSE.LOGS_REMOVED);
      return;
    }
    if (!this.start.follow) return;
    const ev = e.event;
    // The bus carries the committed row: take it as is (no query on the latency path). The
    // poll fetch stays as the safety net for anything the bus did not bring.
    if (ev && ev.jobId === this.jobId) this.events.offer(ev, e.row);
    else this.events.dirty = true;
    this.waker.wake();
  }

  /** Server stopping: tell the client where to resume and close with 1001. */
  goAway(): void {
    if (this.closed) return;
    this.sock.sendRaw({ type: 'error', code: 'going_away', message: 'the server is stopping; reconnect and resume', resume: this.resumePosition() });
    this.sock.close(CLOSE.GOING_AWAY, 'server stopping');
  }

  // ─── the loop ──────────────────────────────────────────────────────────────────────────────

  /** Runs the stream to its end (never throws: failures close the socket with an error). */
  async run(): Promise<void> {
    try {
      await this.loop();
    } catch (err) {
      if (this.closed) return;
      if (err instanceof LogTruncatedError) {
        this.sock.fail('log_truncated', `${err.message}`, CLOSE.INTERNAL_ERROR);
        return;
      }
      logger().error({ err, jobId: this.jobId }, 'job stream failed');
      this.sock.fail('internal', `the server failed streaming job ${this.jobId}: ${(err as Error).message}`, CLOSE.INTERNAL_ERROR);
    }
  }

  /** Sends hello and the history so far. @returns false when the stream ended instead. */
  private async hello(): Promise<boolean> {
    const { store } = this.deps;
    const job = await jobWithTasks(store, this.jobId);
    if (this.closed) return false;
    if (!job) {
      this.sock.fail('not_found', `job ${this.jobId} does not exist`, CLOSE.NOT_FOUND);
      return false;
    }
    if (this.start.task >= job.taskCount) {
      this.sock.fail('not_found', `job ${this.jobId} has ${job.taskCount} task${job.taskCount === 1 ? '' : 's'} (0–${job.taskCount - 1}): no task ${this.start.task}`, CLOSE.NOT_FOUND);
      return false;
    }
    for (const t of job.tasks) {
      const summary = toTaskSummary(t, 0);
      this.taskInfo.set(t.index, { name: t.name, maxRestarts: summary.maxRestarts, nodes: summary.nodes ?? 1 });
    }
    this.jobStatus = job.status;
    const summary = await getJobSummary(store, this.jobId);
    if (this.closed) return false;
    if (!summary) {
      this.sock.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
      return false;
    }
    this.sock.send({ type: 'hello', protocol: PROTOCOL_VERSION, job: summary });
    // The history so far (for follow=0 the only read: nothing later is looked at). Changes the
    // bus brought meanwhile are merged in id order.
    await this.events.fetch();
    if (job.logsRemovedAt && !this.closed) {
      // The history stays; the logs are gone: say so rather than stream an empty log.
      this.sock.fail('logs_removed', `job ${this.jobId}: ${logsRemovedText(job.logsRemovedAt)}`, CLOSE.LOGS_REMOVED);
      return false;
    }
    return true;
  }

  private async loop(): Promise<void> {
    const { store, limits } = this.deps;
    if (!(await this.hello())) return;
    const events = this.events;
    for (;;) {
      if (this.closed) return;
      let logMore = false;
      if (this.open) {
        const r = await this.pump();
        if (r === 'closed' || this.closed) return;
        if (r === 'eof' && this.open.terminal) {
          this.endAttempt();
          continue;
        }
        logMore = r === 'more';
        this.open.atEof = r === 'eof';
      }
      if (this.start.follow && events.pending.length === 0 && (events.dirty || Date.now() - events.lastFetch >= limits.eventPollMs)) {
        const byPoll = !events.dirty;
        const fresh = await events.fetch();
        if (this.closed) return;
        if (byPoll && fresh === 0 && !(await jobExists(store, this.jobId))) {
          return this.sock.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
        }
      }
      await this.processEvents();
      if (this.closed) return;
      if (this.open?.terminal) continue;
      if (logMore || (this.open && !this.open.atEof)) continue;
      if (events.pending.length === 0 && !events.dirty && (!this.start.follow || isTerminal('job', this.jobStatus))) {
        // Everything that exists was sent; an attempt still open was read to its end (or to the
        // follow=0 snapshot) in this pass.
        this.sock.send({ type: 'end', status: this.jobStatus, follow: this.start.follow });
        this.sock.close(CLOSE.DONE, 'end');
        return;
      }
      await this.waker.wait(this.open ? limits.logPollMs : limits.eventPollMs);
    }
  }

  // ─── events in order ───────────────────────────────────────────────────────────────────────

  private statusWanted(e: JobEvent): boolean {
    return this.start.since === null || e.id > this.start.since;
  }

  private markSent(e: JobEvent): void {
    if (e.id > this.lastEventId) this.lastEventId = e.id;
  }

  /**
   * Sends the status messages of pending events in order, opening attempts as they start. Stops
   * at the terminal event of the open attempt (its log must be drained first) and at the start
   * of another attempt while one is still open.
   */
  private async processEvents(): Promise<void> {
    // Nothing after an attempt's end may overtake its last log bytes and its end message.
    if (this.open?.terminal) return;
    const pending = this.events.pending;
    while (pending.length && !this.closed) {
      const e = pending[0];
      // The server's own history entries (lib/store server-event.ts) change no status.
      if (e.entity === 'server') {
        this.markSent(e);
        pending.shift();
        continue;
      }
      if (e.entity === 'attempt') {
        if (!(await this.attemptEvent(e))) return;
        continue;
      }
      const t = e.taskIndex ?? -1;
      if (e.entity === 'task') {
        if (t >= this.start.task) {
          this.reached = true;
          if (this.statusWanted(e)) {
            const info = this.taskInfo.get(t);
            this.sock.send({ type: 'task', task: t, name: info?.name ?? null, status: e.to as TaskStatus, reason: e.reason, at: e.at.toISOString(), eventId: e.id });
          }
        }
        this.markSent(e);
        pending.shift();
        continue;
      }
      // A job status change.
      this.jobStatus = e.to as JobStatus;
      const terminal = isTerminal('job', e.to);
      if ((this.reached || terminal) && this.statusWanted(e)) {
        this.sock.send({ type: 'job', status: e.to as JobStatus, reason: e.reason, at: e.at.toISOString(), eventId: e.id });
      }
      this.markSent(e);
      pending.shift();
    }
  }

  /**
   * One attempt event at the head of `pending`: a created attempt is opened (once the open one is
   * done), the end of the open one marks it terminal. @returns false when processing must stop
   * here (the event stays or the open attempt's log must be drained first).
   */
  private async attemptEvent(e: JobEvent): Promise<boolean> {
    const pending = this.events.pending;
    const t = e.taskIndex ?? -1;
    const a = e.attemptNumber ?? 0;
    const endRow = this.events.takeEndRow(e.id);
    if (e.from === null) {
      // An attempt was created.
      const skip = before(t, a, this.start.task, this.start.attempt) || this.finished.has(key(t, a));
      if (!skip) {
        if (this.open && !(this.open.task === t && this.open.number === a)) {
          // Another attempt is still open: finish it first (its row tells whether it ended).
          await this.refreshOpen();
          if (this.open.terminal) return false;
          if (!this.start.follow) {
            this.finished.add(key(this.open.task, this.open.number));
            await this.dropOpen();
          } else return false;
        }
        if (!this.open) {
          this.reached = true;
          const opened = await this.openAttempt(t, a, e);
          if (!opened) return false;
        }
      }
      this.markSent(e);
      pending.shift();
      return true;
    }
    if (isTerminal('attempt', e.to) && this.open && this.open.task === t && this.open.number === a) {
      this.open.terminal = true;
      this.open.endEventId = e.id;
      this.open.endEventAt = e.at;
      pending.shift();
      // The row as the ending write left it (bus), else read (an event found by the poll).
      this.open.row = endRow ?? (await this.loadAttempt(t, a)) ?? this.open.row;
      return false;
    }
    this.markSent(e);
    pending.shift();
    return true;
  }

  // ─── attempts ──────────────────────────────────────────────────────────────────────────────

  private loadAttempt(task: number, number: number): Promise<Attempt | null> {
    return attemptOf(this.deps.store, this.jobId, task, number);
  }

  private async refreshOpen(): Promise<void> {
    const o = this.open!;
    const row = await this.loadAttempt(o.task, o.number);
    o.lastRefresh = Date.now();
    if (!row) return;
    o.row = row;
    if (isTerminal('attempt', row.status)) o.terminal = true;
  }

  private async dropOpen(): Promise<void> {
    const o = this.open;
    this.open = null;
    await o?.logs.close();
  }

  /** Opens an attempt that was created (event `e`): start message, then its log. */
  private async openAttempt(task: number, number: number, e: JobEvent): Promise<boolean> {
    const row = await this.loadAttempt(task, number);
    if (this.closed) return false;
    if (!row) {
      // The attempt row is gone: the job was deleted under us.
      this.sock.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
      return false;
    }
    const isStart = task === this.start.task && number === this.start.attempt;
    const nodes = this.taskInfo.get(task)?.nodes ?? 1;
    const { rank, offsets } = this.start;
    const ranks = rank === null ? Array.from({ length: nodes }, (_, k) => k) : rank < nodes ? [rank] : [];
    const offsetOf = (k: number) => (!isStart ? 0 : offsets ? (offsets[k] ?? 0) : k === (rank ?? 0) ? this.start.offset : 0);
    const logs = await AttemptLogs.open(row.logPath, ranks, offsetOf, this.start.follow);
    if (this.closed) return false;
    if (!(logs instanceof AttemptLogs)) {
      const which = nodes > 1 ? ` rank ${logs.rank}` : '';
      this.sock.fail('bad_request', `offset ${logs.offset} is past the end of the log of job ${this.jobId} task ${task} attempt ${number}${which} (size ${logs.size} bytes)`, CLOSE.BAD_REQUEST);
      return false;
    }
    this.open = { task, number, row, logs, nodes, terminal: false, endEventId: null, endEventAt: null, atEof: false, lastRefresh: Date.now() };
    this.pos.task = task;
    this.pos.attempt = number;
    this.pos.offset = logs.firstOffset;
    if (isStart || this.statusWanted(e)) {
      const cause = row.cause === 'restart' || row.cause === 'recovery' ? row.cause : 'first';
      let restart: { n: number; max: number } | undefined;
      if (cause === 'restart') {
        const n = await restartOrdinal(this.deps.store, row.taskId, number);
        restart = { n, max: this.taskInfo.get(task)?.maxRestarts ?? 0 };
      }
      this.sock.send({
        type: 'attempt',
        phase: 'start',
        task,
        attempt: number,
        status: e.to as AttemptStatus,
        cause,
        exitCode: null,
        reason: e.reason,
        at: e.at.toISOString(),
        ...(restart ? { restart } : {}),
        eventId: e.id,
        ...(nodes > 1 ? { nodes } : {}),
      });
    }
    return true;
  }

  /** The open attempt was read to its end: send its end message and move past it. */
  private endAttempt(): void {
    const o = this.open!;
    const r = o.row;
    const cause = r.cause === 'restart' || r.cause === 'recovery' ? r.cause : 'first';
    this.sock.send({
      type: 'attempt',
      phase: 'end',
      task: o.task,
      attempt: o.number,
      status: r.status,
      cause,
      exitCode: r.exitCode,
      reason: r.statusReason,
      at: (r.endedAt ?? o.endEventAt ?? new Date()).toISOString(),
      ...(o.endEventId !== null ? { eventId: o.endEventId } : {}),
      ...(o.nodes > 1 ? { nodes: o.nodes } : {}),
    });
    if (o.endEventId !== null && o.endEventId > this.lastEventId) this.lastEventId = o.endEventId;
    this.finished.add(key(o.task, o.number));
    this.pos.task = o.task;
    this.pos.attempt = o.number + 1;
    this.pos.offset = 0;
    this.open = null;
    void o.logs.close();
  }

  /**
   * Sends the open attempt's log from its offset: up to sliceBytes, or to the end of the file
   * (or the follow=0 snapshot); opens its log file first. @returns 'eof' at the end, 'more'
   * when the slice was used up.
   */
  private async pump(): Promise<'eof' | 'more' | 'closed'> {
    const o = this.open!;
    const { chunkBytes, logPollMs } = this.deps.limits;
    if (!o.row.logPath && (o.terminal || Date.now() - o.lastRefresh >= logPollMs)) await this.refreshOpenPath();
    if (this.closed) return 'closed';
    if (!o.row.logPath) return 'eof';
    const frames = (this.frames ??= this.deps.frames ?? new FramePool(LOG_HEADER_BYTES + chunkBytes));
    const r = await o.logs.pump(o.row.logPath, o.task, o.number, { socket: this.sock, limits: this.deps.limits, frames, budget: this.deps.budget }, () => this.waker.wake());
    this.pos.offset = o.logs.firstOffset;
    return r;
  }

  private async refreshOpenPath(): Promise<void> {
    const o = this.open!;
    const row = await this.loadAttempt(o.task, o.number);
    o.lastRefresh = Date.now();
    // Only the row is refreshed: whether the attempt ended is decided in event order.
    if (row) o.row = row;
  }
}
