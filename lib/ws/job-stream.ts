import type { WebSocket } from 'ws';
import type { Attempt, JobEvent, PrismaClient } from '../generated/prisma/client';
import { getJobSummary, toTaskSummary } from '../jobs/queries';
import { isTerminal, type AttemptStatus, type JobStatus, type TaskStatus } from '../jobs/status';
import type { StoreEvent } from '../jobs/store';
import { logger } from '../log';
import { LogFollower, LogTruncatedError, logSize } from '../logs/reader';
import { CLOSE, LOG_HEADER_BYTES, PROTOCOL_VERSION, writeLogHeader, type PongMessage, type StreamErrorCode, type StreamMessage } from '../logs/protocol';
import { isPingMessage, type StreamLimits } from './config';

/**
 * One client's job stream on `/ws/jobs/:id` (the protocol is in lib/logs/protocol.ts). One loop
 * per connection walks the job's JobEvents in id order and the log of each attempt from the
 * start position:
 *
 *   hello → job/task status messages as they happen → per attempt: `attempt` start, binary log
 *   chunks, `attempt` end (after the log was read to the end the finished attempt left) → `end`.
 *
 * It wakes on the store bus (a status change of this job: low latency), on fs.watch of the open
 * log file, and on poll timers (fallbacks). It reads a log only while the socket holds less than
 * the high-water mark; a client that stops reading is cut off with a resume position, so the
 * server never buffers without bound. Many clients on one job share nothing but the file.
 */

/** Where and how a job stream starts (query of `/ws/jobs/:id`). */
export interface StreamStart {
  /** 0-based task index. */
  task: number;
  /** 1-based attempt number. */
  attempt: number;
  /** Byte offset in that attempt's log. */
  offset: number;
  follow: boolean;
  /** Last status eventId the client received (status messages up to it are not re-sent). */
  since: number | null;
}

/** A query error: the text says which parameter and why. */
export class StreamQueryError extends Error {}

function intParam(q: URLSearchParams, name: string, def: number, min: number): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  if (!/^[0-9]{1,15}$/.test(raw)) throw new StreamQueryError(`${name}: expected an integer ≥ ${min}, got "${raw}"`);
  const n = Number(raw);
  if (n < min) throw new StreamQueryError(`${name}: expected an integer ≥ ${min}, got ${n}`);
  return n;
}

/**
 * Parses `?task=&attempt=&offset=&follow=&since=` (defaults: 0, 1, 0, follow on, none).
 * @throws StreamQueryError naming the bad parameter.
 */
export function parseStreamStart(q: URLSearchParams): StreamStart {
  const f = q.get('follow');
  let follow = true;
  if (f !== null && f !== '') {
    if (['1', 'true', 'yes'].includes(f)) follow = true;
    else if (['0', 'false', 'no'].includes(f)) follow = false;
    else throw new StreamQueryError(`follow: expected 1/0 or true/false, got "${f}"`);
  }
  const sinceRaw = q.get('since');
  return {
    task: intParam(q, 'task', 0, 0),
    attempt: intParam(q, 'attempt', 1, 1),
    offset: intParam(q, 'offset', 0, 0),
    follow,
    since: sinceRaw === null || sinceRaw === '' ? null : intParam(q, 'since', 0, 0),
  };
}

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
  follower: LogFollower | null;
  /** Its terminal status is known: drain the log to its end, then send the end message. */
  terminal: boolean;
  endEventId: number | null;
  endEventAt: Date | null;
  /** Stop reading at this offset (follow=0: the size when opened), else Infinity. */
  limit: number;
  /** The last read reached the end of the file (or the limit). */
  atEof: boolean;
  lastRefresh: number;
}

const key = (t: number, a: number) => `${t}/${a}`;
const before = (t: number, a: number, t0: number, a0: number) => t < t0 || (t === t0 && a < a0);

/** What a JobStream needs from its surroundings (the hub). */
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
 * socket has taken them (ws.send's callback: the bytes are in the kernel, nothing refers to the
 * buffer any more). A replay at hundreds of MB/s otherwise allocates a 256 KiB Buffer per frame
 * and leaves them to the garbage collector, which lets tens of MB of dead frames pile up outside
 * the JS heap before it runs. Keeps at most `keep` spare buffers; smaller (tail) reads are not
 * pooled, so an idle follower stays small. One per hub, shared by its job streams (a stream
 * without one makes its own): with 50 replays at once, per-stream pools held 50 × `keep` spares,
 * and a pool smaller than the frames in flight drops one buffer per frame sent — up to ~60 MB of
 * dead frames before V8's external-memory trigger collects them (bench logs, 2026-12-01).
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

export interface StreamDeps {
  prisma: PrismaClient;
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
  private closed = false;
  private readonly waker = new Waker();
  private eventsDirty = true;
  private lastFetch = 0;
  private floor = 0;
  private readonly seen = new Set<number>();
  private pending: JobEvent[] = [];
  private open: OpenAttempt | null = null;
  private readonly finished = new Set<string>();
  private readonly pos: { task: number; attempt: number; offset: number };
  /** Every status message for events ≤ this id was sent (or deliberately skipped). */
  private lastEventId = 0;
  /** Attempt rows the bus brought with their terminal event (event id → row), until processed. */
  private readonly endRows = new Map<number, Attempt>();
  private jobStatus: JobStatus = 'PENDING';
  private reached: boolean;
  private readonly taskInfo = new Map<number, { name: string | null; maxRestarts: number }>();
  private progressFn: ((progressed: boolean) => void) | null = null;
  /** The reusable log frame buffers (the hub's, or the stream's own; set on its first log read). */
  private frames: FramePool | null = null;
  private readonly onSent = () => {
    const f = this.progressFn;
    this.progressFn = null;
    f?.(true);
  };

  constructor(
    readonly ws: WebSocket,
    readonly jobId: number,
    readonly start: StreamStart,
    private readonly deps: StreamDeps,
  ) {
    this.pos = { task: start.task, attempt: start.attempt, offset: start.offset };
    this.reached = (start.task === 0 && start.attempt === 1 && start.offset === 0) || start.since !== null;
    if (start.since !== null) this.lastEventId = start.since;
    ws.on('close', () => this.finish());
    ws.on('error', () => this.finish());
    ws.on('message', (data, isBinary) => this.onClientMessage(data, isBinary));
  }

  /** The position a client should resume from now (after everything queued on the socket). */
  resumePosition(): { task: number; attempt: number; offset: number; since?: number } {
    return { ...this.pos, ...(this.lastEventId > 0 ? { since: this.lastEventId } : {}) };
  }

  /** A store change of this job (from the hub's bus listener). */
  onStoreEvent(e: StoreEvent): void {
    if (this.closed) return;
    if (e.type === 'deleted') {
      this.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
      return;
    }
    if (!this.start.follow) return;
    const ev = e.event;
    if (ev && ev.jobId === this.jobId) {
      // The bus carries the committed row: take it as is (no query on the latency path). The
      // poll fetch stays as the safety net for anything the bus did not bring.
      if (ev.id > this.floor && !this.seen.has(ev.id)) {
        this.seen.add(ev.id);
        let i = this.pending.length;
        while (i > 0 && this.pending[i - 1].id > ev.id) i--;
        this.pending.splice(i, 0, ev);
        if (ev.entity === 'attempt' && e.row && isTerminal('attempt', ev.to)) this.endRows.set(ev.id, e.row as Attempt);
      }
    } else this.eventsDirty = true;
    this.waker.wake();
  }

  /** Server stopping: tell the client where to resume and close with 1001. */
  goAway(): void {
    if (this.closed) return;
    this.sendRaw({ type: 'error', code: 'going_away', message: 'the server is stopping; reconnect and resume', resume: this.resumePosition() });
    this.close(CLOSE.GOING_AWAY, 'server stopping');
  }

  private onClientMessage(data: unknown, isBinary: boolean): void {
    if (this.closed) return;
    if (isPingMessage(data, isBinary)) {
      this.sendRaw({ type: 'pong' });
      return;
    }
    this.fail('bad_request', `unexpected client message: a client sends nothing but {"type":"ping"} (got ${isBinary ? 'a binary frame' : 'text that is not one'})`, CLOSE.BAD_REQUEST);
  }

  // ─── sending ───────────────────────────────────────────────────────────────────────────────

  private sendRaw(msg: StreamMessage | PongMessage): void {
    if (this.closed) return;
    this.ws.send(JSON.stringify(msg), this.onSent);
  }

  private send(msg: StreamMessage): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount > this.deps.limits.hardCap) {
      this.cut(`more than ${this.deps.limits.hardCap} bytes unsent`);
      return;
    }
    this.sendRaw(msg);
  }

  private fail(code: StreamErrorCode, message: string, closeCode: number): void {
    if (this.closed) return;
    this.sendRaw({ type: 'error', code, message });
    this.close(closeCode, code);
  }

  private cut(why: string): void {
    if (this.closed) return;
    const resume = this.resumePosition();
    logger().info({ jobId: this.jobId, resume }, `job stream client cut off: ${why}`);
    this.sendRaw({ type: 'error', code: 'slow_consumer', message: `the client did not keep up (${why}); reconnect with the resume position`, resume });
    this.close(CLOSE.SLOW_CONSUMER, 'slow consumer');
  }

  private close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, reason);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    void this.open?.follower?.close();
    this.waker.wake();
    const f = this.progressFn;
    this.progressFn = null;
    f?.(true);
    this.deps.onDone(this);
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
  private async backpressure(): Promise<boolean> {
    const { hardCap, stallMs } = this.deps.limits;
    let last = Date.now();
    while (!this.closed && this.ws.bufferedAmount > (this.deps.budget?.highWater() ?? this.deps.limits.highWater)) {
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
    return !this.closed;
  }

  // ─── the loop ──────────────────────────────────────────────────────────────────────────────

  /** Runs the stream to its end (never throws: failures close the socket with an error). */
  async run(): Promise<void> {
    try {
      await this.loop();
    } catch (err) {
      if (this.closed) return;
      if (err instanceof LogTruncatedError) {
        this.fail('log_truncated', `${err.message}`, CLOSE.INTERNAL_ERROR);
        return;
      }
      logger().error({ err, jobId: this.jobId }, 'job stream failed');
      this.fail('internal', `the server failed streaming job ${this.jobId}: ${(err as Error).message}`, CLOSE.INTERNAL_ERROR);
    }
  }

  private async loop(): Promise<void> {
    const { prisma, limits } = this.deps;
    const job = await prisma.job.findUnique({ where: { id: this.jobId }, include: { tasks: { orderBy: { index: 'asc' } } } });
    if (this.closed) return;
    if (!job) return this.fail('not_found', `job ${this.jobId} does not exist`, CLOSE.NOT_FOUND);
    if (this.start.task >= job.taskCount) {
      return this.fail('not_found', `job ${this.jobId} has ${job.taskCount} task${job.taskCount === 1 ? '' : 's'} (0–${job.taskCount - 1}): no task ${this.start.task}`, CLOSE.NOT_FOUND);
    }
    for (const t of job.tasks) this.taskInfo.set(t.index, { name: t.name, maxRestarts: toTaskSummary(t, 0).maxRestarts });
    this.jobStatus = job.status;
    const summary = await getJobSummary(prisma, this.jobId);
    if (this.closed) return;
    if (!summary) return this.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
    this.send({ type: 'hello', protocol: PROTOCOL_VERSION, job: summary });
    // The history so far (for follow=0 the only read: nothing later is looked at). Changes the
    // bus brought meanwhile are merged in id order.
    await this.fetchEvents();

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
      if (this.start.follow && this.pending.length === 0 && (this.eventsDirty || Date.now() - this.lastFetch >= limits.eventPollMs)) {
        const byPoll = !this.eventsDirty;
        const fresh = await this.fetchEvents();
        if (this.closed) return;
        if (byPoll && fresh === 0 && !(await prisma.job.findUnique({ where: { id: this.jobId }, select: { id: true } }))) {
          return this.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
        }
      }
      await this.processEvents();
      if (this.closed) return;
      if (this.open?.terminal) continue;
      if (logMore || (this.open && !this.open.atEof)) continue;
      if (this.pending.length === 0 && !this.eventsDirty && (!this.start.follow || isTerminal('job', this.jobStatus))) {
        // Everything that exists was sent; an attempt still open was read to its end (or to the
        // follow=0 snapshot) in this pass.
        this.send({ type: 'end', status: this.jobStatus, follow: this.start.follow });
        this.close(CLOSE.DONE, 'end');
        return;
      }
      await this.waker.wait(this.open ? limits.logPollMs : limits.eventPollMs);
    }
  }

  /**
   * Reads new JobEvents of this job into `pending` (id order). Reads from a floor that trails by
   * eventLagMs so an event committed late with a smaller id is still seen. @returns how many.
   */
  private async fetchEvents(): Promise<number> {
    this.eventsDirty = false;
    const now = Date.now();
    const rows = await this.deps.prisma.jobEvent.findMany({ where: { jobId: this.jobId, id: { gt: this.floor } }, orderBy: { id: 'asc' } });
    this.lastFetch = Date.now();
    const fresh = rows.filter((r) => !this.seen.has(r.id));
    for (const r of fresh) this.seen.add(r.id);
    for (const r of rows) {
      if (r.at.getTime() < now - this.deps.limits.eventLagMs && this.seen.has(r.id)) this.floor = r.id;
      else break;
    }
    for (const id of this.seen) if (id <= this.floor) this.seen.delete(id);
    if (fresh.length) {
      this.pending.push(...fresh);
      this.pending.sort((x, y) => x.id - y.id);
    }
    return fresh.length;
  }

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
    while (this.pending.length && !this.closed) {
      const e = this.pending[0];
      const t = e.taskIndex ?? -1;
      const a = e.attemptNumber ?? 0;
      if (e.entity === 'attempt') {
        const endRow = this.endRows.get(e.id);
        this.endRows.delete(e.id);
        if (e.from === null) {
          // An attempt was created.
          const skip = before(t, a, this.start.task, this.start.attempt) || this.finished.has(key(t, a));
          if (!skip) {
            if (this.open && !(this.open.task === t && this.open.number === a)) {
              // Another attempt is still open: finish it first (its row tells whether it ended).
              await this.refreshOpen();
              if (this.open.terminal) return;
              if (!this.start.follow) {
                this.finished.add(key(this.open.task, this.open.number));
                await this.dropOpen();
              } else return;
            }
            if (!this.open) {
              this.reached = true;
              const opened = await this.openAttempt(t, a, e);
              if (!opened) return;
            }
          }
          this.markSent(e);
          this.pending.shift();
          continue;
        }
        if (isTerminal('attempt', e.to) && this.open && this.open.task === t && this.open.number === a) {
          this.open.terminal = true;
          this.open.endEventId = e.id;
          this.open.endEventAt = e.at;
          this.pending.shift();
          // The row as the ending write left it (bus), else read (an event found by the poll).
          this.open.row = endRow ?? (await this.loadAttempt(t, a)) ?? this.open.row;
          return;
        }
        this.markSent(e);
        this.pending.shift();
        continue;
      }
      if (e.entity === 'task') {
        if (t >= this.start.task) {
          this.reached = true;
          if (this.statusWanted(e)) {
            const info = this.taskInfo.get(t);
            this.send({ type: 'task', task: t, name: info?.name ?? null, status: e.to as TaskStatus, reason: e.reason, at: e.at.toISOString(), eventId: e.id });
          }
        }
        this.markSent(e);
        this.pending.shift();
        continue;
      }
      // A job status change.
      this.jobStatus = e.to as JobStatus;
      const terminal = isTerminal('job', e.to);
      if ((this.reached || terminal) && this.statusWanted(e)) {
        this.send({ type: 'job', status: e.to as JobStatus, reason: e.reason, at: e.at.toISOString(), eventId: e.id });
      }
      this.markSent(e);
      this.pending.shift();
    }
  }

  private loadAttempt(task: number, number: number): Promise<Attempt | null> {
    return this.deps.prisma.attempt.findFirst({ where: { jobId: this.jobId, number, task: { index: task } } });
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
    await o?.follower?.close();
  }

  /** Opens an attempt that was created (event `e`): start message, then its log. */
  private async openAttempt(task: number, number: number, e: JobEvent): Promise<boolean> {
    const row = await this.loadAttempt(task, number);
    if (this.closed) return false;
    if (!row) {
      // The attempt row is gone: the job was deleted under us.
      this.fail('deleted', `job ${this.jobId} was deleted`, CLOSE.NOT_FOUND);
      return false;
    }
    const isStart = task === this.start.task && number === this.start.attempt;
    const offset = isStart ? this.start.offset : 0;
    if (offset > 0) {
      const size = await logSize(row.logPath);
      if (offset > size) {
        this.fail('bad_request', `offset ${offset} is past the end of the log of job ${this.jobId} task ${task} attempt ${number} (size ${size} bytes)`, CLOSE.BAD_REQUEST);
        return false;
      }
    }
    const limit = this.start.follow ? Infinity : await logSize(row.logPath);
    this.open = { task, number, row, follower: null, terminal: false, endEventId: null, endEventAt: null, limit: Math.max(limit, offset), atEof: false, lastRefresh: Date.now() };
    this.pos.task = task;
    this.pos.attempt = number;
    this.pos.offset = offset;
    if (isStart || this.statusWanted(e)) {
      const cause = row.cause === 'restart' || row.cause === 'recovery' ? row.cause : 'first';
      let restart: { n: number; max: number } | undefined;
      if (cause === 'restart') {
        const n = await this.deps.prisma.attempt.count({ where: { taskId: row.taskId, cause: 'restart', number: { lte: number } } });
        restart = { n, max: this.taskInfo.get(task)?.maxRestarts ?? 0 };
      }
      this.send({
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
      });
    }
    return true;
  }

  /** The open attempt was read to its end: send its end message and move past it. */
  private endAttempt(): void {
    const o = this.open!;
    const r = o.row;
    const cause = r.cause === 'restart' || r.cause === 'recovery' ? r.cause : 'first';
    this.send({
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
    });
    if (o.endEventId !== null && o.endEventId > this.lastEventId) this.lastEventId = o.endEventId;
    this.finished.add(key(o.task, o.number));
    this.pos.task = o.task;
    this.pos.attempt = o.number + 1;
    this.pos.offset = 0;
    this.open = null;
    void o.follower?.close();
  }

  /**
   * Sends the open attempt's log from its offset: up to sliceBytes, or to the end of the file
   * (or the follow=0 snapshot). @returns 'eof' at the end, 'more' when the slice was used up.
   */
  private async pump(): Promise<'eof' | 'more' | 'closed'> {
    const o = this.open!;
    const { chunkBytes, sliceBytes, logPollMs } = this.deps.limits;
    if (!o.follower) {
      if (!o.row.logPath && (o.terminal || Date.now() - o.lastRefresh >= logPollMs)) await this.refreshOpenPath();
      if (this.closed) return 'closed';
      if (!o.row.logPath) return 'eof';
      o.follower = new LogFollower(o.row.logPath, this.pos.offset, { onChange: () => this.waker.wake() });
    }
    const f = o.follower;
    // Bounded read-ahead: the next chunk's disk read is started before the current chunk is handed
    // to the socket, so reading overlaps sending (bench/README.md F5: one awaited read per frame
    // left the server half idle). At most ONE chunk (chunkBytes) is read ahead — it is started only
    // when this slice will send it, and only while this stream is the one sending — and every
    // frame still waits for backpressure() first, so the high-water mark and hard cap hold as
    // before, plus one chunk of memory for that lone stream.
    type Chunk = { buf: Buffer; at: number; want: number; n: number };
    const frames = (this.frames ??= this.deps.frames ?? new FramePool(LOG_HEADER_BYTES + chunkBytes));
    const read = async (want: number): Promise<Chunk> => {
      const buf = frames.take(LOG_HEADER_BYTES + want);
      const at = f.offset;
      const n = await f.readInto(buf, LOG_HEADER_BYTES, want);
      return { buf, at, want, n };
    };
    let ahead: Promise<Chunk> | null = null;
    let sent = 0;
    let avail = 0;
    this.deps.budget?.enter();
    try {
      while (sent < sliceBytes) {
        if (!(await this.backpressure())) return 'closed';
        let cur: Chunk;
        if (ahead) {
          cur = await ahead;
          ahead = null;
        } else {
          if (avail <= 0) {
            // Sized reads: a buffer is only as big as the bytes there are (idle followers stay small).
            avail = Math.min(await f.available(), o.limit - f.offset);
            if (this.closed) return 'closed';
            if (avail <= 0) return 'eof';
          }
          cur = await read(Math.min(chunkBytes, avail));
        }
        if (this.closed) return 'closed';
        const { buf, at, want, n } = cur;
        if (n === 0) return 'eof';
        avail -= n;
        sent += n;
        // Start the next read (only when this slice will send it) before this frame goes out.
        // Only while this is the one stream sending: with several, their reads and sends overlap
        // each other already, and a read-ahead each would hold one more frame per client.
        if (sent < sliceBytes && avail > 0 && (this.deps.budget?.senders ?? 1) <= 1) ahead = read(Math.min(chunkBytes, avail));
        writeLogHeader(buf, o.task, o.number, at);
        this.ws.send(n === want ? buf : buf.subarray(0, LOG_HEADER_BYTES + n), { binary: true }, () => {
          // Written out (or the socket failed): nothing refers to the buffer any more.
          frames.give(buf);
          this.onSent();
        });
        this.pos.offset = at + n;
      }
    } finally {
      this.deps.budget?.leave();
      // A read-ahead never sent (the stream closed or failed): its result or error goes nowhere.
      (ahead as Promise<Chunk> | null)?.catch(() => undefined);
    }
    return 'more';
  }

  private async refreshOpenPath(): Promise<void> {
    const o = this.open!;
    const row = await this.loadAttempt(o.task, o.number);
    o.lastRefresh = Date.now();
    // Only the row is refreshed: whether the attempt ended is decided in event order.
    if (row) o.row = row;
  }
}
