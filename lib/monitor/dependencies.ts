import { decideDependencies } from '../jobs/dependencies';
import { now, type MonitorResources } from './resources';
import type { Writes } from './writes';
import type { JobRow, Next } from './types';

/** How often the sweep looks for dependents whose wake-up no event carried (ms). */
const SWEEP_EVERY_MS = 5000;

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
 * dependents of that job this server owns; a new dependent is kicked when created (the job it
 * waits for may have ended between the submit's check and its commit); and a sweep every
 * SWEEP_EVERY_MS (and at start) kicks dependents whose awaited job is already terminal or gone —
 * the wake-up a lost notification did not bring.
 */
export class DependencySystem {
  private lastSweepMs = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> | null = null;

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

  /** Jobs `ids` ended: their waiting dependents of this server decide now. */
  ended(ids: readonly number[]): void {
    if (this.res.life.stopped || ids.length === 0) return;
    void this.kickAll(this.res.store.deps.toDecide(ids), 'dependents');
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
