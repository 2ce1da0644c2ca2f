import type { Attempt } from '../generated/prisma/client';
import type { ProbeResult } from '../executors/types';
import { decideRecovery, recoveryDelayMs, type RecoveryPolicy } from '../jobs/retry';
import { isTerminal, type AttemptStatus } from '../jobs/status';
import type { LaunchSystem } from './launch';
import type { ReapSystem } from './reap';
import { now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { JobRow, Next, TaskRow } from './types';
import type { Writes } from './writes';

/**
 * Lost attempts and their recovery (docs/design.md §5 and §6). One "lost" verdict is never
 * believed: the attempt is probed again `lostConfirmMs` later, and only a second "lost" for the
 * same attempt in the same status starts a recovery (an exit file may land between a probe's
 * two reads; some executors' probes can miss). Recoveries are bounded per task
 * (maxRecoveries) with exponential backoff (lib/jobs/retry); past the bound the task and the job
 * end FAILED_CONTROLLER ("jobdeck could not keep it running").
 */
export class RecoverySystem {
  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
    private readonly reap: ReapSystem,
    private readonly launch: LaunchSystem,
  ) {}

  /**
   * A probe said "lost": the first verdict (or one under another attempt status) only schedules
   * another probe ('idle'); a second one at least `lostConfirmMs` later is believed.
   */
  async lostProbe(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, observed: Extract<ProbeResult, { state: 'lost' }>): Promise<Next> {
    const prev = e.lost.get(att.id);
    const t = this.res.clock.now();
    const confirmMs = this.res.settings.lostConfirmMs;
    if (!prev || prev.status !== att.status) {
      e.lost.set(att.id, { at: t, status: att.status, reason: observed.reason });
      this.res.log.info({ jobId: job.id, task: cur.index, attempt: att.number, reason: observed.reason }, `job ${job.id}: attempt looks lost (${observed.reason}); probing again`);
      this.res.scheduler.later(job.id, confirmMs);
      return 'idle';
    }
    if (t - prev.at < confirmMs) {
      this.res.scheduler.later(job.id, prev.at + confirmMs - t);
      return 'idle';
    }
    return this.lost(job, cur, att, e, observed.reason, observed);
  }

  /**
   * A confirmed lost attempt: recovery (bounded, with backoff) or FAILED_CONTROLLER. `recorded`:
   * the attempt is LOST in the row already (only its task and job are written).
   */
  async lost(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, reason: string, observed?: ProbeResult, recorded = false): Promise<Next> {
    e.lost.delete(att.id);
    this.res.watches.unwatchAttempt(att.id);
    // The wrapper is gone but what it started may not be (kill -9 of the wrapper, OOM killer).
    this.reap.noteEnded(job, cur, att, e);
    const s = this.res.settings;
    const policy: RecoveryPolicy = { maxRecoveries: s.maxRecoveries, backoffMs: s.recoveryBackoffMs, maxBackoffMs: s.maxRecoveryBackoffMs };
    const decision = decideRecovery(reason, cur.recoveries, policy);
    const d = this.writes.decide(job);
    if (!recorded) d.add({ entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: 'LOST', reason, data: { endedAt: now(this.res) } });
    const recoveries = new Map<number, number>();
    if (decision.action === 'recover') {
      recoveries.set(cur.id, cur.recoveries + 1);
      d.task(cur, 'RECOVERING', decision.reason, { recoveries: cur.recoveries + 1 });
    } else {
      d.task(cur, 'FAILED_CONTROLLER', decision.reason, { endedAt: now(this.res) });
      d.cancelLater(cur.index, `task ${cur.index} could not be kept running`);
    }
    // When the recovery's attempt starts (the API's nextAttemptAt), written with the job's move to RECOVERING.
    const data = decision.action === 'recover' ? { nextAttemptAt: new Date(this.res.clock.now() + decision.delayMs) } : undefined;
    d.deriveJob(`task ${cur.index}: ${decision.reason}`, { recoveries, data });
    const next = await d.write('lost', observed, () => {
      if (decision.action === 'recover') this.res.counters.recoveries++;
    });
    if (decision.action === 'recover') this.res.scheduler.later(job.id, decision.delayMs);
    return next;
  }

  /** Task RECOVERING: after the backoff, a new attempt with cause "recovery". */
  async recovering(job: JobRow, cur: TaskRow, att: Attempt | undefined, e: JobEntry): Promise<Next> {
    if (att && !isTerminal('attempt', att.status)) {
      // An attempt still open under a RECOVERING task: settle it as lost first.
      this.reap.noteEnded(job, cur, att, e);
      return this.writes
        .decide(job)
        .add({ entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: 'LOST', reason: 'its task is recovering', data: { endedAt: now(this.res) } })
        .write('lost');
    }
    const s = this.res.settings;
    const n = Math.max(1, cur.recoveries);
    const due = (att?.endedAt?.getTime() ?? this.res.clock.now()) + recoveryDelayMs(n, { backoffMs: s.recoveryBackoffMs, maxBackoffMs: s.maxRecoveryBackoffMs });
    const t = this.res.clock.now();
    if (t < due) {
      this.res.scheduler.later(job.id, due - t);
      return 'idle';
    }
    return this.launch.newAttempt(job, cur, e, 'recover', {
      number: (att?.number ?? 0) + 1,
      cause: 'recovery',
      taskFrom: 'RECOVERING',
      reason: `task ${cur.index}: recovery ${cur.recoveries}`,
    });
  }
}
