import type { AttemptHandle } from '../executors/types';
import type { Clock, Lifecycle } from './types';

/**
 * The per-job serial queue (docs/design.md §6): steps of one job never overlap (a queue of one;
 * kicks that arrive while a step is queued share it), steps of different jobs run concurrently.
 * Also holds what the monitor knows of a job in memory only (handles launched here, first "lost"
 * verdicts, launch errors), dropped when the job is forgotten.
 */

/** One job's queue state and in-memory knowledge. */
export interface JobEntry {
  tail: Promise<void>;
  queued: Promise<void> | null;
  running: boolean;
  /** The job was forgotten (gone or terminal); a step that finds it live again clears this. */
  done: boolean;
  timer: NodeJS.Timeout | null;
  timerAt: number;
  /** Unexpected step errors in a row (the exception path runs at settings.maxStepErrors). */
  errors: number;
  /** Temporary failures in a row (their backoff). */
  transient: number;
  /** Handles known in memory (launched here), by attempt id. */
  handles: Map<number, AttemptHandle>;
  /** First "lost" verdict per attempt id: when, and under which attempt status. */
  lost: Map<number, { at: number; status: string; reason: string }>;
  /**
   * Attempts whose launch threw, by attempt id → reason, and whether the task's own spec made it
   * impossible (`precheck`: the task ends FAILED_PRECHECKS) or the executor failed (lost: recovery).
   */
  launchErrors: Map<number, { reason: string; precheck: boolean }>;
  /** When each attempt launched here was handed to its executor (its startedAt: never after its end). */
  launchedAt: Map<number, Date>;
  /** Attempts to launch again (the executor was temporarily unavailable): tries, and not before `at` (clock ms). */
  relaunch: Map<number, { tries: number; at: number }>;
}

/** What the scheduler calls back into: the step itself, and the systems that hold per-job state. */
export interface StepRunner {
  /** One step of the job (never rejects). */
  run(jobId: number, entry: JobEntry): Promise<void>;
  /** After every step, whatever happened (an attempt seen ended has its leftovers stopped). */
  ended(jobId: number): void;
  /** The job was forgotten: drop what other systems hold for it. */
  forgotten(jobId: number): void;
}

/** The per-job serial queue (see the module comment). */
export class Scheduler {
  private readonly entries = new Map<number, JobEntry>();
  private runner: StepRunner | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly life: Lifecycle,
  ) {}

  /** Connects the step and the systems (once, when the monitor is built). */
  bind(runner: StepRunner): void {
    this.runner = runner;
  }

  private get steps(): StepRunner {
    if (!this.runner) throw new Error('monitor scheduler used before bind()');
    return this.runner;
  }

  /** The job's entry, created on first use. */
  entry(id: number): JobEntry {
    let e = this.entries.get(id);
    if (!e) {
      e = {
        tail: Promise.resolve(),
        queued: null,
        running: false,
        done: false,
        timer: null,
        timerAt: 0,
        errors: 0,
        transient: 0,
        handles: new Map(),
        lost: new Map(),
        launchErrors: new Map(),
        relaunch: new Map(),
        launchedAt: new Map(),
      };
      this.entries.set(id, e);
    }
    return e;
  }

  /**
   * Queues one step of the job after the one running (if any); kicks that arrive while a step
   * is queued share it. Resolves when that step has finished. Never rejects.
   */
  kick(id: number): Promise<void> {
    const e = this.entry(id);
    if (e.queued) return e.queued;
    const p = (async () => {
      await e.tail;
      e.queued = null;
      if (this.life.stopped) return;
      e.running = true;
      try {
        await this.steps.run(id, e);
      } finally {
        e.running = false;
        this.steps.ended(id);
      }
    })();
    e.queued = p;
    e.tail = p.catch(() => undefined);
    return p;
  }

  /** Runs the job's step again in `ms` (keeps the earliest pending timer). */
  later(id: number, ms: number): void {
    if (this.life.stopped) return;
    const e = this.entry(id);
    const at = this.clock.now() + ms;
    if (e.timer && e.timerAt <= at) return;
    if (e.timer) clearTimeout(e.timer);
    e.timerAt = at;
    e.timer = setTimeout(() => {
      e.timer = null;
      void this.kick(id);
    }, Math.max(0, ms));
    e.timer.unref?.();
  }

  /** The job is gone or terminal: drop everything this monitor holds for it. */
  forget(id: number): void {
    const e = this.entries.get(id);
    if (e) {
      e.done = true;
      if (e.timer) clearTimeout(e.timer);
      e.timer = null;
      e.handles.clear();
      e.lost.clear();
      e.launchErrors.clear();
      e.relaunch.clear();
      e.launchedAt.clear();
    }
    this.steps.forgotten(id);
  }

  /**
   * Drops the entries of jobs not in `live` that have nothing queued, running or timed and that
   * `keep` does not claim; `dropped` is called for each.
   */
  sweep(live: Set<number>, keep: (id: number) => boolean, dropped: (id: number) => void): void {
    for (const [id, e] of this.entries) {
      if (!live.has(id) && !e.running && !e.queued && !e.timer && !keep(id)) {
        this.entries.delete(id);
        dropped(id);
      }
    }
  }

  /** Jobs followed and not forgotten (MonitorState.jobsWatched). */
  followed(): number {
    let n = 0;
    for (const e of this.entries.values()) if (!e.done) n++;
    return n;
  }

  /** The tails of the steps running or queued now (empty when none is). */
  busy(): Promise<void>[] {
    return [...this.entries.values()].filter((e) => e.running || e.queued !== null).map((e) => e.tail);
  }

  /** The tail of every job's queue. */
  tails(): Promise<void>[] {
    return [...this.entries.values()].map((e) => e.tail);
  }

  /** Clears every step timer (the monitor stops). */
  clearTimers(): void {
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
  }
}
