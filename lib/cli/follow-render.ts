/**
 * The follow renderer: turns the job stream (lib/logs/protocol.ts messages and log chunks) into
 * terminal output, SkyPilot style (`sky jobs logs`; docs/design.md §5 rule 11, docs/cli.md): log bytes go
 * raw to stdout as they arrive; markers go to stderr — where each attempt starts, how it ended
 * (exit code), the restart ("↻ Restarting task 0 (attempt 2 of 2)"), the move to the next task,
 * and the final `✓ Job N finished (status: SUCCEEDED)` / `✗ Job N finished (status: FAILED)`.
 * stdout therefore holds exactly the job's log bytes (`jobdeck logs 7 > out.log`).
 *
 * Pure and synchronous: feed it messages, it answers the outputs to write, in order. It is also
 * the dedupe authority across reconnects: it remembers how many bytes of each attempt it has
 * passed on, which markers it printed and which status events (eventId) it handled, so a resumed
 * stream that repeats a start message, a status message or overlapping bytes prints nothing
 * twice. `position()` and `since()` are where to resume.
 *
 * With `terminalSafe` (stdout is a terminal), log bytes go through a TerminalSafeFilter per
 * attempt (lib/cli/terminal-safe.ts): colours pass, every other escape sequence is removed.
 *
 * A multi-node attempt (its start message names `nodes`) has one log per rank: by default its
 * ranks' lines are interleaved, each prefixed with its rank (lib/cli/rank-lines.ts); with `rank`
 * (`--rank K`) the stream carries that rank's log alone and it passes as it came.
 *
 * With `timestamps` (`--timestamps`) each log line is prefixed with the time it was written, from
 * the `times` messages (lib/cli/timed-lines.ts): stdout then holds the lines with their times.
 */
import type { JobSummary, StreamMessage, TaskSummary } from '../api/types';
import { isTerminal } from '../jobs/status';
import type { LogChunk } from '../logs/protocol';
import { attemptEndLine, colorStatus, type Colors, colors as makeColors, taskLabel } from './format';
import { RankLines } from './rank-lines';
import { TimedLines } from './timed-lines';
import { TerminalSafeFilter } from './terminal-safe';

/** One write: raw log bytes to stdout, or a marker line (with its newline) to stderr. */
export type Output = { to: 'out'; data: Uint8Array } | { to: 'err'; text: string };

/** Where a stream (re)starts: task index, attempt number (1-based), byte offset. */
export interface Position {
  task: number;
  attempt: number;
  offset: number;
  /** Each rank's offset in a multi-node attempt (rank 0's is also `offset`), when more than one rank came. */
  offsets?: number[];
}

/** Options of the renderer. */
export interface FollowRendererOptions {
  jobId: number;
  /** Follow only this task (0-based) — and, with `attempt`, only that attempt of it. */
  scope?: { task: number; attempt?: number };
  /** Whether the stream was asked to follow (false = `--no-follow`). */
  follow?: boolean;
  colors?: Colors;
  /**
   * stdout and stderr are the same terminal: before a marker, end a log line that the job left
   * open (so "no newline at the end" does not glue to the next marker).
   */
  sameTerminal?: boolean;
  /**
   * Make log bytes safe for a terminal (lib/cli/terminal-safe.ts): only SGR colours pass, other
   * escape sequences and C1/C0 controls (but TAB, LF, CR) are removed. Off: bytes pass exactly.
   */
  terminalSafe?: boolean;
  /** The stream carries only this rank's log of multi-node attempts (`--rank K`): no prefixes. */
  rank?: number;
  /** Prefix each log line with the ISO time it was written (`--timestamps`). */
  timestamps?: boolean;
  /** The clock for held lines (timestamps; default Date.now). */
  now?: () => number;
}

/** The final state a follow reached. */
export interface FollowOutcome {
  /** Status of the followed thing (job, or the scoped task/attempt), when known. */
  status: string | null;
  /** True when that status is terminal (the follow saw the end). */
  terminal: boolean;
}

type TaskInfo = { name: string | null; status: string; maxRestarts: number };

/** See the module comment. */
export class FollowRenderer {
  private readonly c: Colors;
  private readonly jobId: number;
  private readonly scope?: { task: number; attempt?: number };
  private readonly follow: boolean;
  private readonly sameTerminal: boolean;
  private job: JobSummary | null = null;
  private readonly tasks = new Map<number, TaskInfo>();
  /** Bytes passed on per attempt key `t:a`. */
  private readonly received = new Map<string, number>();
  private readonly started = new Set<string>();
  private readonly ended = new Map<string, string>();
  /** Attempts started and not yet ended (their task's terminal marker waits for them). */
  private readonly open = new Set<string>();
  /** Tasks whose terminal marker was printed. */
  private readonly taskMarked = new Set<number>();
  /** Tasks whose terminal marker waits for an open attempt to end. */
  private readonly taskPending = new Map<number, { status: string; reason: string | null }>();
  private readonly jobMarks = new Set<string>();
  /** Restart attempts seen per task (when a start message carries no `restart`). */
  private readonly restartsSeen = new Map<number, number>();
  private lastTask: number | null = null;
  private pos: Position;
  /**
   * The eventId of the attempt message that set the position (the start of the position's
   * attempt, or the end of the attempt before it): sent back as `since` on a resume.
   */
  private boundaryEventId: number | undefined;
  /** eventIds of the job/task status messages handled (a resume may send some again). */
  private readonly seenEvents = new Set<number>();
  /** Per-attempt terminal filter (terminalSafe) and the attempt it belongs to. */
  private readonly filter: TerminalSafeFilter | null;
  private filterKey: string | null = null;
  /** The multi-node attempts seen (attempt key → nodes) and the open one's lines and filters. */
  private readonly gangs = new Map<string, number>();
  private gang: { key: string; lines: RankLines; filters: Map<number, TerminalSafeFilter> } | null = null;
  /** Bytes passed on per rank ≥ 1 of the position's attempt. */
  private rankPos = new Map<number, number>();
  private readonly rank: number | null;
  /** Per log (key as `received`): its lines with their times, when `timestamps`. */
  private readonly timed: Map<string, TimedLines> | null;
  private readonly now: () => number;
  private outAtLineStart = true;
  private helloSeen = false;
  private finished = false;
  private outcomeValue: FollowOutcome = { status: null, terminal: false };

  constructor(opts: FollowRendererOptions) {
    this.jobId = opts.jobId;
    this.scope = opts.scope;
    this.follow = opts.follow ?? true;
    this.c = opts.colors ?? makeColors(false);
    this.sameTerminal = opts.sameTerminal ?? false;
    this.filter = opts.terminalSafe ? new TerminalSafeFilter() : null;
    this.rank = opts.rank ?? null;
    this.timed = opts.timestamps ? new Map() : null;
    this.now = opts.now ?? Date.now;
    this.pos = { task: opts.scope?.task ?? 0, attempt: opts.scope?.attempt ?? 1, offset: 0 };
  }

  /**
   * Where to resume after a dropped connection (protocol.ts "Positions"): after a chunk, the
   * attempt and the bytes passed on so far; after an attempt's end, the next attempt number of
   * that task at offset 0.
   */
  position(): Position {
    if (this.rankPos.size === 0) return { ...this.pos };
    const n = Math.max(...this.rankPos.keys()) + 1;
    return { ...this.pos, offsets: Array.from({ length: n }, (_, k) => (k === 0 ? this.pos.offset : (this.rankPos.get(k) ?? 0))) };
  }

  /**
   * The `since` to resume with: the eventId of the attempt message that set the position (none
   * before the first attempt). Not the highest eventId seen: eventIds are not guaranteed to reach
   * the wire in order (an id is taken at insert, a transaction commits later), and a `since` past
   * the creation of an attempt whose start message this client never got would make the server
   * skip that start — and its "↻ Restarting…" line. Every attempt after the position was created
   * after this boundary, so its start is sent; status messages between the boundary and the drop
   * may come again and are skipped here by eventId.
   */
  since(): number | undefined {
    return this.boundaryEventId;
  }

  /**
   * Outputs still owed to stdout when the follow stops (Ctrl-C, giving up): with terminalSafe,
   * a colour reset if the log left colours on.
   */
  flush(): Output[] {
    const out: Output[] = [];
    this.endTimed(null, out);
    this.closeGang(out);
    this.closeFilter(out);
    return out;
  }

  /** With timestamps: lines held for their time too long go out now (call about once a second). */
  tick(): Output[] {
    const out: Output[] = [];
    for (const [k, t] of this.timed ?? []) this.emit(k, t.expire(this.now()), out);
    return out;
  }

  /** The `received` key of a rank's log: the attempt's for the primary rank, else with `:rK`. */
  private logKey(task: number, attempt: number, rank: number): string {
    const primary = this.rank === null ? rank === 0 : rank === this.rank;
    return primary ? key(task, attempt) : `${key(task, attempt)}:r${rank}`;
  }

  /** Sends out every held line of the attempt `ak`'s logs (null: of every log). */
  private endTimed(ak: string | null, out: Output[]): void {
    for (const [k, t] of this.timed ?? []) {
      if (ak !== null && k !== ak && !k.startsWith(`${ak}:`)) continue;
      this.timed!.delete(k);
      this.emit(k, t.end(), out);
    }
  }

  /** True once the followed thing ended (the `end` message, or the scoped task/attempt ended). */
  get done(): boolean {
    return this.finished;
  }

  /** The status reached (see FollowOutcome). */
  outcome(): FollowOutcome {
    return { ...this.outcomeValue };
  }

  /** The job as the last hello described it (null before the first hello). */
  jobSummary(): JobSummary | null {
    return this.job;
  }

  /** Handles one JSON control message. */
  message(msg: StreamMessage): Output[] {
    const out: Output[] = [];
    if (this.finished) return out;
    if ((msg.type === 'job' || msg.type === 'task') && typeof msg.eventId === 'number') {
      if (this.seenEvents.has(msg.eventId)) return out;
      this.seenEvents.add(msg.eventId);
    }
    switch (msg.type) {
      case 'hello':
        this.onHello(msg.job, out);
        break;
      case 'job':
        this.onJob(msg.status, msg.reason, out);
        break;
      case 'task':
        this.onTask(msg.task, msg.name, msg.status, msg.reason, out);
        break;
      case 'attempt':
        if (msg.phase === 'start') this.onAttemptStart(msg, out);
        else this.onAttemptEnd(msg, out);
        break;
      case 'end':
        this.onEnd(msg.status, msg.follow, out);
        break;
      case 'error':
        // The driver reconnects from position(); nothing to show unless it gives up.
        break;
      case 'times': {
        const k = this.logKey(msg.task, msg.attempt, msg.rank ?? 0);
        const t = this.timed?.get(k);
        if (t) this.emit(k, t.addTimes(msg.entries), out);
        else if (this.timed && !this.outOfScope(msg.task, msg.attempt) && !this.ended.has(key(msg.task, msg.attempt))) {
          // Times before the first bytes of the log: kept for them.
          const fresh = new TimedLines(this.logOffset(msg.task, msg.attempt, msg.rank ?? 0));
          fresh.addTimes(msg.entries);
          this.timed.set(k, fresh);
        }
        break;
      }
    }
    return out;
  }

  /** Handles one log chunk: passes on only bytes not passed on before. */
  chunk(c: LogChunk): Output[] {
    const out: Output[] = [];
    if (this.finished) return out;
    if (this.outOfScope(c.task, c.attempt)) return out;
    const rank = c.rank ?? 0;
    // Rank 0 (or the one rank asked for) keeps the attempt's position; other ranks their own.
    const primary = this.rank === null ? rank === 0 : rank === this.rank;
    const k = this.logKey(c.task, c.attempt, rank);
    const here = this.pos.task === c.task && this.pos.attempt === c.attempt;
    const have = this.logOffset(c.task, c.attempt, rank);
    const end = c.offset + c.data.length;
    if (end <= have) return out;
    let data = c.data;
    if (c.offset < have) data = data.subarray(have - c.offset);
    else if (c.offset > have) this.marker(out, this.c.yellow(`│   (jobdeck: ${c.offset - have} bytes of task ${c.task} attempt ${c.attempt}${rank > 0 ? ` rank ${rank}` : ''} were not received)`));
    this.received.set(k, end);
    if (!here) this.rankPos = new Map();
    if (primary) this.pos = { task: c.task, attempt: c.attempt, offset: end };
    else {
      if (!here) this.pos = { task: c.task, attempt: c.attempt, offset: this.received.get(key(c.task, c.attempt)) ?? 0 };
      this.rankPos.set(rank, end);
    }
    if (this.timed) {
      let t = this.timed.get(k);
      if (!t) this.timed.set(k, (t = new TimedLines(end - data.length, end - data.length === 0)));
      data = t.write(data, this.now());
    }
    this.emit(k, data, out);
    return out;
  }

  /** Where the next byte of a rank's log is (bytes passed on so far). */
  private logOffset(task: number, attempt: number, rank: number): number {
    const primary = this.rank === null ? rank === 0 : rank === this.rank;
    const here = this.pos.task === task && this.pos.attempt === attempt;
    return this.received.get(this.logKey(task, attempt, rank)) ?? (here ? (primary ? this.pos.offset : (this.rankPos.get(rank) ?? 0)) : 0);
  }

  /** Log bytes of log `k` on their way to stdout: a multi-node attempt's lines prefixed, the filter. */
  private emit(k: string, data: Uint8Array, out: Output[]): void {
    if (!data.length) return;
    const [task, attempt, r] = k.split(':');
    const ak = `${task}:${attempt}`;
    const rank = r ? Number(r.slice(1)) : (this.rank ?? 0);
    if (this.rank === null && (rank > 0 || this.gangs.has(ak))) {
      this.gangChunk(ak, rank, data, out);
      return;
    }
    if (this.filter) {
      if (this.filterKey !== k) {
        this.closeFilter(out);
        this.filterKey = k;
      }
      data = this.filter.write(data);
    }
    if (data.length) this.stdout(out, data);
  }

  /** A chunk of a multi-node attempt in the prefixed view: whole lines, each with its rank. */
  private gangChunk(ak: string, rank: number, data: Uint8Array, out: Output[]): void {
    if (this.gang?.key !== ak) {
      this.closeGang(out);
      this.closeFilter(out);
      // Dim only on a terminal: redirected, stdout holds plain text.
      this.gang = { key: ak, lines: new RankLines((r) => (this.filter ? this.c.dim(`[rank ${r}]`) + ' ' : `[rank ${r}] `)), filters: new Map() };
    }
    const g = this.gang;
    let f = this.filter ? g.filters.get(rank) : undefined;
    if (this.filter && !f) g.filters.set(rank, (f = new TerminalSafeFilter()));
    const lines = g.lines.write(rank, f ? f.write(data) : data);
    if (lines.length) this.stdout(out, lines);
  }

  /** Ends the open multi-node attempt's view: each rank's filter tail and unfinished line. */
  private closeGang(out: Output[], onlyKey?: string): void {
    const g = this.gang;
    if (!g || (onlyKey !== undefined && onlyKey !== g.key)) return;
    this.gang = null;
    for (const [rank, f] of g.filters) {
      const tail = f.end();
      if (tail.length) g.lines.write(rank, tail);
    }
    const rest = g.lines.end();
    if (rest.length) this.stdout(out, rest);
  }

  private stdout(out: Output[], data: Uint8Array): void {
    out.push({ to: 'out', data });
    this.outAtLineStart = data[data.length - 1] === 0x0a;
  }

  /** Ends the open terminal filter's stream (an attempt's log ended): its tail goes out first. */
  private closeFilter(out: Output[], onlyKey?: string): void {
    if (!this.filter || this.filterKey === null || (onlyKey !== undefined && onlyKey !== this.filterKey)) return;
    this.filterKey = null;
    const tail = this.filter.end();
    if (tail.length) this.stdout(out, tail);
  }

  // ─── handlers ──────────────────────────────────────────────────────────────────────────────

  private onHello(job: JobSummary, out: Output[]): void {
    this.job = job;
    for (const t of job.tasks) this.rememberTask(t);
    if (this.helloSeen) return;
    this.helloSeen = true;
    const what = job.taskCount > 1 ? `${job.taskCount} tasks` : '1 task';
    const scope = this.scope ? `, ${this.scope.attempt ? `task ${this.scope.task} attempt ${this.scope.attempt}` : `task ${this.scope.task}`} only` : '';
    const hint = this.follow && !isTerminal('job', job.status) ? ' — Ctrl-C stops following; the job keeps running' : '';
    this.marker(out, `├── Job ${job.id} (${job.name}), ${what}, status ${colorStatus(job.status, this.c)}${scope}${hint}`);
  }

  private rememberTask(t: TaskSummary): void {
    const prev = this.tasks.get(t.index);
    this.tasks.set(t.index, { name: t.name, status: prev && isTerminal('task', prev.status) ? prev.status : t.status, maxRestarts: t.maxRestarts });
  }

  private onJob(status: string, reason: string | null, out: Output[]): void {
    if (this.scope) return;
    if (status === 'CANCELLING' && !this.jobMarks.has(status)) {
      this.jobMarks.add(status);
      this.marker(out, this.c.yellow(`├── Job ${this.jobId} is being cancelled${reason ? `: ${reason}` : ''}`));
    } else if (status === 'RECOVERING') {
      this.marker(out, this.c.yellow(`↻ Job ${this.jobId} is recovering${reason ? `: ${reason}` : ''}`));
    }
  }

  private onTask(task: number, name: string | null, status: string, reason: string | null, out: Output[]): void {
    const info = this.tasks.get(task) ?? { name, status, maxRestarts: 0 };
    if (name) info.name = name;
    if (!isTerminal('task', info.status)) info.status = status;
    this.tasks.set(task, info);
    if (this.scope && task !== this.scope.task) {
      if (task > this.scope.task && status !== 'PENDING' && status !== 'CANCELLED') this.finishScope(out);
      return;
    }
    if (!isTerminal('task', status) || this.taskMarked.has(task)) return;
    if (this.hasOpenAttempt(task)) this.taskPending.set(task, { status, reason });
    else this.markTask(task, status, reason, out);
  }

  private onAttemptStart(msg: Extract<StreamMessage, { type: 'attempt' }>, out: Output[]): void {
    if (this.outOfScope(msg.task, msg.attempt)) {
      if (this.scope && (msg.task > this.scope.task || (this.scope.attempt !== undefined && msg.attempt > this.scope.attempt))) this.finishScope(out);
      return;
    }
    const k = key(msg.task, msg.attempt);
    if (this.started.has(k) || this.ended.has(k)) return;
    this.started.add(k);
    this.open.add(k);
    // The move to the next task, when the previous task's end was not told by a task message
    // (e.g. a replay that starts here).
    if (this.lastTask !== null && msg.task > this.lastTask && !this.taskMarked.has(this.lastTask)) {
      const prevStatus = this.tasks.get(this.lastTask)?.status;
      const lastEnd = this.lastEndOf(this.lastTask);
      const st = prevStatus && isTerminal('task', prevStatus) ? prevStatus : (lastEnd ?? 'SUCCEEDED');
      this.markTask(this.lastTask, st, null, out);
    }
    this.lastTask = msg.task;
    if (typeof msg.eventId === 'number') this.boundaryEventId = msg.eventId;
    if (msg.nodes && msg.nodes > 1) this.gangs.set(k, msg.nodes);
    const here = this.pos.task === msg.task && this.pos.attempt === msg.attempt;
    if (!this.received.has(k)) this.received.set(k, here ? this.pos.offset : 0);
    if (!here) this.rankPos = new Map();
    this.pos = { task: msg.task, attempt: msg.attempt, offset: this.received.get(k)! };
    const info = this.tasks.get(msg.task);
    const label = taskLabel(msg.task, info?.name);
    if (msg.cause === 'restart') {
      // "attempt A of T": T counts the attempts the task can reach with the restarts left
      // (recoveries take attempt numbers too, but not the restart budget).
      const seen = (this.restartsSeen.get(msg.task) ?? 0) + 1;
      this.restartsSeen.set(msg.task, seen);
      const n = msg.restart?.n ?? seen;
      const max = msg.restart?.max ?? info?.maxRestarts ?? n;
      this.marker(out, this.c.yellow(`↻ Restarting task ${msg.task} (attempt ${msg.attempt} of ${msg.attempt + Math.max(0, max - n)})`));
    } else if (msg.cause === 'recovery') {
      this.marker(out, this.c.yellow(`↻ Recovering task ${msg.task} (attempt ${msg.attempt})${msg.reason ? `: ${msg.reason}` : ''}`));
    }
    const on = msg.nodes && msg.nodes > 1 ? ` on ${msg.nodes} nodes${this.rank !== null ? ` (showing rank ${this.rank})` : ''}` : '';
    this.marker(out, `├── ${label}, attempt ${msg.attempt} started${on}`);
  }

  private onAttemptEnd(msg: Extract<StreamMessage, { type: 'attempt' }>, out: Output[]): void {
    if (this.outOfScope(msg.task, msg.attempt)) return;
    const k = key(msg.task, msg.attempt);
    if (this.ended.has(k)) return;
    this.ended.set(k, msg.status);
    this.open.delete(k);
    this.endTimed(k, out);
    this.closeGang(out, k);
    this.closeFilter(out, k);
    this.received.set(k, Math.max(this.received.get(k) ?? 0, this.pos.task === msg.task && this.pos.attempt === msg.attempt ? this.pos.offset : 0));
    if (!this.scope?.attempt && (msg.task > this.pos.task || (msg.task === this.pos.task && msg.attempt >= this.pos.attempt))) {
      this.pos = { task: msg.task, attempt: msg.attempt + 1, offset: 0 };
      this.rankPos = new Map();
      if (typeof msg.eventId === 'number') this.boundaryEventId = msg.eventId;
    }
    if (this.lastTask === null || msg.task > this.lastTask) this.lastTask = msg.task;
    // A multi-node attempt's first failure names its rank (docs/slurm.md "Multi-node tasks").
    const rankM = msg.reason ? /^rank (\d+): /.exec(msg.reason) : null;
    const onRank = rankM ? ` on rank ${rankM[1]}` : '';
    this.marker(out, attemptEndLine(`Task ${msg.task} attempt ${msg.attempt}`, msg, onRank, this.c));
    if (this.scope?.attempt !== undefined && msg.task === this.scope.task && msg.attempt === this.scope.attempt) {
      this.finishScoped(msg.status, `${taskLabel(msg.task, this.tasks.get(msg.task)?.name)} attempt ${msg.attempt}`, out);
      return;
    }
    const pending = this.taskPending.get(msg.task);
    if (pending && !this.hasOpenAttempt(msg.task)) {
      this.taskPending.delete(msg.task);
      this.markTask(msg.task, pending.status, pending.reason, out);
    }
  }

  private onEnd(status: string, follow: boolean, out: Output[]): void {
    this.closeGang(out);
    this.closeFilter(out);
    for (const [task, p] of [...this.taskPending]) {
      this.taskPending.delete(task);
      this.markTask(task, p.status, p.reason, out);
    }
    if (this.finished) return;
    if (this.scope) {
      const t = this.tasks.get(this.scope.task);
      let st: string | null = null;
      if (this.scope.attempt !== undefined) st = this.ended.get(key(this.scope.task, this.scope.attempt)) ?? null;
      else if (t && isTerminal('task', t.status)) st = t.status;
      else if (isTerminal('job', status)) st = this.lastEndOf(this.scope.task) ?? status;
      const label = this.scope.attempt !== undefined ? `${taskLabel(this.scope.task, t?.name)} attempt ${this.scope.attempt}` : taskLabel(this.scope.task, t?.name);
      if (st) this.finishScoped(st, label, out);
      else {
        this.finished = true;
        this.outcomeValue = { status: t?.status ?? null, terminal: false };
        this.marker(out, `└── ${label} has not ended (status: ${t?.status ?? 'unknown'}); not following`);
      }
      return;
    }
    this.finished = true;
    const terminal = isTerminal('job', status);
    this.outcomeValue = { status, terminal };
    if (terminal) this.marker(out, finalLine(`Job ${this.jobId}`, status, this.c));
    else this.marker(out, `└── Job ${this.jobId} is ${colorStatus(status, this.c)}${follow ? '' : `; not following (\`jobdeck logs ${this.jobId}\` follows it)`}`);
  }

  // ─── helpers ───────────────────────────────────────────────────────────────────────────────

  private outOfScope(task: number, attempt: number): boolean {
    if (!this.scope) return false;
    if (task !== this.scope.task) return true;
    return this.scope.attempt !== undefined && attempt !== this.scope.attempt;
  }

  private hasOpenAttempt(task: number): boolean {
    for (const k of this.open) if (k.startsWith(`${task}:`)) return true;
    return false;
  }

  private lastEndOf(task: number): string | undefined {
    let best = 0;
    let st: string | undefined;
    for (const [k, s] of this.ended) {
      const [t, a] = k.split(':').map(Number);
      if (t === task && a > best) {
        best = a;
        st = s;
      }
    }
    return st;
  }

  private markTask(task: number, status: string, reason: string | null, out: Output[]): void {
    if (this.taskMarked.has(task)) return;
    this.taskMarked.add(task);
    const info = this.tasks.get(task);
    if (info && !isTerminal('task', info.status)) info.status = status;
    const label = taskLabel(task, info?.name);
    const count = this.job?.taskCount ?? Math.max(this.tasks.size, task + 1);
    const why = reason ? `: ${reason}` : '';
    if (this.scope && task === this.scope.task && this.scope.attempt === undefined) {
      this.finishScoped(status, label, out);
      return;
    }
    if (count <= 1 || this.scope) return; // a one-task job: the attempt line and the job line say it all
    const started = [...this.started].some((k) => k.startsWith(`${task}:`)) || [...this.ended.keys()].some((k) => k.startsWith(`${task}:`));
    if (status === 'SUCCEEDED') {
      const next = task + 1 < count ? `; moving on to ${taskLabel(task + 1, this.tasks.get(task + 1)?.name).replace(/^Task/, 'task')}` : '';
      this.marker(out, `├── ${label} ${this.c.green('succeeded')}${next}`);
    } else if (status === 'CANCELLED' && !started) {
      this.marker(out, this.c.dim(`│   ${label} will not run (status: CANCELLED)${why}`));
    } else {
      this.marker(out, `├── ${label} ended (status: ${colorStatus(status, this.c)})${why}`);
    }
  }

  private finishScope(out: Output[]): void {
    if (this.finished || !this.scope) return;
    const t = this.tasks.get(this.scope.task);
    const st = this.scope.attempt !== undefined ? this.ended.get(key(this.scope.task, this.scope.attempt)) : t && isTerminal('task', t.status) ? t.status : this.lastEndOf(this.scope.task);
    const label = this.scope.attempt !== undefined ? `${taskLabel(this.scope.task, t?.name)} attempt ${this.scope.attempt}` : taskLabel(this.scope.task, t?.name);
    this.finishScoped(st ?? 'SUCCEEDED', label, out);
  }

  private finishScoped(status: string, label: string, out: Output[]): void {
    if (this.finished) return;
    this.closeGang(out);
    this.closeFilter(out);
    this.finished = true;
    this.outcomeValue = { status, terminal: true };
    this.marker(out, finalLine(label, status, this.c));
  }

  private marker(out: Output[], text: string): void {
    if (this.sameTerminal && !this.outAtLineStart) {
      out.push({ to: 'err', text: '\n' });
      this.outAtLineStart = true;
    }
    out.push({ to: 'err', text: `${text}\n` });
  }
}

function key(task: number, attempt: number): string {
  return `${task}:${attempt}`;
}

/** `✓ Job 7 finished (status: SUCCEEDED)` or `✗ … (status: FAILED)`. */
export function finalLine(what: string, status: string, c: Colors = makeColors(false)): string {
  const ok = status === 'SUCCEEDED';
  const mark = ok ? c.green('✓') : c.red('✗');
  return `${mark} ${what} finished (status: ${colorStatus(status, c)})`;
}
