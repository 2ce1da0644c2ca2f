import type { Logger } from 'pino';
import type { AttemptHandle, Executor } from '../executors/types';
import { rankLogPath } from '../jobs/paths';
import { logger } from '../log';
import { LogTimeIndexer } from '../logs/time-index';
import { monitorSettingsFromEnv, type MonitorSettings } from './config';
import { isTransientError } from './errors';
import { Scheduler } from './scheduler';
import { Faults, monitorStore, type MonitorStore } from './store-view';
import type { Clock, Lifecycle, MonitorHooks, MonitorOptions, RunAsOptions } from './types';

/**
 * What every monitor system shares, built once by createMonitor() and handed to each system
 * (docs/design.md §6): the store, the executors, the clock, the test hooks, the settings, the
 * logger, the counters of MonitorState, the per-job scheduler, the fault injection and the table
 * of live exit subscriptions. Systems hold no copy of any of these.
 */

/** Counters reported in MonitorState (since this monitor started). */
export interface Counters {
  restarts: number;
  recoveries: number;
  readopted: number;
  transientRetries: number;
  controllerFailures: number;
}

/** The resources object (see the module comment). */
export interface MonitorResources {
  readonly store: MonitorStore;
  /** The executor by name (Job.executor / Attempt.executor); throws for an unknown name. */
  readonly executor: (name: string) => Executor;
  readonly clock: Clock;
  readonly hooks: MonitorHooks;
  readonly settings: MonitorSettings;
  /** Data folder for attempt folders (undefined: `$JOBDECK_HOME`). */
  readonly home: string | undefined;
  readonly log: Logger;
  readonly counters: Counters;
  readonly life: Lifecycle;
  readonly scheduler: Scheduler;
  readonly faults: Faults;
  readonly watches: WatchTable;
  /** As whom attempts run (MonitorOptions.runAs); null: as this process, without a token. */
  readonly runAs: RunAsOptions | null;
}

/** The settings: each option given wins over the environment (lib/monitor/config). */
function settingsFrom(opts: MonitorOptions): MonitorSettings {
  const env = monitorSettingsFromEnv();
  return {
    reconcileMs: opts.reconcileMs ?? env.reconcileMs,
    maxRecoveries: opts.maxRecoveries ?? env.maxRecoveries,
    recoveryBackoffMs: opts.recoveryBackoffMs ?? env.recoveryBackoffMs,
    maxRecoveryBackoffMs: opts.maxRecoveryBackoffMs ?? env.maxRecoveryBackoffMs,
    restartBackoffMs: opts.restartBackoffMs ?? env.restartBackoffMs,
    maxRestartBackoffMs: opts.maxRestartBackoffMs ?? env.maxRestartBackoffMs,
    lostConfirmMs: opts.lostConfirmMs ?? (opts.reconcileMs !== undefined ? Math.min(500, opts.reconcileMs) : env.lostConfirmMs),
    launchGraceMs: opts.launchGraceMs ?? env.launchGraceMs,
    startTimeoutMs: opts.startTimeoutMs !== undefined ? opts.startTimeoutMs : env.startTimeoutMs,
    cancelGraceMs: opts.cancelGraceMs ?? env.cancelGraceMs,
    leftoverGraceMs: opts.leftoverGraceMs ?? env.leftoverGraceMs,
    capacityCheck: opts.capacityCheck ?? env.capacityCheck,
    exitWatch: opts.exitWatch ?? env.exitWatch,
    maxStepErrors: opts.maxStepErrors ?? env.maxStepErrors,
    usageIntervalMs: opts.usageIntervalMs ?? env.usageIntervalMs,
    retention: opts.retention ?? env.retention,
    quotas: opts.quotas ?? env.quotas,
    compress: opts.compress ?? env.compress,
  };
}

/** Builds the resources of one monitor. @throws Error naming a malformed environment variable. */
export function createResources(opts: MonitorOptions): MonitorResources {
  const ex = opts.executor;
  const clock = opts.clock ?? { now: () => Date.now() };
  const settings = settingsFrom(opts);
  const log = logger().child({ subsystem: 'monitor' });
  const life: Lifecycle = { stopped: false };
  const faults = new Faults();
  const scheduler = new Scheduler(clock, life);
  return {
    store: monitorStore(opts.store, opts.db ?? opts.store.prisma, faults, opts.lease?.server.id ?? null, opts.lease?.server.hostId ?? null),
    executor: typeof ex === 'function' ? ex : () => ex,
    clock,
    hooks: opts.hooks ?? {},
    settings,
    home: opts.home,
    log,
    counters: { restarts: 0, recoveries: 0, readopted: 0, transientRetries: 0, controllerFailures: 0 },
    life,
    scheduler,
    faults,
    watches: new WatchTable(life, settings, log, (jobId) => void scheduler.kick(jobId), timeIndexer(opts, log), opts.lastLookWaitMs),
    runAs: opts.runAs ?? null,
  };
}

/** The time indexer of MonitorOptions.logTimes: the caller's, a new one, or none. */
function timeIndexer(opts: MonitorOptions, log: Logger): LogTimeIndexer | null {
  if (opts.logTimes === false) return null;
  if (opts.logTimes instanceof LogTimeIndexer) return opts.logTimes;
  return new LogTimeIndexer({ onError: (err, file) => log.debug({ err: errMessage(err), file }, 'log time index: write failed') });
}

/** The clock's now as a Date (what status writes record). */
export function now(res: MonitorResources): Date {
  return new Date(res.clock.now());
}

/** An error's message (or the thrown value as a string). */
export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Logs a failed pass (admission, scan); a temporary failure is counted and only warned about. */
export function noteError(res: MonitorResources, err: unknown, where: string): void {
  if (res.life.stopped) return;
  if (isTransientError(err)) {
    res.counters.transientRetries++;
    res.log.warn({ err: errMessage(err) }, `${where}: temporary failure (database or executor); retrying`);
  } else {
    res.log.error({ err }, `${where} failed`);
  }
}

/** Longest an attempt's end waits for the last look at its logs (ms): an index is a convenience. */
const LAST_LOOK_WAIT_MS = 2_000;

/**
 * Live exit subscriptions (executor.watch), by attempt id. An exit is only a hint: it kicks the
 * job's step, which probes again (docs/design.md §5, stale observations dropped). Beside them,
 * the running attempts' logs whose time index the server writes (lib/logs/time-index.ts): an
 * attempt's logs are indexed from the moment it is launched or seen running (indexLogs) until
 * it is unwatched — its end seen, or the job dropped — when they get one last look.
 */
export class WatchTable {
  private readonly byAttempt = new Map<number, { jobId: number; unsubscribe: () => void }>();
  private readonly indexed = new Map<number, { jobId: number; files: string[] }>();
  /** Attempts this server indexed (attempt id → job id): each is indexed once, never restarted. */
  private readonly everIndexed = new Map<number, number>();
  /** The last looks of ended attempts' logs still being written (attempt id → done). */
  private readonly lastLooks = new Map<number, Promise<void>>();

  constructor(
    private readonly life: Lifecycle,
    private readonly settings: MonitorSettings,
    private readonly log: Logger,
    private readonly kick: (jobId: number) => void,
    private readonly times: LogTimeIndexer | null = null,
    private readonly lastLookWaitMs = LAST_LOOK_WAIT_MS,
  ) {}

  /**
   * Indexes the times of an attempt's logs (every rank's of a multi-node one), once per attempt
   * in this server: from its launch (`fresh`), or from when this server first sees it — running,
   * or already ended (its end is then settled at once, and the last look records what it wrote
   * while no server was indexing it). Adopted without an index, what is there has no time.
   */
  indexLogs(jobId: number, attemptId: number, logPath: string | null, nodes: number, fresh: boolean): void {
    if (!this.times || !logPath || this.life.stopped || this.everIndexed.has(attemptId)) return;
    const files = Array.from({ length: Math.max(1, nodes) }, (_, k) => rankLogPath(logPath, k));
    this.everIndexed.set(attemptId, jobId);
    this.indexed.set(attemptId, { jobId, files });
    for (const f of files) this.times.track(f, fresh);
  }

  private endIndex(attemptId: number): void {
    const x = this.indexed.get(attemptId);
    if (!x || !this.times) return;
    this.indexed.delete(attemptId);
    const times = this.times;
    const last = Promise.all(x.files.map((f) => times.finish(f))).then(() => undefined);
    this.lastLooks.set(attemptId, last);
    void last.finally(() => {
      if (this.lastLooks.get(attemptId) === last) this.lastLooks.delete(attemptId);
    });
  }

  /**
   * Waits (at most lastLookWaitMs, LAST_LOOK_WAIT_MS by default) for the last look at an ended
   * attempt's logs: its end is written after it, so a stream that sees the end has every line's
   * time (docs/design.md §8 "Line times"). Never rejects.
   */
  async lastLook(attemptId: number): Promise<void> {
    const last = this.lastLooks.get(attemptId);
    if (!last) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([last, new Promise<void>((r) => (timer = setTimeout(r, this.lastLookWaitMs)))]);
    clearTimeout(timer);
  }

  /** True while this server's time index still looks at `logFile` (lib/logs/time-index.ts): it is not to be compressed yet. */
  indexing(logFile: string): boolean {
    return this.times?.isIndexing(logFile) ?? false;
  }

  /** Subscribes to the attempt's exit unless watching is off or it is watched already. */
  ensure(jobId: number, attemptId: number, executor: Executor, handle: AttemptHandle): void {
    if (this.life.stopped || !this.settings.exitWatch || this.byAttempt.has(attemptId)) return;
    try {
      const unsubscribe = executor.watch(handle, () => {
        this.unwatchAttempt(attemptId);
        this.kick(jobId);
      });
      this.byAttempt.set(attemptId, { jobId, unsubscribe });
    } catch (err) {
      this.log.warn({ jobId, attemptId, err: errMessage(err) }, 'executor.watch failed; relying on the reconcile pass');
    }
  }

  unwatchAttempt(attemptId: number): void {
    this.endIndex(attemptId);
    const w = this.byAttempt.get(attemptId);
    if (w) {
      w.unsubscribe();
      this.byAttempt.delete(attemptId);
    }
  }

  unwatchJob(jobId: number): void {
    for (const [attemptId, x] of this.indexed) if (x.jobId === jobId) this.endIndex(attemptId);
    for (const [attemptId, j] of this.everIndexed) if (j === jobId) this.everIndexed.delete(attemptId);
    for (const [attemptId, w] of this.byAttempt) {
      if (w.jobId === jobId) {
        w.unsubscribe();
        this.byAttempt.delete(attemptId);
      }
    }
  }

  /** Ends every subscription (the monitor stops). Resolves when the time indexes' last writes are done. */
  clear(): Promise<void> {
    for (const w of this.byAttempt.values()) w.unsubscribe();
    this.byAttempt.clear();
    this.indexed.clear();
    this.everIndexed.clear();
    return this.times?.close() ?? Promise.resolve();
  }

  /** Attempts watched (MonitorState.attemptsWatched). */
  get size(): number {
    return this.byAttempt.size;
  }

  /** Jobs with at least one watched attempt. */
  jobIds(): Set<number> {
    const ids = new Set<number>();
    for (const w of this.byAttempt.values()) ids.add(w.jobId);
    return ids;
  }
}
