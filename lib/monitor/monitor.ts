import { DependencySystem } from './dependencies';
import { isTerminal } from '../jobs/status';
import { AdmissionSystem } from './admission';
import { AttemptSystem } from './attempts';
import { CancelSystem } from './cancel';
import { isTransientDbError, isTransientError } from './errors';
import { ExceptionPath } from './exception';
import { processMemory, type LiveServers, type MonitorState } from './state';
import { liveServers } from '../store';
import { HeldSystem } from './held';
import { LaunchSystem } from './launch';
import { LeaseSystem } from './lease';
import { ReapSystem } from './reap';
import { RecoverySystem } from './recovery';
import { createResources, errMessage, noteError, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { ActiveJob, StoreEvent } from './store-view';
import type { CompressStats, FaultSite, JobRow, Monitor, MonitorOptions, Next, RetentionStats, TaskRow, UsageStats } from './types';
import { UsageSystem } from './usage';
import { RetentionSystem } from './retention';
import { CompressSystem } from './compress';
import { taskViews, Writes } from './writes';
import { GroupSystem } from './group';
import { graphState } from '../jobs/task-graph';
import { webhookSettingsFromEnv } from './webhooks/config';
import { WebhookSystem } from './webhooks/dispatcher';

/**
 * The monitor (docs/design.md §6): turns submitted jobs into attempts, watches them, restarts
 * what failed, recovers what the executor lost, and keeps every job true to reality across
 * races and restarts. This file holds the lifecycle (start-up recovery, stop), the loop (a
 * reconcile pass every `reconcileMs`, store events, wake()) and the DISPATCHER: a step reads the
 * job fresh and hands it to the system that owns its state, again until there is nothing to do.
 * The systems (admission, launch, attempts, recovery, cancel, reap, exception, held, webhooks,
 * lease, usage, retention, compress) share one
 * resources object (lib/monitor/resources) and call each other through narrow methods.
 */

export type { Clock, CompressStats, FaultSite, Monitor, MonitorHooks, MonitorOptions, RetentionStats, StepPhase, UsageStats, WriteContext } from './types';

/**
 * A job with a live exit subscription is stepped by the reconcile pass only once every this many
 * passes at least (30 s at the default 1 s), as a safety net; the subscription wakes it at once
 * otherwise. Staggered by job id, so 1,000 running jobs do not cost a burst every Nth pass.
 */
const FULL_PASS_EVERY = 30;

/**
 * Most safety-net steps a pass makes (watched jobs, staggered): past FULL_PASS_EVERY × this many
 * watched jobs the period grows instead, so the net costs the same at 5,000 running jobs as at
 * 300 — its steps were ~2 % of a core at 1,000 (bench/README.md), a cost that grew with every job.
 */
const NET_STEPS_PER_PASS = 10;

/**
 * Every how many passes a watched job gets its safety-net step: FULL_PASS_EVERY, longer when
 * `watched` jobs would need more than NET_STEPS_PER_PASS steps a pass (docs/design.md §6).
 */
export function safetyNetPeriod(watched: number): number {
  return Math.max(FULL_PASS_EVERY, Math.ceil(watched / NET_STEPS_PER_PASS));
}

/** The systems of one monitor, built in dependency order over one resources object. */
interface Systems {
  writes: Writes;
  reap: ReapSystem;
  admission: AdmissionSystem;
  launch: LaunchSystem;
  attempts: AttemptSystem;
  recovery: RecoverySystem;
  cancel: CancelSystem;
  exception: ExceptionPath;
  held: HeldSystem;
  usage: UsageSystem;
  retention: RetentionSystem;
  compress: CompressSystem;
  deps: DependencySystem;
  group: GroupSystem;
}

function buildSystems(res: MonitorResources): Systems {
  // A reap done frees its job's CPUs: admission may start the next job.
  const reap = new ReapSystem(res, () => admission.schedule(true));
  const writes = new Writes(res, reap);
  const launch = new LaunchSystem(res, writes, reap);
  const recovery = new RecoverySystem(res, writes, reap, launch);
  const attempts = new AttemptSystem(res, writes, reap, launch, recovery);
  const admission = new AdmissionSystem(res, writes, launch, reap);
  const cancel = new CancelSystem(res, writes);
  const exception = new ExceptionPath(res, writes);
  const held = new HeldSystem(res, admission);
  const usage = new UsageSystem(res);
  const retention = new RetentionSystem(res);
  const compress = new CompressSystem(res, reap);
  const deps = new DependencySystem(res, writes);
  const group = new GroupSystem(res, writes);
  return { writes, reap, admission, launch, attempts, recovery, cancel, exception, held, usage, retention, compress, deps, group };
}

/**
 * Creates a monitor (see the module comment). Nothing runs until start() (or the test entry
 * points reconcileNow / admitNow / step).
 * @throws Error naming a malformed JOBDECK_* variable (lib/monitor/config).
 */
export function createMonitor(opts: MonitorOptions): Monitor {
  return new MonitorLoop(opts);
}

class MonitorLoop implements Monitor {
  private readonly res: MonitorResources;
  private readonly sys: Systems;
  private readonly startWaitMs: number;
  private started = false;
  private startedAt: number | null = null;
  private tickTimer: NodeJS.Timeout | null = null;
  private passes = 0;
  private lastReconcileEnd: number | null = null;
  private lastReconcileDuration: number | null = null;
  private readonly busListener = (e: StoreEvent) => this.onStoreEvent(e);
  /** Job ownership by lease (several servers on one PostgreSQL); null: this monitor steps every job. */
  private readonly lease: LeaseSystem | null;
  private readonly webhooks: WebhookSystem;

  constructor(opts: MonitorOptions) {
    this.res = createResources(opts);
    this.sys = buildSystems(this.res);
    this.webhooks = new WebhookSystem(this.res, { ...webhookSettingsFromEnv(), ...opts.webhooks });
    this.startWaitMs = opts.startWaitMs ?? 5000;
    const { reap, admission } = this.sys;
    this.lease = opts.lease
      ? new LeaseSystem(this.res, opts.store, opts.lease, {
          claimed: (_ids, toStep) => {
            for (const id of toStep) void this.res.scheduler.kick(id);
            admission.schedule();
          },
          lost: (ids) => ids.forEach((id) => this.res.scheduler.forget(id)),
        })
      : null;
    this.res.scheduler.bind({
      run: (id, e) => this.safeStep(id, e),
      // Whatever happened, an attempt seen ended has its leftovers stopped.
      ended: (id) => reap.start(id),
      forgotten: (id) => {
        reap.start(id);
        admission.forget(id);
        this.res.watches.unwatchJob(id);
      },
    });
  }

  // ───────────────────────────── lifecycle ─────────────────────────────

  /** Start-up recovery (docs/design.md §5 rule 8): every non-terminal job is re-adopted first. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.res.life.stopped = false;
    this.startedAt = this.res.clock.now();
    this.res.store.bus.on('change', this.busListener);
    // With leases, the jobs of this server are those it claims first (rule 8 applies to them).
    await this.lease?.start();
    const ids = await this.scanWithRetry();
    this.res.counters.readopted = ids.length;
    if (ids.length) this.res.log.info({ jobs: ids.length }, `recovery: re-adopting ${ids.length} non-terminal job(s)`);
    await this.res.hooks.afterScan?.(ids);
    const first = Promise.all(ids.map((id) => this.res.scheduler.kick(id)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([first, new Promise<void>((r) => (timer = setTimeout(r, this.startWaitMs)))]);
    clearTimeout(timer);
    // Dependents are PENDING outside the lines: the scan does not name them.
    await this.sys.deps.sweep(true);
    this.scheduleTick(0);
    this.webhooks.start();
    this.sys.usage.start();
    this.sys.retention.start();
    this.sys.compress.start();
  }

  async stop(): Promise<void> {
    if (this.res.life.stopped) return;
    this.res.life.stopped = true;
    this.res.store.bus.off('change', this.busListener);
    const webhooks = this.webhooks.stop();
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = null;
    this.sys.admission.cancelScheduled();
    this.sys.deps.stop();
    await this.sys.retention.stop();
    await this.sys.compress.stop();
    await this.sys.usage.stop();
    const indexes = this.res.watches.clear();
    this.res.scheduler.clearTimers();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.res.scheduler.tails())
        .then(() => this.sys.admission.pending().running)
        // Ended attempts' leftovers are stopped even now (running attempts keep running).
        .then(() => this.sys.reap.finishAll()),
      new Promise<void>((r) => (timer = setTimeout(r, 5000))),
    ]);
    clearTimeout(timer);
    await webhooks;
    // No time-index write outlives the stop (an attempt's folder may be removed right after).
    await indexes;
    // After the steps: another server adopts the released jobs on its next round.
    await this.lease?.stop();
    this.res.log.info('monitor stopped (running attempts keep running)');
  }

  state(): MonitorState {
    const t = this.res.clock.now();
    return {
      running: this.started && !this.res.life.stopped,
      startedAt: this.startedAt === null ? null : new Date(this.startedAt).toISOString(),
      reconcileMs: this.res.settings.reconcileMs,
      lastReconcileAt: this.lastReconcileEnd === null ? null : new Date(this.lastReconcileEnd).toISOString(),
      lastReconcileDurationMs: this.lastReconcileDuration,
      lagMs: this.lastReconcileEnd === null ? null : Math.max(0, t - this.lastReconcileEnd),
      jobsWatched: this.res.scheduler.followed(),
      jobsWaiting: this.sys.admission.jobsWaiting,
      attemptsWatched: this.res.watches.size,
      ...this.res.counters,
      capacity: this.sys.admission.capacity,
      memory: processMemory(),
      submits: this.res.store.submitStats(),
      retention: { ...this.sys.retention.stats, logsDays: this.res.settings.retention.logsDays, logsBytesLimit: this.res.settings.retention.logsBytes, jobsDays: this.res.settings.retention.jobsDays, intervalMs: this.res.settings.retention.intervalMs },
      compression: { ...this.sys.compress.stats, afterMs: this.res.settings.compress.afterMs, intervalMs: this.res.settings.compress.intervalMs },
    };
  }

  async servers(): Promise<LiveServers | null> {
    if (!this.lease) return null;
    return { rows: await liveServers(this.res.store.raw, this.lease.leaseMs), selfId: this.lease.serverId };
  }

  wake(jobId?: number): void {
    if (this.res.life.stopped) return;
    if (jobId !== undefined) void this.res.scheduler.kick(jobId);
    this.sys.admission.schedule();
  }

  failNextRead(site?: FaultSite, err?: Error): void {
    this.res.faults.push(site, err);
  }

  step(jobId: number): Promise<void> {
    return this.res.scheduler.kick(jobId);
  }

  async idle(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const busy = this.res.scheduler.busy();
      const reaps = this.sys.reap.running();
      const admission = this.sys.admission.pending();
      if (busy.length === 0 && !admission.running && !admission.scheduled && reaps.length === 0) return;
      // A pass scheduled but not yet begun starts on the next turn (setImmediate).
      const soon = admission.scheduled ? new Promise<void>((r) => setImmediate(r)) : undefined;
      await Promise.all([...busy, admission.running, ...reaps, soon]);
    }
  }

  sampleUsageNow(): Promise<void> {
    return this.sys.usage.round();
  }

  usageStats(): UsageStats {
    return { ...this.sys.usage.stats };
  }

  retainNow(): Promise<void> {
    return this.sys.retention.round();
  }

  retentionStats(): RetentionStats {
    return { ...this.sys.retention.stats };
  }

  compressNow(): Promise<void> {
    return this.sys.compress.round();
  }

  compressStats(): CompressStats {
    return { ...this.sys.compress.stats };
  }

  admissionStats(): { ticks: number; passes: number } {
    return { ticks: this.sys.admission.ticks, passes: this.sys.admission.passesRun };
  }

  async admitNow(): Promise<void> {
    await this.sys.admission.run();
  }

  async reconcileNow(): Promise<void> {
    await this.reconcile(true);
  }

  // ───────────────────────────── loop ─────────────────────────────

  private scheduleTick(ms: number): void {
    if (this.res.life.stopped) return;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = setTimeout(() => {
      this.tickTimer = null;
      const next = () => this.scheduleTick(this.res.settings.reconcileMs);
      this.reconcile(false).then(next, (err: unknown) => {
        noteError(this.res, err, 'reconcile');
        next();
      });
    }, ms);
    this.tickTimer.unref?.();
  }

  /** One pass: admission, then a step for every admitted non-terminal job. */
  private async reconcile(awaitSteps: boolean): Promise<void> {
    const t0 = this.res.clock.now();
    // A test's reconcileNow always runs a pass; a timer's tick may skip one that decides nothing.
    await (awaitSteps ? this.sys.admission.run() : this.sys.admission.tick());
    const deps = this.sys.deps.sweep(awaitSteps);
    if (awaitSteps) await deps;
    // A tick does not wait for it: a cluster controller that does not answer must not hold up
    // the reconcile of every other job (reconcileNow, a test's entry point, does).
    const held = this.sys.held.run();
    if (awaitSteps) await held;
    let active: ActiveJob[];
    try {
      active = await this.res.store.activeJobIds();
    } catch (err) {
      noteError(this.res, err, 'reconcile scan');
      return;
    }
    const ids = active.map((j) => j.id);
    const { scheduler, watches } = this.res;
    scheduler.sweep(
      new Set(ids),
      (id) => this.sys.admission.holdsVerdict(id),
      (id) => watches.unwatchJob(id),
    );
    // Jobs whose attempt has a live exit subscription are woken by it; the pass still steps each
    // of them once every safetyNetPeriod passes (staggered by id) as a safety net. Not a job being
    // cancelled: its exit comes only once the cancel acts, so a lost wake-up (a write this
    // server's bus did not carry) would leave it CANCELLING until its full pass.
    const pass = this.passes++;
    const watched = awaitSteps ? new Set<number>() : watches.jobIds();
    const every = safetyNetPeriod(watched.size);
    const steps = active.filter((j) => j.cancel || !watched.has(j.id) || (j.id + pass) % every === 0).map((j) => scheduler.kick(j.id));
    if (awaitSteps) await Promise.all(steps);
    const t1 = this.res.clock.now();
    this.lastReconcileEnd = t1;
    this.lastReconcileDuration = t1 - t0;
  }

  /** The start-up scan, retried with backoff on temporary database failures (rule 6). */
  private async scanWithRetry(): Promise<number[]> {
    for (let i = 0; ; i++) {
      try {
        return (await this.res.store.activeJobIds()).map((j) => j.id);
      } catch (err) {
        if (!isTransientDbError(err) || i >= 5) throw err;
        this.res.counters.transientRetries++;
        this.res.log.warn({ err }, 'recovery scan: temporary database failure; retrying');
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** i, 5000)));
      }
    }
  }

  private onStoreEvent(e: StoreEvent): void {
    if (this.res.life.stopped) return;
    if (e.type === 'created') {
      // A dependent decides at once: what it waits for may have ended before it was written.
      const step = e.job?.depsWaiting === true;
      // Claimed at once by the server that accepted the submit only (docs/design.md "Replicas");
      // with leases its step comes once it is claimed (before, the step would find it unowned).
      if (this.lease && !e.remote) this.lease.claimSoon(e.jobId, step);
      else if (step) void this.res.scheduler.kick(e.jobId);
      return this.sys.admission.created(e);
    }
    if (e.type === 'deleted') return this.res.scheduler.forget(e.jobId);
    if (e.type === 'cancel-requested') return void this.res.scheduler.kick(e.jobId);
    // A new priority reorders a line: a pass decides afresh.
    if (e.type === 'updated') return e.changed === 'priority' || e.changed === 'deps' ? this.sys.admission.schedule() : undefined;
    // New limits: a pass decides afresh.
    if (e.type === 'queues') return this.sys.admission.schedule();
    const ev = e.event;
    if (!ev || ev.entity !== 'job') return;
    if (ev.to === 'CANCELLING') void this.res.scheduler.kick(e.jobId);
    if (isTerminal('job', ev.to)) {
      this.sys.admission.schedule(true);
      this.sys.deps.ended([e.jobId]);
    }
  }

  // ───────────────────────────── the step ─────────────────────────────

  /** One step with its error handling: rule 6 (temporary failures retried) and rule 7. */
  private async safeStep(id: number, e: JobEntry): Promise<void> {
    const { settings: s, counters, log, scheduler } = this.res;
    try {
      await this.runStep(id, e);
      e.errors = 0;
      e.transient = 0;
    } catch (err) {
      if (this.res.life.stopped) return;
      if (isTransientError(err)) {
        // A temporary database (or executor backend) failure is retried; it never fails the job.
        e.transient++;
        counters.transientRetries++;
        const delay = Math.min(s.reconcileMs * 2 ** Math.min(e.transient - 1, 10), 30_000);
        log.warn({ jobId: id, err: errMessage(err), retryInMs: delay }, `job ${id}: temporary failure; retrying in ${delay} ms`);
        scheduler.later(id, delay);
        return;
      }
      e.errors++;
      if (e.errors < s.maxStepErrors) {
        const delay = Math.min(s.reconcileMs * 2 ** (e.errors - 1), 30_000);
        log.error({ jobId: id, err, errors: e.errors, retryInMs: delay }, `job ${id}: monitor step failed (${e.errors} of ${s.maxStepErrors}); retrying`);
        scheduler.later(id, delay);
        return;
      }
      try {
        await this.sys.exception.run(id, e, err);
        e.errors = 0;
      } catch (err2) {
        if (isTransientDbError(err2)) counters.transientRetries++;
        log.error({ jobId: id, err: err2 }, `job ${id}: exception path failed; retrying`);
        scheduler.later(id, Math.min(s.reconcileMs * 4, 30_000));
      }
    }
  }

  /** Reads the job fresh and dispatches, until an iteration has nothing left to do. */
  private async runStep(id: number, e: JobEntry): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (this.res.life.stopped) return;
      const job = await this.res.store.readJob(id);
      // Rule 2: the row is gone (deleted) — stop; never re-create it.
      if (!job) {
        if (!e.done) this.res.log.info({ jobId: id }, `job ${id}: row gone; monitoring stopped`);
        this.res.scheduler.forget(id);
        return;
      }
      // Rule 3: terminal — keep it as it is.
      if (isTerminal('job', job.status)) {
        this.res.scheduler.forget(id);
        return;
      }
      // Leases: only the owner steps a job (docs/design.md "Replicas"); another's is dropped here.
      if (this.res.store.owner !== null && job.ownerId !== this.res.store.owner) {
        this.res.log.debug({ jobId: id, ownerId: job.ownerId }, `job ${id}: owned by ${job.ownerId ?? 'no server yet'}; not stepped here`);
        this.res.scheduler.forget(id);
        return;
      }
      e.done = false;
      const next = await this.dispatch(job, e);
      if (next === 'idle') return;
    }
    this.res.log.warn({ jobId: id }, `job ${id}: step did not settle after 100 iterations; continuing later`);
    this.res.scheduler.later(id, this.res.settings.reconcileMs);
  }

  /**
   * The dispatcher: hands the job to the system that owns its current state. A job's tasks form a
   * graph (lib/jobs/task-graph.ts: a pipeline's chain, an in-job DAG, a job group): each task
   * that may run now is stepped in index order until one has something to do; a job whose end is
   * decided while tasks still run has them stopped first (GroupSystem).
   */
  private async dispatch(job: JobRow, e: JobEntry): Promise<Next> {
    const { admission, cancel, group, writes } = this.sys;
    if (job.status === 'CANCELLING' || job.cancelRequestedAt !== null) return cancel.advance(job, e);
    if (job.status === 'PENDING') return job.depsWaiting ? this.sys.deps.advance(job) : admission.advancePending(job, e);
    const g = graphState(taskViews(job));
    if (g.live.length === 0) return writes.finish(job, 'finish');
    if (g.stop.length > 0) return group.stop(job, g.stop, g.decided ?? 'the job ended', e);
    for (const index of g.ready) {
      const next = await this.dispatchTask(job, job.tasks.find((t) => t.index === index)!, e);
      if (next !== 'idle') return next;
    }
    return 'idle';
  }

  /** One task that may run now: launch, settle, recover, or watch it. */
  private dispatchTask(job: JobRow, cur: TaskRow, e: JobEntry): Promise<Next> {
    const { attempts, cancel, launch, recovery } = this.sys;
    if (cur.status === 'PENDING') return launch.launchTask(job, cur, e, 'launch');
    // A task cancelling without a cancel request on the job: make the job follow it.
    if (cur.status === 'CANCELLING') return cancel.follow(job, 'a task is cancelling');
    const att = cur.attempts[0];
    if (cur.status === 'RECOVERING') return recovery.recovering(job, cur, att, e);
    // cur is STARTING or RUNNING.
    if (!att) throw new Error(`job ${job.id} task ${cur.index} is ${cur.status} without any attempt`);
    if (isTerminal('attempt', att.status)) return attempts.settleRecorded(job, cur, att, e);
    if (att.status === 'CANCELLING') return cancel.follow(job, 'an attempt is cancelling');
    return attempts.watch(job, cur, att, e);
  }
}
