import { capabilitiesOf } from '../jobs/executor-kinds';
import type { JobStatus } from '../jobs/status';
import type { AdmissionSystem } from './admission';
import { noteError, type MonitorResources } from './resources';

/**
 * Why a launched job still waits in its executor's own scheduler (docs/slurm.md "Why pending"):
 * a Slurm attempt jobdeck admitted and submitted that Slurm holds PENDING — its CPUs are taken by
 * jobs jobdeck does not know, a node is down… — runs in jobdeck's eyes (the probe reports Slurm's
 * PENDING as `running`, so the attempt, its task and the job read RUNNING), yet nothing of it
 * runs. Each reconcile pass asks every such executor once (`Executor.held`: for Slurm one
 * `squeue` for all of its jobs not yet seen running) and stores its reason, `Slurm: Resources`,
 * in Job.pendingReason — the column and the write the admission pass uses
 * (lib/store/pending.ts), guarded by the job being STARTING or RUNNING and written only where
 * the text changed. A job seen running is not asked about again (Slurm does not requeue
 * jobdeck's attempts: `--no-requeue`); a status change clears the reason (lib/monitor/writes.ts).
 */

/** The job statuses of a launched attempt whose reason this pass writes. */
const LAUNCHED: readonly JobStatus[] = ['STARTING', 'RUNNING'];

/**
 * How a held attempt's reason reads: the executor's label (lib/jobs/executor-kinds.ts; its name
 * for one that is no kind), then its scheduler's own word.
 */
export function heldReason(executor: string, reason: string): string {
  const who = capabilitiesOf(executor)?.label ?? executor;
  return `${who}: ${reason === 'None' ? 'pending' : reason}`;
}

/** After a failed pass, how long the next ones are skipped (ms): a controller that is down is not asked every second. */
const FAILURE_PAUSE_MS = 10_000;

/** The executor-hold pass (see the module comment). */
export class HeldSystem {
  /** Refs (per executor) the scheduler no longer held when last asked: not asked again. */
  private readonly released = new Map<string, Set<string>>();
  private running: Promise<void> | null = null;
  /** No pass before this time (ms, the monitor's clock): set by a failure. */
  private pausedUntil = 0;

  constructor(
    private readonly res: MonitorResources,
    private readonly admission: AdmissionSystem,
  ) {}

  /** Runs a pass unless one is running (then answers that one) or a failure paused them. */
  run(): Promise<void> {
    if (this.running) return this.running;
    if (this.res.clock.now() < this.pausedUntil) return Promise.resolve();
    this.running = this.pass().finally(() => (this.running = null));
    return this.running;
  }

  /**
   * One pass: only when an executor that can say (`held`) has jobs holding CPUs (the last
   * admission pass's count), reads their launched attempts, asks each executor once for those
   * it has not seen released, and writes the reasons that changed. A failure (the database, the
   * executor's backend) is noted and pauses the passes for FAILURE_PAUSE_MS; the next one asks
   * again. The reasons stay as they were meanwhile.
   */
  private async pass(): Promise<void> {
    const names = this.executorsToAsk();
    if (names.length === 0) {
      this.released.clear();
      return;
    }
    try {
      const attempts = await this.res.store.launchedAttempts(names);
      const rows: Array<{ id: number; reason: string | null }> = [];
      for (const name of names) {
        const mine = attempts.filter((a) => a.executor === name);
        const released = this.released.get(name) ?? new Set<string>();
        // Forget the refs that are no longer launched attempts (bounded by what runs now).
        const live = new Set(mine.map((a) => a.ref));
        for (const r of released) if (!live.has(r)) released.delete(r);
        const ask = mine.filter((a) => !released.has(a.ref));
        const held = ask.length > 0 ? await this.res.executor(name).held!(ask.map((a) => a.ref)) : new Map<string, string>();
        for (const a of mine) {
          const reason = held.has(a.ref) ? heldReason(name, held.get(a.ref)!) : null;
          if (reason === null) released.add(a.ref);
          if (reason !== a.pendingReason) rows.push({ id: a.jobId, reason });
        }
        this.released.set(name, released);
      }
      if (rows.length > 0) await this.res.store.setPendingReasons(rows, LAUNCHED);
    } catch (err) {
      this.pausedUntil = this.res.clock.now() + FAILURE_PAUSE_MS;
      noteError(this.res, err, 'executor hold reasons');
    }
  }

  /** The executors with jobs holding CPUs (last admission pass) whose instance can say what it holds. */
  private executorsToAsk(): string[] {
    const out: string[] = [];
    for (const [name, c] of Object.entries(this.admission.capacity.byExecutor)) {
      if (c.used <= 0) continue;
      try {
        if (typeof this.res.executor(name).held === 'function') out.push(name);
      } catch {
        /* unknown executor: nothing to ask */
      }
    }
    return out.sort();
  }
}
