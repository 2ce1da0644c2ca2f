import { decideDependencies } from '../jobs/dependencies';
import { now, type MonitorResources } from './resources';
import type { Writes } from './writes';
import type { JobRow, Next } from './types';

/** How often the sweep looks for dependents whose wake-up no event carried (ms). */
const SWEEP_EVERY_MS = 5000;

/**
 * How long the jobs that just ended gather before one read finds their dependents (ms). The read
 * then runs after the ended job's own stream has read its new events instead of before them
 * (the embedded database answers one query at a time: bench/README.md, "Fixes"), and a burst of
 * ends costs one read instead of one each.
 */
const ENDED_BATCH_MS = 20;

/** Most ended jobs one read of their dependents names. */
const ENDED_PER_READ = 500;

/**
 * Jobs that wait for other jobs (`depends_on`; docs/design.md §18 "Dependencies"). A dependent
 * is PENDING with Job.depsWaiting set: admission's line leaves it out, so it neither starts nor
 * holds up the jobs behind it. Its step (the dispatcher sends a waiting PENDING job here, not to
 * admission) decides with lib/jobs/dependencies.ts: met → it joins its line (readyAt = now; a
 * pass is scheduled by the store's `updated` event); never → CANCELLED with the reason, in one
 * guarded write of its owner like any status change; else its pending reason says what it
 * waits for.
 *
 * Wake-ups: a job's terminal write (this server's bus, or another's relayed) kicks the waiting
 * dependents of that job this server owns (the ends of ENDED_BATCH_MS read together); a new
 * dependent is kicked when created (the job it waits for may have ended between the submit's
 * check and its commit); and a sweep every SWEEP_EVERY_MS (and at start) kicks dependents whose
 * awaited job is already terminal or gone — the wake-up a lost notification did not bring.
 */
export class DependencySystem {
  private lastSweepMs = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> | null = null;
  private readonly endedIds = new Set<number>();
  private endedTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
  ) {}

  /** A waiting dependent's step (see the class comment). */
  async advance(job: JobRow): Promise<Next> {
    const verdict = decideDependencies(await this.res.store.deps.states(job.id));
    if (verdict.kind === 'met') {
      await this.res.store.deps.met(job.id, new Date(now(this.res)));
      this.res.log.info({ jobId: job.id }, `job ${job.id}: its dependencies are met; it joins the line`);
      return 'again';
    }
    if (verdict.kind === 'never') {
      const d = this.writes.decide(job);
      for (const t of job.tasks) if (t.status === 'PENDING') d.task(t, 'CANCELLED', verdict.reason, { endedAt: now(this.res) });
      return d.deriveJob(verdict.reason).write('dependency');
    }
    if (job.pendingReason !== verdict.reason) await this.res.store.setPendingReasons([{ id: job.id, reason: verdict.reason }]);
    return 'idle';
  }

  /** Jobs `ids` ended: their waiting dependents of this server decide within ENDED_BATCH_MS. */
  ended(ids: readonly number[]): void {
    if (this.res.life.stopped || ids.length === 0) return;
    for (const id of ids) this.endedIds.add(id);
    this.endedTimer ??= setTimeout(() => this.readEnded(), ENDED_BATCH_MS);
  }

  /** Drops the ended jobs not read yet (the monitor stops; the next start's sweep finds their dependents). */
  stop(): void {
    if (this.endedTimer) clearTimeout(this.endedTimer);
    this.endedTimer = null;
    this.endedIds.clear();
  }

  private readEnded(): void {
    this.endedTimer = null;
    const ids = [...this.endedIds];
    this.endedIds.clear();
    if (this.res.life.stopped) return;
    for (let i = 0; i < ids.length; i += ENDED_PER_READ) void this.kickAll(this.res.store.deps.toDecide(ids.slice(i, i + ENDED_PER_READ)), 'dependents');
  }

  /** The sweep, at most once per SWEEP_EVERY_MS (`force`: now — the monitor's start). */
  sweep(force = false): Promise<void> {
    const t = this.res.clock.now();
    if (this.sweeping || (!force && t - this.lastSweepMs < SWEEP_EVERY_MS)) return this.sweeping ?? Promise.resolve();
    this.lastSweepMs = t;
    this.sweeping = this.kickAll(this.res.store.deps.toDecide(null), 'dependency sweep').finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private kickAll(ids: Promise<number[]>, what: string): Promise<void> {
    return ids.then(
      (found) => {
        for (const id of found) void this.res.scheduler.kick(id);
      },
      (err: unknown) => this.res.log.warn({ err }, `${what}: read failed; the next sweep tries again`),
    );
  }
}
