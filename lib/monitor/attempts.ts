import type { Attempt } from '../generated/prisma/client';
import type { AttemptHandle, ProbeResult } from '../executors/types';
import { classifyExit, decideRestart } from '../jobs/retry';
import type { AttemptStatus } from '../jobs/status';
import { handleFor } from './handles';
import type { LaunchSystem } from './launch';
import type { ReapSystem } from './reap';
import type { RecoverySystem } from './recovery';
import { now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { AnyTransition } from './store';
import { readTaskSpec } from './taskspec';
import type { JobRow, Next, TaskRow } from './types';
import type { Writes } from './writes';

/**
 * Watching a STARTING / RUNNING attempt and settling its end (docs/design.md §5 and §6): each
 * iteration probes the attempt afresh (rule 5, stale observations dropped), attaches to it
 * (attempt, task and job say RUNNING, the handle recorded: also how start-up recovery
 * reattaches, rule 8), and when it exited decides at once — next task, restart, or the job's end
 * (rules 9–10, SkyPilot's retry each task). An attempt that ended while jobdeck was down is
 * settled from its recorded exit status.
 */

type Exited = Extract<ProbeResult, { state: 'exited' }>;

/** The rank a recorded end reason names (`rank 1: run exited with code 3`), for an attempt settled earlier. */
function rankOf(reason: string | null): number | undefined {
  const m = reason ? /^rank (\d+): /.exec(reason) : null;
  return m ? Number(m[1]) : undefined;
}
type Ended = 'SUCCEEDED' | 'FAILED' | 'FAILED_SETUP';

/** An attempt's end: its status and exit code, when, and the attempt's own write (null when recorded). */
interface End {
  status: Ended;
  exitCode: number | null;
  endedAt: Date;
  endAttempt: AnyTransition | null;
  observed?: ProbeResult;
  /** A gang's failing rank (named in the task's and the job's reason). */
  rank?: number;
}

/** Watches and settles attempts (see the module comment). */
export class AttemptSystem {
  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
    private readonly reap: ReapSystem,
    private readonly launch: LaunchSystem,
    private readonly recovery: RecoverySystem,
  ) {}

  /** The task's attempt is STARTING or RUNNING: probe it, attach, or settle its end. */
  async watch(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry): Promise<Next> {
    const relaunched = await this.launch.relaunchDue(job, cur, att, e);
    if (relaunched !== null) return relaunched;
    const launchError = e.launchErrors.get(att.id);
    if (launchError !== undefined) {
      e.launchErrors.delete(att.id);
      if (launchError.precheck) return this.failPrechecks(job, cur, att, launchError.reason);
      return this.recovery.lost(job, cur, att, e, launchError.reason, { state: 'lost', reason: launchError.reason });
    }
    const handle = handleFor(this.res, job, cur, att, e);
    if (!handle && att.status === 'STARTING' && !e.launchedAt.has(att.id)) {
      // Not launched here, no handle anywhere yet: another server on this database may be inside
      // its executor's launch right now. Only an attempt older than the launch grace is "never
      // launched". createdAt is the database's wall clock, hence Date.now() (not the test clock).
      const age = Date.now() - att.createdAt.getTime();
      const grace = this.res.settings.launchGraceMs;
      if (age < grace) {
        this.res.scheduler.later(job.id, Math.min(grace - age, this.res.settings.reconcileMs));
        return 'idle';
      }
    }
    const executor = this.res.executor(att.executor);
    const observed: ProbeResult = handle ? await executor.probe(handle) : { state: 'lost', reason: 'never launched: no executor handle recorded' };
    if (observed.state === 'lost') return this.recovery.lostProbe(job, cur, att, e, observed);
    e.lost.delete(att.id);
    if (handle) this.res.watches.ensure(job.id, att.id, executor, handle);
    // An attempt first seen here (re-adopted after a restart, running or ended meanwhile) has its
    // line times indexed from now on; one launched here already is.
    this.res.watches.indexLogs(job.id, att.id, att.logPath, readTaskSpec(cur.spec, job.cpus).nodes, false);
    // Normalize first: the attempt, its task and the job say RUNNING (recording the handle).
    if (att.status === 'STARTING' || cur.status === 'STARTING' || job.status !== 'RUNNING') {
      const d = this.attach(job, cur, att, e, handle);
      if (!d.empty) return d.write('attach', observed);
    }
    if (observed.state === 'running') return 'idle';
    return this.settleExit(job, cur, att, e, observed);
  }

  /**
   * The executor refused the launch for the task's own spec (a relative workdir…): nothing ran,
   * no recovery would help. The attempt ends FAILED, the task FAILED_PRECHECKS with the reason,
   * later tasks CANCELLED, the job FAILED_PRECHECKS — one write.
   */
  private failPrechecks(job: JobRow, cur: TaskRow, att: Attempt, reason: string): Promise<Next> {
    const endedAt = now(this.res);
    return this.writes
      .decide(job)
      .add({ entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: 'FAILED', reason, data: { endedAt } })
      .task(cur, 'FAILED_PRECHECKS', reason, { endedAt })
      .cancelLater(cur.index, `task ${cur.index} could not be launched`)
      .deriveJob(`task ${cur.index}: ${reason}`)
      .write('settle');
  }

  /** The writes that make the attempt, its task and the job say RUNNING. */
  private attach(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, handle: AttemptHandle | null) {
    const d = this.writes.decide(job);
    const reattached = !e.handles.has(att.id);
    if (att.status === 'STARTING') {
      d.add({
        entity: 'attempt',
        id: att.id,
        from: 'STARTING',
        to: 'RUNNING',
        reason: reattached ? 'found running after a restart of jobdeck' : null,
        data: { executorRef: handle!.ref, pid: handle!.pid ?? null, pidStartTime: handle!.pidStartTime ?? null, startedAt: att.startedAt ?? e.launchedAt.get(att.id) ?? now(this.res) },
      });
    }
    if (cur.status === 'STARTING') d.task(cur, 'RUNNING', undefined, cur.startedAt ? {} : { startedAt: e.launchedAt.get(att.id) ?? now(this.res) });
    return d.deriveJob(null);
  }

  /** The attempt ended with a recorded exit status (it is RUNNING in the row). */
  private settleExit(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, observed: Exited): Promise<Next> {
    const status = classifyExit(observed.phase, observed.exitCode);
    // A gang's first failure names its rank (docs/slurm.md "Multi-node tasks").
    const rank = observed.rank !== undefined && status !== 'SUCCEEDED' ? `rank ${observed.rank}: ` : '';
    const endReason = status === 'SUCCEEDED' && !observed.reason ? null : `${rank}${observed.reason ?? `${observed.phase} exited with code ${observed.exitCode}`}`;
    const endAttempt: AnyTransition = {
      entity: 'attempt',
      id: att.id,
      from: att.status as AttemptStatus,
      to: status,
      reason: endReason,
      data: { exitCode: observed.exitCode, endedAt: observed.endedAt },
    };
    this.res.watches.unwatchAttempt(att.id);
    this.reap.noteEnded(job, cur, att, e);
    return this.afterEnd(job, cur, att, e, { status, exitCode: observed.exitCode, endedAt: observed.endedAt, endAttempt, observed, rank: status === 'SUCCEEDED' ? undefined : observed.rank });
  }

  /** The task's latest attempt is already terminal in the row (a write that ended it alone). */
  settleRecorded(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry): Promise<Next> {
    const st = att.status as AttemptStatus;
    // Ended in an earlier step (or before a restart of jobdeck): make sure nothing of it is left.
    this.reap.noteEnded(job, cur, att, e);
    if (st === 'SUCCEEDED' || st === 'FAILED' || st === 'FAILED_SETUP') {
      return this.afterEnd(job, cur, att, e, { status: st, exitCode: att.exitCode, endedAt: att.endedAt ?? now(this.res), endAttempt: null });
    }
    if (st === 'LOST') return this.recovery.lost(job, cur, att, e, att.statusReason ?? 'attempt lost', undefined, true);
    // CANCELLED without a cancel request on the job: the task and job end CANCELLED.
    return this.writes
      .decide(job)
      .task(cur, 'CANCELLED', 'its attempt was cancelled', { endedAt: now(this.res) })
      .cancelLater(cur.index, 'an earlier task was cancelled')
      .deriveJob('cancelled')
      .write('settle');
  }

  /**
   * After an attempt ended SUCCEEDED / FAILED / FAILED_SETUP: next task, restart, or the job's
   * end (docs/design.md §5 rules 9–10, retry each task).
   */
  private afterEnd(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, end: End): Promise<Next> {
    const { status, exitCode, endedAt, observed } = end;
    const pre = end.endAttempt ? [end.endAttempt] : [];
    if (status === 'SUCCEEDED') {
      const last = job.tasks[job.tasks.length - 1].id === cur.id;
      return this.writes
        .decide(job)
        .add(...pre)
        .task(cur, 'SUCCEEDED', null, { exitCode, endedAt })
        .deriveJob(last ? 'all tasks succeeded' : `task ${cur.index} succeeded`)
        .write('settle', observed);
    }
    const spec = readTaskSpec(cur.spec, job.cpus);
    const decision = decideRestart({ status, exitCode, rank: end.rank ?? rankOf(att.statusReason) }, cur.restarts, spec);
    if (decision.action === 'restart') {
      // Only a RUNNING task restarts (RUNNING → STARTING); normalize first.
      if (cur.status !== 'RUNNING') return this.writes.decide(job).task(cur, 'RUNNING').write('attach', observed);
      return this.launch.newAttempt(job, cur, e, 'settle', {
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
    return this.writes
      .decide(job)
      .add(...pre)
      .task(cur, decision.status, decision.reason, { exitCode, endedAt })
      .cancelLater(cur.index, `task ${cur.index} failed`)
      .deriveJob(`task ${cur.index}: ${decision.reason}`)
      .write('settle', observed);
  }
}
