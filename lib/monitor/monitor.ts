import path from 'node:path';
import type { Attempt, Job, Prisma, PrismaClient, Task } from '../generated/prisma/client';
import type { AttemptHandle, Executor, ProbeResult } from '../executors/types';
import { logger } from '../log';
import { ACTIVE_JOB_STATUSES, planAdmission, planAdmissionReads, type AdmissionInput, type QueueReads, type QueueSummary, type WaitingJob } from '../jobs/capacity';
import { attemptLogPath } from '../jobs/paths';
import { classifyExit, decideRecovery, decideRestart, recoveryDelayMs, type RecoveryPolicy } from '../jobs/retry';
import { deriveJobStatus, isTerminal, JOB_TERMINAL, type AttemptStatus, type JobStatus, type TaskStatus } from '../jobs/status';
import { startAttempt, storeBus, submitStatementStats, transitionMany, type AnyTransition, type BatchOutcome, type StoreEvent, type Transition, type TransitionOutcome } from '../jobs/store';
import { monitorSettingsFromEnv, type MonitorSettings } from './config';
import { isTransientDbError, isTransientError, isTransientExecutorError, TransientDatabaseError } from './errors';
import { processMemory, type MonitorHandle, type MonitorState } from './handle';
import { readTaskSpec } from './taskspec';

/**
 * The monitor: turns submitted jobs into attempts, watches them, restarts what failed, recovers
 * what the executor lost, and keeps every job true to reality across races and restarts.
 *
 * Shape. One loop per process (createMonitor().start()):
 * - start-up recovery: every non-terminal job is re-adopted before the server accepts requests;
 * - an admission pass (lib/jobs/capacity) starts PENDING jobs in submission order while their CPUs
 *   fit, and ends FAILED_NO_RESOURCE the ones that never can / waited too long;
 * - a reconcile pass every `reconcileMs` runs one *step* for every admitted non-terminal job
 *   (jobs whose attempt has a live executor.watch subscription: once every 30th pass, staggered — the watch wakes
 *   them at once; the pass is the safety net);
 * - an exit seen at once (executor.watch, when this process is the parent), a submission or a
 *   cancel (storeBus events, wake()) run a job's step immediately.
 * Steps of one job never overlap (per-job serialization: a queue of one); steps of different jobs
 * run concurrently.
 *
 * A step reads the job, its tasks and each task's latest attempt FRESH, probes the current
 * attempt, decides, and writes through the guarded store (compare-and-set on the status it read),
 * then reads again, until there is nothing to do. The rules of DESIGN.md §3 (Ray seed "Guard
 * recovered monitors against stale job state", SkyPilot seed "retry each task"):
 * 1. every status write is guarded (lib/jobs/store), all writes of one decision in one transaction;
 * 2. a job row that is gone stops the step and the job is forgotten — nothing is ever re-created;
 * 3. a terminal job row is kept as it is; nothing writes a second terminal status;
 * 4. a write that lost to another non-terminal change does not end the step: it re-reads and
 *    continues with the fresh row;
 * 5. every observation (probe result, exit code, admission verdict) belongs to one iteration of
 *    the step and is dropped with it: after a lost race the attempt is probed again. An admission
 *    verdict (no resource) is consumed by the first iteration that sees the job PENDING;
 * 6. a temporary database failure (lib/monitor/errors) retries the step with backoff and never
 *    makes a job FAILED;
 * 7. an unexpected error retries the step; after `maxStepErrors` in a row the exception path
 *    re-reads the row first (gone → stop; terminal → keep) before it writes FAILED_CONTROLLER;
 * 8. start-up recovery reattaches to attempts still running, settles attempts that ended while
 *    jobdeck was down from their recorded exit status, and recovers the ones that vanished;
 * 9–10. after an attempt of ANY task ends FAILED or FAILED_SETUP, lib/jobs/retry decides at once:
 *    restart (counted or not) or end the job with that failure, later tasks CANCELLED.
 *
 * Liveness. One "lost" verdict is never believed: the attempt is probed again `lostConfirmMs`
 * later, and only a second "lost" for the same attempt in the same status starts a recovery. (The
 * local executor already answers "lost" only when the exit file is absent AND the pid is gone or
 * reused; the second probe covers the exit file landing between its two reads, and any executor
 * whose probe can miss.) A launch that throws is a lost attempt too (recovery, not a restart).
 *
 * Recoveries are bounded per task (maxRecoveries, JOBDECK_MAX_RECOVERIES) with exponential backoff;
 * past the bound the task and the job end FAILED_CONTROLLER ("jobdeck could not keep it running").
 *
 * Leftovers. An attempt may leave processes behind (`sleep 300 &`, a daemon it started): when the
 * monitor sees an attempt end (exited, or lost) it stops what is left of it — executor.cancel()
 * with the leftover grace (JOBDECK_LEFTOVER_GRACE_MS: SIGTERM to the attempt's process group and
 * session, SIGKILL after the grace; on a finished attempt with nothing left it sends nothing) —
 * right AFTER the status write (the exit → status latency is not delayed), in the background but
 * tracked (`reaps`). Nothing of attempt N remains when anything new starts: every launch of the
 * job (restart, recovery, next task) first awaits the job's reaps, and the admission pass counts
 * the CPUs of a terminal job as used until its reaps are done, so the next job never starts
 * beside the previous one's leftovers. Model: Ray's job supervisor and Slurm end every process of
 * a job when the job ends. A reap that fails is logged and does not block the next launch
 * forever. Limits: a crash of jobdeck between the status write and the reap leaves the leftovers
 * running (the job is terminal: nothing re-adopts it) until the job is deleted (deleteJobs stops
 * them) — or they end by themselves.
 *
 * Cancel. A job in CANCELLING (or with cancelRequestedAt set): the active attempt and its task go
 * CANCELLING, executor.cancel() sends SIGTERM to the process group and SIGKILL after the grace
 * period, and once no process remains the attempt, the task, the later tasks and the job end
 * CANCELLED in one write. After a crash a CANCELLING job is simply cancelled again.
 *
 * Job status. Always what deriveJobStatus() (lib/jobs/status) says about the tasks after the write,
 * written in the same transaction as the task and attempt writes that changed it. Job counters
 * restartCount / recoveryCount are the sums over the tasks, written with every job transition.
 */

/** The monitor's sense of time (ms since the epoch). Timers stay real; tests shift `now`. */
export interface Clock {
  now(): number;
}

/** Where in a step a guarded write is about to happen (for hooks and logs). */
export type StepPhase =
  | 'admit'
  | 'no-resource'
  | 'nothing-to-run'
  | 'launch'
  | 'attach'
  | 'settle'
  | 'lost'
  | 'recover'
  | 'finish'
  | 'cancel-pending'
  | 'cancel-request'
  | 'cancel-begin'
  | 'cancel-finish'
  | 'exception';

/** What a hook sees right before a guarded write. */
export interface WriteContext {
  jobId: number;
  phase: StepPhase;
  /** The job row as this iteration read it. */
  job: Job;
  /** The probe result the write acts on, when there is one. */
  observed?: ProbeResult;
}

/** Seams for tests (DESIGN.md §8): put a delete, a terminal write or a status change exactly here. */
export interface MonitorHooks {
  /** After the start-up recovery scan listed the non-terminal jobs, before any is handled. */
  afterScan?(jobIds: number[]): void | Promise<void>;
  /** Between a read (and its probe) and the guarded write acting on it. May throw. */
  beforeWrite?(ctx: WriteContext): void | Promise<void>;
}

/** Options of createMonitor(); settings default to the environment (lib/monitor/config). */
export interface MonitorOptions extends Partial<MonitorSettings> {
  db: PrismaClient;
  /** The executor for every job, or a resolver by name (Job.executor / Attempt.executor). */
  executor: Executor | ((name: string) => Executor);
  clock?: Clock;
  hooks?: MonitorHooks;
  /** Data folder for attempt folders (default `$JOBDECK_HOME`). */
  home?: string;
  /** How long start() waits for the re-adopted jobs' first steps (ms, default 5000). */
  startWaitMs?: number;
}

/** Where an injected read failure strikes. */
export type FaultSite = 'job' | 'admission' | 'scan' | 'any';

/** A running (or stopped) monitor. */
export interface Monitor extends MonitorHandle {
  /** Start-up recovery (awaited: call before accepting requests), then the loop. */
  start(): Promise<void>;
  /** Stops the loop and the watches; running attempts keep running. Idempotent. */
  stop(): Promise<void>;
  /** One admission pass plus one step of every admitted non-terminal job, awaited. */
  reconcileNow(): Promise<void>;
  /** One admission pass, awaited (with the steps of the jobs it admitted or failed). */
  admitNow(): Promise<void>;
  /** One serialized step of one job, awaited. */
  step(jobId: number): Promise<void>;
  /** Resolves once no step, admission pass (running or scheduled) or started reap is left. */
  idle(): Promise<void>;
  /** Makes the next database read at `site` fail with `err` (default: a temporary failure). */
  failNextRead(site?: FaultSite, err?: Error): void;
}

type TaskRow = Task & { attempts: Attempt[] };
type JobRow = Job & { tasks: TaskRow[] };

type Next = 'again' | 'idle';

/** Stopping what an ended attempt left behind (see "Leftovers" above). */
interface Reap {
  jobId: number;
  attemptId: number;
  /** Starts the reap (no-op once started). Reaps are noted before the status write, started after it. */
  start(): void;
  started: boolean;
  /** Resolves when the reap finished (never rejects). */
  done: Promise<void>;
}

/**
 * A job with a live exit subscription is stepped by the reconcile pass only once every this many
 * passes (30 s at the default 1 s), as a safety net; the subscription wakes it at once otherwise.
 * Staggered by job id, so 1,000 running jobs cost ~33 steps per pass instead of a burst of 1,000
 * every Nth pass (bench: steady CPU with 1,000 jobs).
 */
const FULL_PASS_EVERY = 30;

/** Waiting jobs an admission pass reads per query from the head of an executor's queue. */
const ADMISSION_PAGE = 64;

interface Entry {
  tail: Promise<void>;
  queued: Promise<void> | null;
  running: boolean;
  done: boolean;
  timer: NodeJS.Timeout | null;
  timerAt: number;
  errors: number;
  transient: number;
  /** Handles known in memory (launched here), by attempt id. */
  handles: Map<number, AttemptHandle>;
  /** First "lost" verdict per attempt id: when, and under which attempt status. */
  lost: Map<number, { at: number; status: string; reason: string }>;
  /** Attempts whose launch threw, by attempt id → reason. */
  launchErrors: Map<number, string>;
  /** When each attempt launched here was handed to its executor (its startedAt: never after its end). */
  launchedAt: Map<number, Date>;
  /** Attempts to launch again (the executor was temporarily unavailable): tries, and not before `at` (clock ms). */
  relaunch: Map<number, { tries: number; at: number }>;
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isUniqueViolation(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { code?: unknown }).code === 'P2002';
}

const JOB_INCLUDE = {
  tasks: { orderBy: { index: 'asc' }, include: { attempts: { orderBy: { number: 'desc' }, take: 1 } } },
} satisfies Prisma.JobInclude;

/**
 * Creates a monitor (see the module comment). Nothing runs until start() (or the test entry
 * points reconcileNow / admitNow / step).
 */
export function createMonitor(opts: MonitorOptions): Monitor {
  return new MonitorImpl(opts);
}

class MonitorImpl implements Monitor {
  private readonly db: PrismaClient;
  private readonly resolve: (name: string) => Executor;
  private readonly clock: Clock;
  private readonly hooks: MonitorHooks;
  private readonly s: MonitorSettings;
  private readonly home: string | undefined;
  private readonly startWaitMs: number;
  private readonly log = logger().child({ subsystem: 'monitor' });

  private readonly entries = new Map<number, Entry>();
  private readonly watches = new Map<number, { jobId: number; unsubscribe: () => void }>();
  /** Reaps of ended attempts' leftovers, noted or running, by attempt id. */
  private readonly reaps = new Map<number, Reap>();
  /** Jobs the admission pass admitted, consumed by their next step. */
  private readonly admitted = new Set<number>();
  /** Admission verdicts "no resource", consumed by the job's next step. */
  private readonly noResource = new Map<number, string>();
  private readonly faults: Array<{ site: FaultSite; err: Error }> = [];

  private started = false;
  private stopped = false;
  private startedAt: number | null = null;
  private tickTimer: NodeJS.Timeout | null = null;
  private admitting: Promise<void> | null = null;
  private admitAgain = false;
  private admitSoon: NodeJS.Immediate | null = null;
  private admitErrors = 0;
  private readonly busListener = (e: StoreEvent) => this.onStoreEvent(e);

  private passes = 0;
  private lastReconcileEnd: number | null = null;
  private lastReconcileDuration: number | null = null;
  private jobsWaiting = 0;
  /** Executors whose queue the last completed admission pass found blocked → their CPU budget. */
  private blockedQueues: Map<string, number> | null = null;
  /**
   * True when the last completed admission pass left no job waiting (every PENDING job it found
   * was admitted or failed as too big) and no job was created since: freed CPUs (a job ending, a
   * reap done) then have nobody to go to, and the pass they would run is skipped (the tick's
   * pass still runs; it also sees jobs another server created). Keeps the end of a job free of
   * an admission pass whose queries, on the embedded database, run on this thread while the
   * job's streams announce the end (bench latency).
   */
  private noneWaiting = false;
  /** 'created' events seen (noneWaiting holds only if none came during the pass). */
  private createdSeen = 0;
  private capacityView: MonitorState['capacity'];
  private counters = { restarts: 0, recoveries: 0, readopted: 0, transientRetries: 0, controllerFailures: 0 };

  constructor(opts: MonitorOptions) {
    this.db = opts.db;
    const ex = opts.executor;
    this.resolve = typeof ex === 'function' ? ex : () => ex;
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.hooks = opts.hooks ?? {};
    const env = monitorSettingsFromEnv();
    this.s = {
      reconcileMs: opts.reconcileMs ?? env.reconcileMs,
      maxRecoveries: opts.maxRecoveries ?? env.maxRecoveries,
      recoveryBackoffMs: opts.recoveryBackoffMs ?? env.recoveryBackoffMs,
      maxRecoveryBackoffMs: opts.maxRecoveryBackoffMs ?? env.maxRecoveryBackoffMs,
      lostConfirmMs: opts.lostConfirmMs ?? (opts.reconcileMs !== undefined ? Math.min(500, opts.reconcileMs) : env.lostConfirmMs),
      launchGraceMs: opts.launchGraceMs ?? env.launchGraceMs,
      startTimeoutMs: opts.startTimeoutMs ?? env.startTimeoutMs,
      cancelGraceMs: opts.cancelGraceMs ?? env.cancelGraceMs,
      leftoverGraceMs: opts.leftoverGraceMs ?? env.leftoverGraceMs,
      capacityCheck: opts.capacityCheck ?? env.capacityCheck,
      exitWatch: opts.exitWatch ?? env.exitWatch,
      maxStepErrors: opts.maxStepErrors ?? env.maxStepErrors,
    };
    this.home = opts.home;
    this.startWaitMs = opts.startWaitMs ?? 5000;
    this.capacityView = { check: this.s.capacityCheck, used: 0, total: 0, byExecutor: {} };
  }

  // ───────────────────────────── lifecycle ─────────────────────────────

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.stopped = false;
    this.startedAt = this.clock.now();
    storeBus().on('change', this.busListener);
    const ids = await this.scanWithRetry();
    this.counters.readopted = ids.length;
    if (ids.length) this.log.info({ jobs: ids.length }, `recovery: re-adopting ${ids.length} non-terminal job(s)`);
    await this.hooks.afterScan?.(ids);
    const first = Promise.all(ids.map((id) => this.kick(id)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([first, new Promise<void>((r) => (timer = setTimeout(r, this.startWaitMs)))]);
    clearTimeout(timer);
    this.scheduleTick(0);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    storeBus().off('change', this.busListener);
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = null;
    if (this.admitSoon) clearImmediate(this.admitSoon);
    for (const w of this.watches.values()) w.unsubscribe();
    this.watches.clear();
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.entries.values()].map((e) => e.tail))
        .then(() => this.admitting)
        .then(() => {
          // Ended attempts' leftovers are stopped even now (running attempts keep running).
          const reaps = [...this.reaps.values()];
          for (const r of reaps) r.start();
          return Promise.all(reaps.map((r) => r.done));
        }),
      new Promise<void>((r) => (timer = setTimeout(r, 5000))),
    ]);
    clearTimeout(timer);
    this.log.info('monitor stopped (running attempts keep running)');
  }

  state(): MonitorState {
    const now = this.clock.now();
    let watched = 0;
    for (const e of this.entries.values()) if (!e.done) watched++;
    return {
      running: this.started && !this.stopped,
      startedAt: this.startedAt === null ? null : new Date(this.startedAt).toISOString(),
      reconcileMs: this.s.reconcileMs,
      lastReconcileAt: this.lastReconcileEnd === null ? null : new Date(this.lastReconcileEnd).toISOString(),
      lastReconcileDurationMs: this.lastReconcileDuration,
      lagMs: this.lastReconcileEnd === null ? null : Math.max(0, now - this.lastReconcileEnd),
      jobsWatched: watched,
      jobsWaiting: this.jobsWaiting,
      attemptsWatched: this.watches.size,
      ...this.counters,
      capacity: this.capacityView,
      memory: processMemory(),
      submits: submitStatementStats(),
    };
  }

  wake(jobId?: number): void {
    if (this.stopped) return;
    if (jobId !== undefined) void this.kick(jobId);
    this.scheduleAdmission();
  }

  failNextRead(site: FaultSite = 'any', err: Error = new TransientDatabaseError()): void {
    this.faults.push({ site, err });
  }

  step(jobId: number): Promise<void> {
    return this.kick(jobId);
  }

  async idle(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const busy = [...this.entries.values()].filter((e) => e.running || e.queued);
      const reaps = [...this.reaps.values()].filter((r) => r.started).map((r) => r.done);
      if (busy.length === 0 && !this.admitting && !this.admitSoon && reaps.length === 0) return;
      // A pass scheduled but not yet begun starts on the next turn (setImmediate).
      const soon = this.admitSoon ? new Promise<void>((r) => setImmediate(r)) : undefined;
      await Promise.all([...busy.map((e) => e.tail), this.admitting, ...reaps, soon]);
    }
  }

  async admitNow(): Promise<void> {
    await this.admission();
  }

  async reconcileNow(): Promise<void> {
    await this.reconcile(true);
  }

  // ───────────────────────────── loop ─────────────────────────────

  private scheduleTick(ms: number): void {
    if (this.stopped) return;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = setTimeout(() => {
      this.tickTimer = null;
      this.reconcile(false).finally(() => this.scheduleTick(this.s.reconcileMs));
    }, ms);
    this.tickTimer.unref?.();
  }

  /** One pass: admission, then a step for every admitted non-terminal job. */
  private async reconcile(awaitSteps: boolean): Promise<void> {
    const t0 = this.clock.now();
    await this.admission();
    let ids: number[];
    try {
      this.consumeFault('scan');
      ids = await this.activeJobIds();
    } catch (err) {
      this.noteError(err, 'reconcile scan');
      return;
    }
    const live = new Set(ids);
    for (const [id, e] of this.entries) {
      if (!live.has(id) && !e.running && !e.queued && !e.timer && !this.admitted.has(id) && !this.noResource.has(id)) {
        this.entries.delete(id);
        this.unwatchJob(id);
      }
    }
    // Jobs whose attempt has a live exit subscription (executor.watch) are woken by it; the pass
    // still steps each of them once every FULL_PASS_EVERY passes (staggered by id) as a safety
    // net. All others every pass.
    const pass = this.passes++;
    const watched = new Set<number>();
    if (!awaitSteps) for (const w of this.watches.values()) watched.add(w.jobId);
    const steps = ids.filter((id) => !watched.has(id) || (id + pass) % FULL_PASS_EVERY === 0).map((id) => this.kick(id));
    if (awaitSteps) await Promise.all(steps);
    const t1 = this.clock.now();
    this.lastReconcileEnd = t1;
    this.lastReconcileDuration = t1 - t0;
  }

  /** Non-terminal jobs that are admitted, or have a cancel request. */
  private async activeJobIds(): Promise<number[]> {
    const rows = await this.db.job.findMany({
      where: {
        status: { notIn: [...JOB_TERMINAL] },
        OR: [{ status: { not: 'PENDING' } }, { cancelRequestedAt: { not: null } }],
      },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    return rows.map((r) => r.id);
  }

  private async scanWithRetry(): Promise<number[]> {
    for (let i = 0; ; i++) {
      try {
        this.consumeFault('scan');
        return await this.activeJobIds();
      } catch (err) {
        if (!isTransientDbError(err) || i >= 5) throw err;
        this.counters.transientRetries++;
        this.log.warn({ err }, 'recovery scan: temporary database failure; retrying');
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** i, 5000)));
      }
    }
  }

  private onStoreEvent(e: StoreEvent): void {
    if (this.stopped) return;
    if (e.type === 'created') {
      this.createdSeen++;
      this.noneWaiting = false;
      if (this.waitsInBlockedQueue(e)) {
        this.jobsWaiting++;
        return;
      }
      return this.scheduleAdmission();
    }
    if (e.type === 'deleted') {
      this.forget(e.jobId);
      return;
    }
    const ev = e.event;
    if (!ev || ev.entity !== 'job') return;
    if (ev.to === 'CANCELLING') void this.kick(e.jobId);
    if (isTerminal('job', ev.to)) this.scheduleAdmission(true);
  }

  /**
   * True when a pass for this new job would decide nothing: the last admission pass (none since,
   * none scheduled or running) found the job's executor queue blocked by an older job that does
   * not fit (no backfill: a younger job waits behind it), the job is not too big for the
   * executor, and it cannot have waited past the start timeout. Anything that frees CPUs or
   * unblocks the queue (a job ending, a cancel, a reap done, a tick) runs a pass of its own.
   * Keeps a stream of submits behind a full machine from costing one admission pass each.
   */
  private waitsInBlockedQueue(e: StoreEvent): boolean {
    const total = e.job ? this.blockedQueues?.get(e.job.executor) : undefined;
    if (!e.job || total === undefined || this.admitting || this.admitSoon || this.s.startTimeoutMs <= 0) return false;
    return e.job.cpus <= total;
  }

  /** Runs an admission pass soon; `freedOnly` (CPUs were freed): not when noneWaiting. */
  private scheduleAdmission(freedOnly = false): void {
    if (this.stopped || this.admitSoon || (freedOnly && this.noneWaiting)) return;
    this.admitSoon = setImmediate(() => {
      this.admitSoon = null;
      void this.admission();
    });
  }

  // ───────────────────────────── admission ─────────────────────────────

  /** Runs admission passes until no new request came in meanwhile (one at a time). */
  private admission(): Promise<void> {
    if (this.admitting) {
      this.admitAgain = true;
      return this.admitting;
    }
    const run = async () => {
      do {
        this.admitAgain = false;
        try {
          await this.admitOnce();
          this.admitErrors = 0;
        } catch (err) {
          this.noteError(err, 'admission');
          this.admitErrors++;
          break; // the next tick retries
        }
      } while (this.admitAgain && !this.stopped);
    };
    this.admitting = run().finally(() => (this.admitting = null));
    return this.admitting;
  }

  private async admitOnce(): Promise<void> {
    if (this.stopped) return;
    // Verdicts of the previous pass were consumed (or their steps failed): decide afresh.
    this.admitted.clear();
    this.noResource.clear();
    // Known again only when this pass completes (a failed pass leaves it unknown).
    this.blockedQueues = null;
    this.noneWaiting = false;
    const createdBefore = this.createdSeen;
    this.consumeFault('admission');
    // One aggregate answers the CPUs held per executor and a summary of each queue; then only the
    // waiting jobs admission can decide on are read (lib/jobs/capacity planAdmissionReads) — not
    // every PENDING job on every pass (a pass runs after each submit).
    const groups = await this.db.job.groupBy({
      by: ['executor', 'status'],
      where: { OR: [{ status: { in: [...ACTIVE_JOB_STATUSES] } }, { status: 'PENDING', cancelRequestedAt: null }] },
      _sum: { cpus: true },
      _count: { _all: true },
      _min: { cpus: true, submittedAt: true },
      _max: { cpus: true },
    });
    const used: Record<string, number> = {};
    const queues: QueueSummary[] = [];
    let waitingCount = 0;
    for (const g of groups) {
      if (g.status !== 'PENDING') {
        used[g.executor] = (used[g.executor] ?? 0) + (g._sum.cpus ?? 0);
        continue;
      }
      waitingCount += g._count._all;
      queues.push({
        executor: g.executor,
        count: g._count._all,
        minCpus: g._min.cpus ?? 0,
        maxCpus: g._max.cpus ?? 0,
        oldestSubmittedAtMs: g._min.submittedAt?.getTime() ?? 0,
      });
    }
    // A job whose leftovers are still being stopped keeps its CPUs until they are gone.
    const reaping = [...new Set([...this.reaps.values()].map((r) => r.jobId))];
    if (reaping.length > 0 && this.s.capacityCheck) {
      const rows = await this.db.job.findMany({
        where: { id: { in: reaping }, status: { notIn: [...ACTIVE_JOB_STATUSES] } },
        select: { cpus: true, executor: true },
      });
      for (const r of rows) used[r.executor] = (used[r.executor] ?? 0) + r.cpus;
    }
    const names = new Set<string>([...queues.map((q) => q.executor), ...Object.keys(used), 'local']);
    const total: Record<string, number> = {};
    for (const n of names) {
      try {
        total[n] = this.resolve(n).capacity().cpus;
      } catch {
        /* unknown executor: its jobs wait (see planAdmission) */
      }
    }
    const nowMs = this.clock.now();
    const common = { used, total, nowMs, startTimeoutMs: this.s.startTimeoutMs, enabled: this.s.capacityCheck };
    const waiting = new Map<number, WaitingJob>();
    for (const queue of queues) {
      const reads = planAdmissionReads({ ...common, queue });
      if (reads) for (const j of await this.readWaiting(queue.executor, reads, common)) waiting.set(j.id, j);
    }
    const plan = planAdmission({ ...common, waiting: [...waiting.values()] });
    const byExecutor: Record<string, { used: number; total: number }> = {};
    for (const n of Object.keys(total)) byExecutor[n] = { used: plan.used[n] ?? 0, total: total[n] };
    this.capacityView = {
      check: this.s.capacityCheck,
      used: Object.values(byExecutor).reduce((a, b) => a + b.used, 0),
      total: Object.values(byExecutor).reduce((a, b) => a + b.total, 0),
      byExecutor,
    };
    // The jobs not read all wait.
    this.jobsWaiting = Math.max(0, waitingCount - plan.admit.length - plan.noResource.length);
    // Admitted and too-big jobs leave PENDING through this pass's steps: nobody is left waiting.
    this.noneWaiting = this.jobsWaiting === 0 && this.createdSeen === createdBefore;
    // A queue is blocked when some of its jobs stay waiting (with the check on, a job of an
    // available executor waits only at or behind the first job that does not fit).
    const decided = new Map<string, number>();
    for (const id of [...plan.admit, ...plan.noResource.map((n) => n.id)]) {
      const ex = waiting.get(id)!.executor;
      decided.set(ex, (decided.get(ex) ?? 0) + 1);
    }
    this.blockedQueues = new Map();
    if (this.s.capacityCheck) {
      for (const q of queues) if (total[q.executor] !== undefined && q.count > (decided.get(q.executor) ?? 0)) this.blockedQueues.set(q.executor, total[q.executor]);
    }
    if (plan.admit.length === 0 && plan.noResource.length === 0) return;
    for (const n of plan.noResource) this.noResource.set(n.id, n.reason);
    for (const id of plan.admit) this.admitted.add(id);
    await Promise.all([...plan.admit, ...plan.noResource.map((n) => n.id)].map((id) => this.kick(id)));
  }

  /**
   * The waiting jobs of one executor that `reads` names (lib/jobs/capacity QueueReads), in id
   * order, deduplicated: the head of the queue is read in pages of ADMISSION_PAGE until
   * planAdmission() finds it blocked (or the queue ends).
   */
  private async readWaiting(executor: string, reads: QueueReads, common: Omit<AdmissionInput, 'waiting'>): Promise<WaitingJob[]> {
    const base = { status: 'PENDING' as const, cancelRequestedAt: null, executor };
    const select = { id: true, cpus: true, executor: true, submittedAt: true } as const;
    const toWaiting = (r: { id: number; cpus: number; executor: string; submittedAt: Date }): WaitingJob => ({
      id: r.id,
      cpus: r.cpus,
      executor: r.executor,
      submittedAtMs: r.submittedAt.getTime(),
    });
    if (reads.all) return (await this.db.job.findMany({ where: base, select, orderBy: { id: 'asc' } })).map(toWaiting);
    const out = new Map<number, WaitingJob>();
    if (reads.head) {
      const head: WaitingJob[] = [];
      for (;;) {
        const last = head.length ? head[head.length - 1].id : 0;
        const page = await this.db.job.findMany({ where: { ...base, id: { gt: last } }, select, orderBy: { id: 'asc' }, take: ADMISSION_PAGE });
        head.push(...page.map(toWaiting));
        if (page.length < ADMISSION_PAGE || planAdmission({ ...common, waiting: head }).blocked.includes(executor)) break;
      }
      for (const j of head) out.set(j.id, j);
    }
    const also: Prisma.JobWhereInput[] = [];
    if (reads.cpusAbove !== null) also.push({ cpus: { gt: reads.cpusAbove } });
    if (reads.submittedAtOrBefore !== null) also.push({ submittedAt: { lte: new Date(reads.submittedAtOrBefore) } });
    if (also.length > 0) {
      for (const r of await this.db.job.findMany({ where: { ...base, OR: also }, select, orderBy: { id: 'asc' } })) out.set(r.id, toWaiting(r));
    }
    return [...out.values()];
  }

  // ───────────────────────────── per-job serialization ─────────────────────────────

  private entry(id: number): Entry {
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
  private kick(id: number): Promise<void> {
    const e = this.entry(id);
    if (e.queued) return e.queued;
    const p = (async () => {
      await e.tail;
      e.queued = null;
      if (this.stopped) return;
      e.running = true;
      try {
        await this.safeStep(id, e);
      } finally {
        e.running = false;
        // Whatever happened, an attempt seen ended has its leftovers stopped.
        this.startReaps(id);
      }
    })();
    e.queued = p;
    e.tail = p.catch(() => undefined);
    return p;
  }

  /** Runs the job's step again in `ms` (keeps the earliest pending timer). */
  private later(id: number, ms: number): void {
    if (this.stopped) return;
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
  private forget(id: number): void {
    this.startReaps(id);
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
    this.admitted.delete(id);
    this.noResource.delete(id);
    this.unwatchJob(id);
  }

  private unwatchJob(id: number): void {
    for (const [attemptId, w] of this.watches) {
      if (w.jobId === id) {
        w.unsubscribe();
        this.watches.delete(attemptId);
      }
    }
  }

  private unwatchAttempt(attemptId: number): void {
    const w = this.watches.get(attemptId);
    if (w) {
      w.unsubscribe();
      this.watches.delete(attemptId);
    }
  }

  private consumeFault(site: FaultSite): void {
    const i = this.faults.findIndex((f) => f.site === site || f.site === 'any');
    if (i >= 0) {
      const [f] = this.faults.splice(i, 1);
      throw f.err;
    }
  }

  private noteError(err: unknown, where: string): void {
    if (this.stopped) return;
    if (isTransientError(err)) {
      this.counters.transientRetries++;
      this.log.warn({ err: errMessage(err) }, `${where}: temporary failure (database or executor); retrying`);
    } else {
      this.log.error({ err }, `${where} failed`);
    }
  }

  // ───────────────────────────── the step ─────────────────────────────

  private async safeStep(id: number, e: Entry): Promise<void> {
    try {
      await this.runStep(id, e);
      e.errors = 0;
      e.transient = 0;
    } catch (err) {
      if (this.stopped) return;
      if (isTransientError(err)) {
        // Rule 6: a temporary database (or executor backend) failure is retried; it never fails the job.
        e.transient++;
        this.counters.transientRetries++;
        const delay = Math.min(this.s.reconcileMs * 2 ** Math.min(e.transient - 1, 10), 30_000);
        this.log.warn({ jobId: id, err: errMessage(err), retryInMs: delay }, `job ${id}: temporary failure; retrying in ${delay} ms`);
        this.later(id, delay);
        return;
      }
      e.errors++;
      if (e.errors < this.s.maxStepErrors) {
        const delay = Math.min(this.s.reconcileMs * 2 ** (e.errors - 1), 30_000);
        this.log.error({ jobId: id, err, errors: e.errors, retryInMs: delay }, `job ${id}: monitor step failed (${e.errors} of ${this.s.maxStepErrors}); retrying`);
        this.later(id, delay);
        return;
      }
      try {
        await this.exceptionPath(id, e, err);
        e.errors = 0;
      } catch (err2) {
        if (isTransientDbError(err2)) this.counters.transientRetries++;
        this.log.error({ jobId: id, err: err2 }, `job ${id}: exception path failed; retrying`);
        this.later(id, Math.min(this.s.reconcileMs * 4, 30_000));
      }
    }
  }

  private readJob(id: number): Promise<JobRow | null> {
    this.consumeFault('job');
    return this.db.job.findUnique({ where: { id }, include: JOB_INCLUDE });
  }

  private async runStep(id: number, e: Entry): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (this.stopped) return;
      const job = await this.readJob(id);
      // Rule 2: the row is gone (deleted) — stop; never re-create it.
      if (!job) {
        if (!e.done) this.log.info({ jobId: id }, `job ${id}: row gone; monitoring stopped`);
        this.forget(id);
        return;
      }
      // Rule 3: terminal — keep it as it is.
      if (isTerminal('job', job.status)) {
        this.forget(id);
        return;
      }
      e.done = false;
      const next = await this.advance(job, e);
      if (next === 'idle') return;
    }
    this.log.warn({ jobId: id }, `job ${id}: step did not settle after 100 iterations; continuing later`);
    this.later(id, this.s.reconcileMs);
  }

  /** Calls the beforeWrite hook, then the write. */
  private async guarded<R>(ctx: WriteContext, write: () => Promise<R>): Promise<R> {
    await this.hooks.beforeWrite?.(ctx);
    return write();
  }

  /** Logs a lost write; the caller re-reads (rule 4: continue with the fresh row). */
  private outcome(job: Job, phase: StepPhase, res: BatchOutcome | TransitionOutcome<unknown>): Next {
    if (res.outcome !== 'applied') {
      const what = res.reason === 'gone' ? 'row gone' : `${res.reason} (now ${(res as { row: { status: string } }).row.status})`;
      this.log.info({ jobId: job.id, phase, reason: res.reason }, `job ${job.id}: ${phase} write lost: ${what}; re-reading`);
    }
    return 'again';
  }

  private async advance(job: JobRow, e: Entry): Promise<Next> {
    if (job.status === 'CANCELLING' || job.cancelRequestedAt !== null) return this.advanceCancel(job, e);
    if (job.status === 'PENDING') return this.advancePending(job, e);

    const cur = job.tasks.find((t) => t.status !== 'SUCCEEDED');
    if (!cur || isTerminal('task', cur.status)) return this.finishJob(job, 'finish');
    if (cur.status === 'PENDING') return this.launchTask(job, cur, e, 'launch');
    if (cur.status === 'CANCELLING') {
      // A task cancelling without a cancel request on the job: make the job follow it.
      return this.writeMany(job, 'cancel-request', [this.jobTo(job, 'CANCELLING', 'a task is cancelling')]);
    }
    const att = cur.attempts[0];
    if (cur.status === 'RECOVERING') return this.advanceRecovering(job, cur, att, e);
    // cur is STARTING or RUNNING.
    if (!att) throw new Error(`job ${job.id} task ${cur.index} is ${cur.status} without any attempt`);
    if (isTerminal('attempt', att.status)) return this.settleRecorded(job, cur, att, e);
    if (att.status === 'CANCELLING') {
      return this.writeMany(job, 'cancel-request', [this.jobTo(job, 'CANCELLING', 'an attempt is cancelling')]);
    }
    return this.watchAttempt(job, cur, att, e);
  }

  // ───────────── PENDING: admission verdicts ─────────────

  private async advancePending(job: JobRow, e: Entry): Promise<Next> {
    const verdict = this.noResource.get(job.id);
    // Rule 5: a verdict is used by this iteration only; if the write loses, it is gone.
    this.noResource.delete(job.id);
    if (verdict !== undefined) {
      const tr: AnyTransition[] = [];
      const after = new Map<number, TaskStatus>();
      for (const t of job.tasks) {
        if (t.status !== 'PENDING') continue;
        const to: TaskStatus = t.index === job.tasks[0].index ? 'FAILED_NO_RESOURCE' : 'CANCELLED';
        after.set(t.id, to);
        tr.push({ entity: 'task', id: t.id, from: 'PENDING', to, reason: to === 'CANCELLED' ? 'the job could not start' : verdict, data: { endedAt: this.now() } });
      }
      const jt = this.jobTransition(job, after, verdict);
      if (jt) tr.push(jt);
      return this.writeMany(job, 'no-resource', tr);
    }
    if (this.admitted.has(job.id)) {
      this.admitted.delete(job.id);
      const cur = job.tasks.find((t) => t.status !== 'SUCCEEDED');
      if (!cur) return this.finishJob(job, 'finish');
      if (cur.status !== 'PENDING') throw new Error(`job ${job.id} is PENDING but task ${cur.index} is ${cur.status}`);
      return this.launchTask(job, cur, e, 'admit');
    }
    void e;
    return 'idle';
  }

  // ───────────── launching ─────────────

  /** Starts the first attempt of a PENDING task (or succeeds it at once when it has nothing to run). */
  private async launchTask(job: JobRow, task: TaskRow, e: Entry, phase: StepPhase): Promise<Next> {
    const spec = readTaskSpec(task.spec, job.cpus);
    if (spec.run === null && spec.setup === null) {
      const after = new Map<number, TaskStatus>([[task.id, 'SUCCEEDED']]);
      const tr: AnyTransition[] = [
        { entity: 'task', id: task.id, from: 'PENDING', to: 'SUCCEEDED', reason: 'nothing to run', data: { startedAt: this.now(), endedAt: this.now() } },
      ];
      const jt = this.jobTransition(job, after, `task ${task.index} had nothing to run`);
      if (jt) tr.push(jt);
      return this.writeMany(job, 'nothing-to-run', tr);
    }
    return this.newAttempt(job, task, e, phase, { number: 1, cause: 'first', taskFrom: 'PENDING', reason: phase === 'admit' ? 'admitted' : `task ${task.index} starts` });
  }

  /**
   * Creates attempt `number` of `task` (guarded, with `before` writes and the job's move to
   * STARTING in the same transaction) and launches it. The RUNNING write happens in the next
   * iteration, after a fresh probe.
   */
  private async newAttempt(
    job: JobRow,
    task: TaskRow,
    e: Entry,
    phase: StepPhase,
    a: {
      number: number;
      cause: 'first' | 'restart' | 'recovery';
      taskFrom: TaskStatus;
      reason: string;
      taskData?: Transition<'task'>['data'];
      before?: AnyTransition[];
      observed?: ProbeResult;
      counted?: 'restart';
    },
  ): Promise<Next> {
    const spec = readTaskSpec(task.spec, job.cpus);
    const logPath = attemptLogPath(job.id, task.index, a.number, this.home);
    const after = new Map<number, TaskStatus>([[task.id, 'STARTING']]);
    const restartsAfter = new Map<number, number>();
    if (a.counted === 'restart') restartsAfter.set(task.id, task.restarts + 1);
    const jt = this.jobTransition(job, after, a.reason, { currentTask: task.index }, restartsAfter);
    let res: TransitionOutcome<Attempt>;
    try {
      res = await this.guarded({ jobId: job.id, phase, job, observed: a.observed }, () =>
        startAttempt(this.db, {
          taskId: task.id,
          number: a.number,
          cause: a.cause,
          executor: job.executor,
          logPath,
          taskFrom: a.taskFrom,
          reason: a.reason,
          taskData: a.taskData,
          before: a.before,
          after: jt ? [jt] : [],
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err)) {
        this.log.info({ jobId: job.id }, `job ${job.id}: attempt ${a.number} of task ${task.index} already exists; re-reading`);
        return 'again';
      }
      throw err;
    }
    this.startReaps(job.id);
    if (res.outcome !== 'applied') return this.outcome(job, phase, res);
    if (a.cause === 'restart') this.counters.restarts++;
    await this.launchAttempt(job, task, res.row, e);
    return 'again';
  }

  /**
   * Starts an attempt row (STARTING) on its executor. A launch that throws is a lost attempt
   * (recovery, not the user's restart) — unless the executor says its backend is only
   * temporarily unavailable (`transient`, e.g. the Slurm controller is down): then the same
   * attempt is launched again after a backoff, spending no budget (DESIGN.md §3 rule 6).
   */
  private async launchAttempt(job: Job, task: Task, attempt: Attempt, e: Entry): Promise<void> {
    const spec = readTaskSpec(task.spec, job.cpus);
    const logPath = attempt.logPath ?? attemptLogPath(job.id, task.index, attempt.number, this.home);
    const executor = this.resolve(attempt.executor);
    // Nothing of an earlier attempt of this job may run beside the new one.
    await this.awaitReaps(job.id);
    try {
      e.launchedAt.set(attempt.id, this.now());
      const handle = await executor.launch({
        jobId: job.id,
        taskIndex: task.index,
        attempt: attempt.number,
        setup: spec.setup,
        run: spec.run,
        envs: spec.envs,
        workdir: spec.workdir,
        cpus: spec.cpus,
        attemptDir: path.dirname(logPath),
        logPath,
      });
      e.relaunch.delete(attempt.id);
      e.handles.set(attempt.id, handle);
      this.ensureWatch(job.id, attempt.id, executor, handle);
    } catch (err) {
      if (isTransientExecutorError(err)) {
        const tries = (e.relaunch.get(attempt.id)?.tries ?? 0) + 1;
        const delay = Math.min(this.s.reconcileMs * 2 ** Math.min(tries - 1, 10), 60_000);
        e.relaunch.set(attempt.id, { tries, at: this.clock.now() + delay });
        this.counters.transientRetries++;
        this.log.warn({ jobId: job.id, task: task.index, attempt: attempt.number, err: errMessage(err), retryInMs: delay }, `job ${job.id}: executor unavailable; launching again in ${delay} ms`);
        this.later(job.id, delay);
        return;
      }
      // The executor could not start it: a lost attempt (recovery, not the user's restart).
      e.relaunch.delete(attempt.id);
      const reason = `launch failed: ${errMessage(err)}`;
      this.log.warn({ jobId: job.id, task: task.index, attempt: attempt.number, err: errMessage(err) }, `job ${job.id}: ${reason}`);
      e.launchErrors.set(attempt.id, reason);
    }
  }

  private ensureWatch(jobId: number, attemptId: number, executor: Executor, handle: AttemptHandle): void {
    if (this.stopped || !this.s.exitWatch || this.watches.has(attemptId)) return;
    try {
      const unsubscribe = executor.watch(handle, () => {
        // A hint only: the step probes again (the exit file is the truth, rule 5).
        this.unwatchAttempt(attemptId);
        void this.kick(jobId);
      });
      this.watches.set(attemptId, { jobId, unsubscribe });
    } catch (err) {
      this.log.warn({ jobId, attemptId, err: errMessage(err) }, 'executor.watch failed; relying on the reconcile pass');
    }
  }

  // ───────────── leftovers of ended attempts ─────────────

  /**
   * Notes that `att` ended: what it left behind is stopped once startReaps() runs (right after
   * the status write). Its job's CPUs count as used until then (admission).
   */
  private noteEnded(job: Job, task: Task, att: Attempt, e: Entry): void {
    if (this.reaps.has(att.id)) return;
    let handle: AttemptHandle | null;
    let executor: Executor;
    try {
      handle = this.handleFor(job, task, att, e);
      executor = this.resolve(att.executor);
    } catch (err) {
      this.log.warn({ jobId: job.id, attemptId: att.id, err: errMessage(err) }, `job ${job.id}: cannot look for leftovers of attempt ${att.number}`);
      return;
    }
    if (!handle) return;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const rec: Reap = {
      jobId: job.id,
      attemptId: att.id,
      started: false,
      start: () => {
        if (rec.started) return;
        rec.started = true;
        open();
      },
      done: Promise.resolve(),
    };
    const h = handle;
    rec.done = gate
      .then(async () => {
        const t0 = Date.now();
        try {
          await executor.cancel(h, { graceMs: this.s.leftoverGraceMs });
        } catch (err) {
          this.log.error({ jobId: job.id, task: task.index, attempt: att.number, err: errMessage(err) }, `job ${job.id}: could not stop what attempt ${att.number} of task ${task.index} left running`);
          return;
        }
        this.log.debug({ jobId: job.id, task: task.index, attempt: att.number, ms: Date.now() - t0 }, `job ${job.id}: nothing of attempt ${att.number} of task ${task.index} is left`);
      })
      .finally(() => {
        if (this.reaps.get(att.id) === rec) this.reaps.delete(att.id);
        // Its CPUs are free now.
        this.scheduleAdmission(true);
      });
    this.reaps.set(att.id, rec);
  }

  /** Starts the noted reaps of the job (in the background; tracked in `reaps`). */
  private startReaps(jobId: number): void {
    for (const r of this.reaps.values()) if (r.jobId === jobId) r.start();
  }

  /** Starts and awaits every reap of the job: called before any launch of the job. */
  private async awaitReaps(jobId: number): Promise<void> {
    const mine = [...this.reaps.values()].filter((r) => r.jobId === jobId);
    if (mine.length === 0) return;
    for (const r of mine) r.start();
    await Promise.all(mine.map((r) => r.done));
  }

  /** The attempt's handle: launched here (memory), recorded (row), or the executor's own copy. */
  private handleFor(job: Job, task: Task, att: Attempt, e: Entry): AttemptHandle | null {
    const mem = e.handles.get(att.id);
    if (mem) return mem;
    const dir = att.logPath ? path.dirname(att.logPath) : path.dirname(attemptLogPath(job.id, task.index, att.number, this.home));
    if (att.executorRef) {
      return { executor: att.executor, ref: att.executorRef, pid: att.pid, pidStartTime: att.pidStartTime, attemptDir: dir };
    }
    // Crash between the launch and the RUNNING write: the executor's own record, if it keeps one.
    return this.resolve(att.executor).findHandle?.(dir) ?? null;
  }

  // ───────────── watching a STARTING / RUNNING attempt ─────────────

  private async watchAttempt(job: JobRow, cur: TaskRow, att: Attempt, e: Entry): Promise<Next> {
    const relaunch = e.relaunch.get(att.id);
    if (relaunch && att.status === 'STARTING' && !e.handles.has(att.id)) {
      if (this.clock.now() < relaunch.at) return 'idle';
      await this.launchAttempt(job, cur, att, e);
      return 'again';
    }
    const launchError = e.launchErrors.get(att.id);
    if (launchError !== undefined) {
      e.launchErrors.delete(att.id);
      return this.lostAttempt(job, cur, att, e, launchError, { state: 'lost', reason: launchError });
    }
    const handle = this.handleFor(job, cur, att, e);
    if (!handle && att.status === 'STARTING' && !e.launchedAt.has(att.id)) {
      // Not launched here, no handle anywhere yet: another server on this database may be inside
      // its executor's launch right now. Only an attempt older than the launch grace is "never
      // launched". createdAt is the database's wall clock, hence Date.now() (not the test clock).
      const age = Date.now() - att.createdAt.getTime();
      if (age < this.s.launchGraceMs) {
        this.later(job.id, Math.min(this.s.launchGraceMs - age, this.s.reconcileMs));
        return 'idle';
      }
    }
    const executor = this.resolve(att.executor);
    const observed: ProbeResult = handle ? await executor.probe(handle) : { state: 'lost', reason: 'never launched: no executor handle recorded' };

    if (observed.state === 'lost') {
      const prev = e.lost.get(att.id);
      const now = this.clock.now();
      if (!prev || prev.status !== att.status) {
        // One missed probe is never believed: look again later.
        e.lost.set(att.id, { at: now, status: att.status, reason: observed.reason });
        this.log.info({ jobId: job.id, task: cur.index, attempt: att.number, reason: observed.reason }, `job ${job.id}: attempt looks lost (${observed.reason}); probing again`);
        this.later(job.id, this.s.lostConfirmMs);
        return 'idle';
      }
      if (now - prev.at < this.s.lostConfirmMs) {
        this.later(job.id, prev.at + this.s.lostConfirmMs - now);
        return 'idle';
      }
      return this.lostAttempt(job, cur, att, e, observed.reason, observed);
    }
    e.lost.delete(att.id);
    if (handle) this.ensureWatch(job.id, att.id, executor, handle);

    // Normalize first: the attempt, its task and the job say RUNNING (recording the handle).
    if (att.status === 'STARTING' || cur.status === 'STARTING' || job.status !== 'RUNNING') {
      const tr: AnyTransition[] = [];
      const after = new Map<number, TaskStatus>();
      const reattached = !e.handles.has(att.id);
      if (att.status === 'STARTING') {
        tr.push({
          entity: 'attempt',
          id: att.id,
          from: 'STARTING',
          to: 'RUNNING',
          reason: reattached ? 'found running after a restart of jobdeck' : null,
          data: { executorRef: handle!.ref, pid: handle!.pid ?? null, pidStartTime: handle!.pidStartTime ?? null, startedAt: att.startedAt ?? e.launchedAt.get(att.id) ?? this.now() },
        });
      }
      if (cur.status === 'STARTING') {
        tr.push({ entity: 'task', id: cur.id, from: 'STARTING', to: 'RUNNING', data: cur.startedAt ? {} : { startedAt: e.launchedAt.get(att.id) ?? this.now() } });
        after.set(cur.id, 'RUNNING');
      }
      const jt = this.jobTransition(job, after, null);
      if (jt) tr.push(jt);
      if (tr.length > 0) return this.writeMany(job, 'attach', tr, observed);
    }
    if (observed.state === 'running') return 'idle';
    return this.settleExit(job, cur, att, e, observed);
  }

  /** The attempt ended with a recorded exit status (it is RUNNING in the row). */
  private async settleExit(job: JobRow, cur: TaskRow, att: Attempt, e: Entry, observed: Extract<ProbeResult, { state: 'exited' }>): Promise<Next> {
    const status = classifyExit(observed.phase, observed.exitCode);
    const endReason = observed.reason ?? (status === 'SUCCEEDED' ? null : `${observed.phase} exited with code ${observed.exitCode}`);
    const endAttempt: AnyTransition = {
      entity: 'attempt',
      id: att.id,
      from: att.status as AttemptStatus,
      to: status,
      reason: endReason,
      data: { exitCode: observed.exitCode, endedAt: observed.endedAt },
    };
    this.unwatchAttempt(att.id);
    this.noteEnded(job, cur, att, e);
    return this.afterEnd(job, cur, att, e, status, observed.exitCode, observed.endedAt, endAttempt, observed);
  }

  /** The task's latest attempt is already terminal in the row (a write that ended it alone). */
  private async settleRecorded(job: JobRow, cur: TaskRow, att: Attempt, e: Entry): Promise<Next> {
    const st = att.status as AttemptStatus;
    // Ended in an earlier step (or before a restart of jobdeck): make sure nothing of it is left.
    this.noteEnded(job, cur, att, e);
    if (st === 'SUCCEEDED' || st === 'FAILED' || st === 'FAILED_SETUP') {
      return this.afterEnd(job, cur, att, e, st, att.exitCode, att.endedAt ?? this.now(), null);
    }
    if (st === 'LOST') return this.lostAttempt(job, cur, att, e, att.statusReason ?? 'attempt lost', undefined, true);
    // CANCELLED without a cancel request on the job: the task and job end CANCELLED.
    const after = new Map<number, TaskStatus>([[cur.id, 'CANCELLED']]);
    const tr: AnyTransition[] = [{ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'CANCELLED', reason: 'its attempt was cancelled', data: { endedAt: this.now() } }];
    tr.push(...this.cancelLater(job, cur.index, after, 'an earlier task was cancelled'));
    const jt = this.jobTransition(job, after, 'cancelled');
    if (jt) tr.push(jt);
    return this.writeMany(job, 'settle', tr);
  }

  /**
   * After an attempt ended SUCCEEDED / FAILED / FAILED_SETUP: next task, restart, or the job's
   * end (rules 9–10). `endAttempt` is the attempt's own write (null when already recorded).
   */
  private async afterEnd(
    job: JobRow,
    cur: TaskRow,
    att: Attempt,
    e: Entry,
    status: 'SUCCEEDED' | 'FAILED' | 'FAILED_SETUP',
    exitCode: number | null,
    endedAt: Date,
    endAttempt: AnyTransition | null,
    observed?: ProbeResult,
  ): Promise<Next> {
    const pre = endAttempt ? [endAttempt] : [];
    if (status === 'SUCCEEDED') {
      const after = new Map<number, TaskStatus>([[cur.id, 'SUCCEEDED']]);
      const tr: AnyTransition[] = [...pre, { entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'SUCCEEDED', reason: null, data: { exitCode, endedAt } }];
      const last = job.tasks[job.tasks.length - 1].id === cur.id;
      const jt = this.jobTransition(job, after, last ? 'all tasks succeeded' : `task ${cur.index} succeeded`);
      if (jt) tr.push(jt);
      return this.writeMany(job, 'settle', tr, observed);
    }
    const spec = readTaskSpec(cur.spec, job.cpus);
    const decision = decideRestart({ status, exitCode }, cur.restarts, spec);
    if (decision.action === 'restart') {
      if (cur.status !== 'RUNNING') {
        // Only a RUNNING task restarts (RUNNING → STARTING); normalize first.
        const tr: AnyTransition[] = [{ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'RUNNING' }];
        return this.writeMany(job, 'attach', tr, observed);
      }
      return this.newAttempt(job, cur, e, 'settle', {
        number: att.number + 1,
        cause: 'restart',
        taskFrom: 'RUNNING',
        reason: `task ${cur.index}: ${decision.reason}`,
        taskData: { exitCode, ...(decision.counted ? { restarts: cur.restarts + 1 } : {}) },
        before: pre,
        observed,
        counted: decision.counted ? 'restart' : undefined,
      });
    }
    const after = new Map<number, TaskStatus>([[cur.id, decision.status]]);
    const tr: AnyTransition[] = [...pre, { entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: decision.status, reason: decision.reason, data: { exitCode, endedAt } }];
    tr.push(...this.cancelLater(job, cur.index, after, `task ${cur.index} failed`));
    const jt = this.jobTransition(job, after, `task ${cur.index}: ${decision.reason}`);
    if (jt) tr.push(jt);
    return this.writeMany(job, 'settle', tr, observed);
  }

  // ───────────── lost attempts and recovery ─────────────

  /** A confirmed lost attempt: recovery (bounded, with backoff) or FAILED_CONTROLLER. */
  private async lostAttempt(job: JobRow, cur: TaskRow, att: Attempt, e: Entry, reason: string, observed?: ProbeResult, recorded = false): Promise<Next> {
    e.lost.delete(att.id);
    this.unwatchAttempt(att.id);
    // The wrapper is gone but what it started may not be (kill -9 of the wrapper, OOM killer).
    this.noteEnded(job, cur, att, e);
    const policy: RecoveryPolicy = { maxRecoveries: this.s.maxRecoveries, backoffMs: this.s.recoveryBackoffMs, maxBackoffMs: this.s.maxRecoveryBackoffMs };
    const decision = decideRecovery(reason, cur.recoveries, policy);
    const tr: AnyTransition[] = [];
    if (!recorded) tr.push({ entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: 'LOST', reason, data: { endedAt: this.now() } });
    const after = new Map<number, TaskStatus>();
    const recoveriesAfter = new Map<number, number>();
    if (decision.action === 'recover') {
      after.set(cur.id, 'RECOVERING');
      recoveriesAfter.set(cur.id, cur.recoveries + 1);
      tr.push({ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'RECOVERING', reason: decision.reason, data: { recoveries: cur.recoveries + 1 } });
    } else {
      after.set(cur.id, 'FAILED_CONTROLLER');
      tr.push({ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'FAILED_CONTROLLER', reason: decision.reason, data: { endedAt: this.now() } });
      tr.push(...this.cancelLater(job, cur.index, after, `task ${cur.index} could not be kept running`));
    }
    const jt = this.jobTransition(job, after, `task ${cur.index}: ${decision.reason}`, {}, undefined, recoveriesAfter);
    if (jt) tr.push(jt);
    const next = await this.writeMany(job, 'lost', tr, observed, () => {
      if (decision.action === 'recover') this.counters.recoveries++;
    });
    if (decision.action === 'recover') this.later(job.id, decision.delayMs);
    return next;
  }

  /** Task RECOVERING: after the backoff, a new attempt with cause "recovery". */
  private async advanceRecovering(job: JobRow, cur: TaskRow, att: Attempt | undefined, e: Entry): Promise<Next> {
    if (att && !isTerminal('attempt', att.status)) {
      // An attempt still open under a RECOVERING task: settle it as lost first.
      this.noteEnded(job, cur, att, e);
      return this.writeMany(job, 'lost', [{ entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: 'LOST', reason: 'its task is recovering', data: { endedAt: this.now() } }]);
    }
    const n = Math.max(1, cur.recoveries);
    const due = (att?.endedAt?.getTime() ?? this.clock.now()) + recoveryDelayMs(n, { backoffMs: this.s.recoveryBackoffMs, maxBackoffMs: this.s.maxRecoveryBackoffMs });
    const now = this.clock.now();
    if (now < due) {
      this.later(job.id, due - now);
      return 'idle';
    }
    return this.newAttempt(job, cur, e, 'recover', {
      number: (att?.number ?? 0) + 1,
      cause: 'recovery',
      taskFrom: 'RECOVERING',
      reason: `task ${cur.index}: recovery ${cur.recoveries}`,
    });
  }

  // ───────────── the job's end ─────────────

  /** The current task is terminal (or all succeeded): later tasks CANCELLED, the job as derived. */
  private async finishJob(job: JobRow, phase: StepPhase): Promise<Next> {
    const cur = job.tasks.find((t) => t.status !== 'SUCCEEDED');
    const after = new Map<number, TaskStatus>();
    const tr: AnyTransition[] = cur ? this.cancelLater(job, cur.index, after, `task ${cur.index} ended ${cur.status}`) : [];
    const jt = this.jobTransition(job, after, cur ? `task ${cur.index} ended ${cur.status}` : 'all tasks succeeded');
    if (jt) tr.push(jt);
    if (tr.length === 0) throw new Error(`job ${job.id} is ${job.status} but its tasks say ${deriveJobStatus(job.tasks.map((t) => ({ index: t.index, status: t.status as TaskStatus })))}`);
    return this.writeMany(job, phase, tr);
  }

  /** Writes for every PENDING task after `index` → CANCELLED (never started). */
  private cancelLater(job: JobRow, index: number, after: Map<number, TaskStatus>, reason: string): AnyTransition[] {
    const tr: AnyTransition[] = [];
    for (const t of job.tasks) {
      if (t.index > index && t.status === 'PENDING') {
        after.set(t.id, 'CANCELLED');
        tr.push({ entity: 'task', id: t.id, from: 'PENDING', to: 'CANCELLED', reason });
      }
    }
    return tr;
  }

  // ───────────── cancel ─────────────

  private async advanceCancel(job: JobRow, e: Entry): Promise<Next> {
    if (job.status !== 'CANCELLING') {
      if (job.status === 'PENDING') {
        const tr: AnyTransition[] = job.tasks
          .filter((t) => t.status === 'PENDING')
          .map((t) => ({ entity: 'task' as const, id: t.id, from: 'PENDING' as TaskStatus, to: 'CANCELLED' as TaskStatus, reason: 'job cancelled before it started' }));
        tr.push({ entity: 'job', id: job.id, from: 'PENDING', to: 'CANCELLED', reason: 'cancelled by request', data: { endedAt: this.now() } });
        return this.writeMany(job, 'cancel-pending', tr);
      }
      return this.writeMany(job, 'cancel-request', [this.jobTo(job, 'CANCELLING', 'cancel requested')]);
    }
    const cur = job.tasks.find((t) => !isTerminal('task', t.status));
    const att = cur?.attempts[0];
    const active = att && !isTerminal('attempt', att.status) ? att : undefined;
    // Phase 1: the active attempt and its task say CANCELLING.
    if (cur && ((active && active.status !== 'CANCELLING') || (cur.status !== 'CANCELLING' && cur.status !== 'PENDING'))) {
      const tr: AnyTransition[] = [];
      if (active && active.status !== 'CANCELLING') {
        const h = this.handleFor(job, cur, active, e);
        tr.push({
          entity: 'attempt',
          id: active.id,
          from: active.status as AttemptStatus,
          to: 'CANCELLING',
          reason: 'cancel requested',
          data: h && !active.executorRef ? { executorRef: h.ref, pid: h.pid ?? null, pidStartTime: h.pidStartTime ?? null } : {},
        });
      }
      if (cur.status !== 'CANCELLING' && cur.status !== 'PENDING') {
        tr.push({ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'CANCELLING', reason: 'cancel requested' });
      }
      return this.writeMany(job, 'cancel-begin', tr);
    }
    // Phase 2: stop the process group (SIGTERM, SIGKILL after the grace), then end everything.
    let exitCode: number | null = null;
    if (cur && active) {
      const h = this.handleFor(job, cur, active, e);
      if (h) {
        const executor = this.resolve(active.executor);
        this.log.info({ jobId: job.id, task: cur.index, attempt: active.number, graceMs: this.s.cancelGraceMs }, `job ${job.id}: stopping attempt ${active.number} of task ${cur.index}`);
        await executor.cancel(h, { graceMs: this.s.cancelGraceMs });
        const p = await executor.probe(h);
        if (p.state === 'exited') exitCode = p.exitCode;
      }
      this.unwatchAttempt(active.id);
    }
    const tr: AnyTransition[] = [];
    if (active) tr.push({ entity: 'attempt', id: active.id, from: 'CANCELLING', to: 'CANCELLED', reason: 'cancelled by request', data: { exitCode, endedAt: this.now() } });
    for (const t of job.tasks) {
      if (isTerminal('task', t.status)) continue;
      tr.push({
        entity: 'task',
        id: t.id,
        from: t.status as TaskStatus,
        to: 'CANCELLED',
        reason: t.status === 'PENDING' ? 'job cancelled' : 'cancelled by request',
        data: t.status === 'PENDING' ? {} : { endedAt: this.now(), ...(active && t.id === cur?.id ? { exitCode } : {}) },
      });
    }
    tr.push({ entity: 'job', id: job.id, from: 'CANCELLING', to: 'CANCELLED', reason: 'cancelled by request', data: { endedAt: this.now(), ...this.sums(job) } });
    return this.writeMany(job, 'cancel-finish', tr);
  }

  // ───────────── exception path (rule 7) ─────────────

  private async exceptionPath(id: number, e: Entry, cause: unknown): Promise<void> {
    const reason = `monitor error: ${errMessage(cause)}`;
    for (let round = 0; round < 5; round++) {
      const job = await this.readJob(id);
      // Same checks as the step: gone → stop (never re-create); terminal → keep.
      if (!job) {
        this.log.info({ jobId: id }, `job ${id}: exception path: row gone; nothing written`);
        this.forget(id);
        return;
      }
      if (isTerminal('job', job.status)) {
        this.log.info({ jobId: id, status: job.status }, `job ${id}: exception path: already ${job.status}; kept`);
        this.forget(id);
        return;
      }
      await this.hooks.beforeWrite?.({ jobId: id, phase: 'exception', job });
      const cur = job.tasks.find((t) => !isTerminal('task', t.status));
      const att = cur?.attempts[0];
      const active = att && !isTerminal('attempt', att.status) ? att : undefined;
      let stopped = false;
      if (cur && active) {
        // Nothing may run unwatched: stop the attempt before the job is given up.
        const h = this.handleFor(job, cur, active, e);
        if (h) {
          try {
            await this.resolve(active.executor).cancel(h, { graceMs: this.s.cancelGraceMs });
            stopped = true;
          } catch (err) {
            this.log.error({ jobId: id, err }, `job ${id}: exception path could not stop attempt ${active.number}`);
          }
        }
        this.unwatchAttempt(active.id);
      }
      const tr: AnyTransition[] = [];
      if (active) tr.push({ entity: 'attempt', id: active.id, from: active.status as AttemptStatus, to: stopped ? 'CANCELLED' : 'LOST', reason, data: { endedAt: this.now() } });
      if (cur) tr.push({ entity: 'task', id: cur.id, from: cur.status as TaskStatus, to: 'FAILED_CONTROLLER', reason, data: { endedAt: this.now() } });
      for (const t of job.tasks) {
        if (t !== cur && t.status === 'PENDING') tr.push({ entity: 'task', id: t.id, from: 'PENDING', to: 'CANCELLED', reason: 'the job failed in the controller' });
      }
      tr.push({ entity: 'job', id: job.id, from: job.status as JobStatus, to: 'FAILED_CONTROLLER', reason, data: { endedAt: this.now(), ...this.sums(job) } });
      const res = await transitionMany(this.db, tr);
      if (res.outcome === 'applied') {
        this.counters.controllerFailures++;
        this.log.error({ jobId: id, err: cause }, `job ${id}: FAILED_CONTROLLER (${reason})`);
        this.forget(id);
        return;
      }
      this.outcome(job, 'exception', res);
      // gone / terminal: the next read stops; moved: try again with the fresh row.
    }
    throw new Error(`job ${id}: exception path kept losing races`);
  }

  // ───────────── writes ─────────────

  private now(): Date {
    return new Date(this.clock.now());
  }

  /** restartCount / recoveryCount as the sums over the job's tasks (with overrides). */
  private sums(job: JobRow, restarts?: Map<number, number>, recoveries?: Map<number, number>): { restartCount: number; recoveryCount: number } {
    let restartCount = 0;
    let recoveryCount = 0;
    for (const t of job.tasks) {
      restartCount += restarts?.get(t.id) ?? t.restarts;
      recoveryCount += recoveries?.get(t.id) ?? t.recoveries;
    }
    return { restartCount, recoveryCount };
  }

  /**
   * The job's write for the task statuses after this decision: the status deriveJobStatus() gives
   * (null when unchanged), with startedAt / endedAt and the counters.
   */
  private jobTransition(
    job: JobRow,
    after: Map<number, TaskStatus>,
    reason: string | null,
    data: Transition<'job'>['data'] = {},
    restarts?: Map<number, number>,
    recoveries?: Map<number, number>,
  ): Transition<'job'> | null {
    const views = job.tasks.map((t) => ({ index: t.index, status: after.get(t.id) ?? (t.status as TaskStatus) }));
    const to = deriveJobStatus(views, { cancelRequested: job.cancelRequestedAt !== null || job.status === 'CANCELLING' });
    if (to === job.status) return null;
    const d: Transition<'job'>['data'] = { ...data, ...this.sums(job, restarts, recoveries) };
    if (job.status === 'PENDING' && !job.startedAt) d.startedAt = this.now();
    if (isTerminal('job', to)) d.endedAt = this.now();
    return { entity: 'job', id: job.id, from: job.status as JobStatus, to, reason, data: d };
  }

  private jobTo(job: JobRow, to: JobStatus, reason: string): Transition<'job'> {
    return { entity: 'job', id: job.id, from: job.status as JobStatus, to, reason, data: this.sums(job) };
  }

  /** One guarded transaction; the hook runs first. Always 'again': the next read decides. */
  private async writeMany(job: JobRow, phase: StepPhase, tr: AnyTransition[], observed?: ProbeResult, onApplied?: () => void): Promise<Next> {
    if (tr.length === 0) return 'idle';
    let res: BatchOutcome;
    try {
      res = await this.guarded({ jobId: job.id, phase, job, observed }, () => transitionMany(this.db, tr));
    } finally {
      // The status write first, then the leftovers of an attempt it ended (not awaited).
      this.startReaps(job.id);
    }
    if (res.outcome === 'applied') {
      onApplied?.();
      // Rule 3 without a re-read: this committed write made the job terminal, and nothing ever
      // changes a terminal job row, so the step ends here (the re-read would only find it
      // terminal and forget it; skipping it keeps the database free for the stream that
      // announces the end: bench "latency").
      if (tr.some((t) => t.entity === 'job' && isTerminal('job', t.to))) {
        this.forget(job.id);
        return 'idle';
      }
    }
    return this.outcome(job, phase, res);
  }
}
