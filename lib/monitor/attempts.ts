import type { Attempt } from '../generated/prisma/client';
import type { AttemptHandle, Executor, ProbeResult } from '../executors/types';
import { outOfMemoryReason, pastMaxDuration, timeLimitReason, type LimitKind } from '../jobs/limits';
import { classifyExit, decideRestart } from '../jobs/retry';
import type { AttemptStatus } from '../jobs/status';
import { handleFor } from './attempt-handle';
import type { LaunchSystem } from './launch';
import type { ReapSystem } from './reap';
import type { RecoverySystem } from './recovery';
import { now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { AnyTransition } from './store-view';
import { readTaskSpec } from './taskspec';
import { logger } from '../log';
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

/**
 * The attempt's final CPU reading, written with its end: the wrapper's record of its children's
 * CPU time when it is more than the sampler's last reading (a task shorter than the sampling
 * interval, or busy after the last sample), with the end as its time (docs/design.md §7).
 */
function finalCpu(att: Attempt, observed: Exited): { cpuMs?: number; usageAt?: Date } {
  if (observed.cpuMs === undefined || (att.cpuMs !== null && att.cpuMs >= observed.cpuMs)) return {};
  return { cpuMs: observed.cpuMs, usageAt: observed.endedAt };
}

/**
 * The bytes of output the attempt's log could not take (a full disk), as its end records them,
 * said in the server's log too; {} when none were lost (docs/design.md §8).
 */
function lostBytes(job: JobRow, att: Attempt, observed: Exited): { logLostBytes?: number } {
  if (!observed.logLostBytes) return {};
  logger().warn({ jobId: job.id, attemptId: att.id, logLostBytes: observed.logLostBytes, logPath: att.logPath }, `job ${job.id}: attempt ${att.number}'s log lost ${observed.logLostBytes} bytes of output (the disk was full); the log marks where`);
  return { logLostBytes: observed.logLostBytes };
}

/** The rank a recorded end reason names (`rank 1: run exited with code 3`), for an attempt settled earlier. */
function rankOf(reason: string | null): number | undefined {
  const m = reason ? /^rank (\d+): /.exec(reason) : null;
  return m ? Number(m[1]) : undefined;
}

/** The limit an end reason recorded earlier names ("out of memory: limit 8 GB", "exceeded max_duration 2h"), for the restart decision. */
function limitCauseOf(reason: string | null): string | undefined {
  const m = reason ? /^(?:rank \d+: )?((?:out of memory|exceeded max_duration|exceeded its time limit)\b.*)$/.exec(reason) : null;
  return m ? m[1] : undefined;
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
  /** The limit that stopped it, as its reason says it (lib/jobs/limits.ts). */
  cause?: string;
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
    if (observed.state === 'lost') {
      // Stopped at its max_duration without a record (killed in the grace): its limit's end, never a recovery.
      if (att.status === 'RUNNING' && this.pastDeadline(job, cur, att, now(this.res))) return this.settleLimit(job, cur, att, e, 'time');
      return this.recovery.lostProbe(job, cur, att, e, observed);
    }
    e.lost.delete(att.id);
    const attaching = att.status === 'STARTING' || cur.status === 'STARTING' || job.status !== 'RUNNING';
    // An attempt seen ended (and attached) is settled by this very step: a watch made now would be
    // dropped at once — for a local attempt whose exit was just reported, an fs.watch of its folder
    // made and removed, ~1 ms of the thread each (bench/README.md, fixes table).
    if (handle && (observed.state === 'running' || attaching)) this.res.watches.ensure(job.id, att.id, executor, handle);
    // An attempt first seen here (re-adopted after a restart, running or ended meanwhile) has its
    // line times indexed from now on; one launched here already is.
    this.res.watches.indexLogs(job.id, att.id, att.logPath, readTaskSpec(cur.spec, job.cpus).nodes, false);
    // Normalize first: the attempt, its task and the job say RUNNING (recording the handle).
    if (attaching) {
      const startedAt = att.startedAt ?? e.launchedAt.get(att.id) ?? now(this.res);
      const d = this.attach(job, cur, att, e, handle, startedAt);
      if (!d.empty) {
        let applied = false;
        const next = await d.write('attach', observed, () => (applied = true));
        // A one-task job whose running attempt now says RUNNING, with its nodes recorded: the
        // next read could only arm its deadline, so it is armed here — one read of the job less
        // per launch (docs/design.md §6 "The monitor's systems"). A request that came meanwhile
        // (a cancel) kicked the job, and its step runs after this one.
        const placed = att.nodes !== null || this.nodesOf(att, handle).nodes !== undefined;
        if (applied && next === 'again' && observed.state === 'running' && handle && job.tasks.length === 1 && placed) {
          return this.deadline(job, cur, { ...att, startedAt }, executor, handle);
        }
        return next;
      }
    }
    if (observed.state === 'running') {
      // Where it runs, once the executor knows (a Slurm job starts on its nodes after the attach).
      const where = this.nodesOf(att, handle);
      if (where.nodes) await this.res.store.recordAttemptNodes(job.id, att.id, where.nodes);
      return handle ? this.deadline(job, cur, att, executor, handle) : 'idle';
    }
    return this.settleExit(job, cur, att, e, observed, handle);
  }

  /** `{ nodes }` where the attempt runs when its row has none yet and its executor knows them; else nothing. */
  private nodesOf(att: Attempt, handle: AttemptHandle | null): { nodes?: string[] } {
    if (att.nodes !== null || handle === null) return {};
    const nodes = this.res.executor(att.executor).nodes?.(handle) ?? null;
    return nodes && nodes.length ? { nodes } : {};
  }

  /**
   * True when the attempt has run its task's whole max_duration by `at` (lib/jobs/limits
   * pastMaxDuration) on an executor the monitor keeps the deadline of. Not on one that stops it
   * itself (Slurm: its clock starts when its scheduler starts the job, not at the launch; its own
   * TIMEOUT says so).
   */
  private pastDeadline(job: JobRow, cur: TaskRow, att: Attempt, at: Date): boolean {
    if (this.res.executor(att.executor).stopsAtMaxDuration) return false;
    return pastMaxDuration(att.startedAt, at, readTaskSpec(cur.spec, job.cpus).maxDurationMs);
  }

  /**
   * A running attempt with a max_duration on an executor that does not stop it itself (local):
   * before its deadline, a step at the deadline; at it, the attempt is stopped (SIGTERM, the cancel
   * grace, SIGKILL) and the next iteration settles its end as the limit's. The deadline is its
   * recorded start + max_duration, so it holds across restarts of jobdeck.
   */
  private async deadline(job: JobRow, cur: TaskRow, att: Attempt, executor: Executor, handle: AttemptHandle): Promise<Next> {
    const max = readTaskSpec(cur.spec, job.cpus).maxDurationMs;
    if (max === undefined || executor.stopsAtMaxDuration || !att.startedAt) return 'idle';
    const left = att.startedAt.getTime() + max - this.res.clock.now();
    if (left > 0) {
      this.res.scheduler.later(job.id, left);
      return 'idle';
    }
    this.res.log.info({ jobId: job.id, task: cur.index, attempt: att.number }, `job ${job.id}: attempt ${att.number} of task ${cur.index} ${timeLimitReason(max)}: stopping it`);
    await executor.cancel(handle, { graceMs: this.res.settings.cancelGraceMs });
    return 'again';
  }

  /** Ends a RUNNING attempt that recorded nothing as stopped at `limit` (FAILED, the limit's reason). */
  private settleLimit(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, limit: LimitKind): Promise<Next> {
    const spec = readTaskSpec(cur.spec, job.cpus);
    const cause = limit === 'time' ? timeLimitReason(spec.maxDurationMs) : outOfMemoryReason(spec.memoryBytes);
    const endedAt = now(this.res);
    const endAttempt: AnyTransition = { entity: 'attempt', id: att.id, from: att.status as AttemptStatus, to: 'FAILED', reason: cause, data: { endedAt } };
    e.lost.delete(att.id);
    this.res.watches.unwatchAttempt(att.id);
    this.reap.noteEnded(job, cur, att, e);
    return this.afterEnd(job, cur, att, e, { status: 'FAILED', exitCode: null, endedAt, endAttempt, cause });
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
  private attach(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, handle: AttemptHandle | null, startedAt: Date) {
    const d = this.writes.decide(job);
    const reattached = !e.handles.has(att.id);
    if (att.status === 'STARTING') {
      d.add({
        entity: 'attempt',
        id: att.id,
        from: 'STARTING',
        to: 'RUNNING',
        reason: reattached ? 'found running after a restart of jobdeck' : null,
        data: { executorRef: handle!.ref, pid: handle!.pid ?? null, pidStartTime: handle!.pidStartTime ?? null, hostId: handle!.hostId ?? null, startedAt, ...this.nodesOf(att, handle) },
      });
    }
    if (cur.status === 'STARTING') d.task(cur, 'RUNNING', undefined, cur.startedAt ? {} : { startedAt: e.launchedAt.get(att.id) ?? now(this.res) });
    return d.deriveJob(null);
  }

  /** The attempt ended with a recorded exit status (it is RUNNING in the row). */
  private async settleExit(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry, observed: Exited, handle: AttemptHandle | null): Promise<Next> {
    // A limit's stop (the executor's own record, or a run as long as max_duration) fails the
    // attempt whatever its code, with the limit's reason (docs/spec.md "max_duration").
    const spec = readTaskSpec(cur.spec, job.cpus);
    const limit = observed.limit ?? (this.pastDeadline(job, cur, att, observed.endedAt) ? 'time' : undefined);
    const cause = limit === 'time' ? timeLimitReason(spec.maxDurationMs) : limit === 'memory' ? outOfMemoryReason(spec.memoryBytes) : undefined;
    const status = cause ? (observed.phase === 'setup' ? 'FAILED_SETUP' : 'FAILED') : classifyExit(observed.phase, observed.exitCode);
    // A gang's first failure names its rank (docs/slurm.md "Multi-node tasks").
    const rank = observed.rank !== undefined && status !== 'SUCCEEDED' ? `rank ${observed.rank}: ` : '';
    const endReason = status === 'SUCCEEDED' && !observed.reason ? null : `${rank}${cause ?? observed.reason ?? `${observed.phase} exited with code ${observed.exitCode}`}`;
    const endAttempt: AnyTransition = {
      entity: 'attempt',
      id: att.id,
      from: att.status as AttemptStatus,
      to: status,
      reason: endReason,
      data: { exitCode: observed.exitCode, endedAt: observed.endedAt, ...finalCpu(att, observed), ...this.nodesOf(att, handle), ...lostBytes(job, att, observed) },
    };
    this.res.watches.unwatchAttempt(att.id);
    this.reap.noteEnded(job, cur, att, e);
    // The end is written after the last look at the attempt's logs (the time of its last lines).
    await this.res.watches.lastLook(att.id);
    return this.afterEnd(job, cur, att, e, { status, exitCode: observed.exitCode, endedAt: observed.endedAt, endAttempt, observed, rank: status === 'SUCCEEDED' ? undefined : observed.rank, cause });
  }

  /** The task's latest attempt is already terminal in the row (a write that ended it alone). */
  settleRecorded(job: JobRow, cur: TaskRow, att: Attempt, e: JobEntry): Promise<Next> {
    const st = att.status as AttemptStatus;
    // Ended in an earlier step (or before a restart of jobdeck): make sure nothing of it is left.
    this.reap.noteEnded(job, cur, att, e);
    if (st === 'SUCCEEDED' || st === 'FAILED' || st === 'FAILED_SETUP') {
      return this.afterEnd(job, cur, att, e, { status: st, exitCode: att.exitCode, endedAt: att.endedAt ?? now(this.res), endAttempt: null, cause: limitCauseOf(att.statusReason) });
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
    const s = this.res.settings;
    const policy = { ...spec, backoffMs: spec.restartBackoffMs ?? s.restartBackoffMs, maxBackoffMs: s.maxRestartBackoffMs };
    const decision = decideRestart({ status, exitCode, rank: end.rank ?? rankOf(att.statusReason), number: att.number, ...(end.cause ? { cause: end.cause } : {}) }, cur.restarts, policy);
    if (decision.action === 'restart') {
      // Only a RUNNING task restarts (RUNNING → STARTING); normalize first.
      if (cur.status !== 'RUNNING') return this.writes.decide(job).task(cur, 'RUNNING').write('attach', observed);
      const due = endedAt.getTime() + decision.delayMs;
      if (decision.delayMs > 0 && this.res.clock.now() < due) return this.waitToRestart(job, pre, due, observed);
      return this.launch.newAttempt(job, cur, e, 'settle', {
        number: att.number + 1,
        cause: 'restart',
        taskFrom: 'RUNNING',
        reason: `task ${cur.index}: ${decision.reason}`,
        // A restart on a recover_on_exit_codes code spends no budget but is counted apart (shown by cause).
        taskData: { exitCode, ...(decision.counted ? { restarts: cur.restarts + 1 } : { exitCodeRestarts: cur.exitCodeRestarts + 1 }) },
        before: pre,
        observed,
        counted: decision.counted ? 'restart' : 'exitCode',
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

  /**
   * A restart waiting out its backoff (docs/spec.md "job_recovery" `restart_backoff`): the job
   * says when the next attempt starts (Job.nextAttemptAt, written before the failed attempt's end
   * so that whoever hears of the end reads it too), the attempt's end is written (`pre`, unless
   * it is recorded already), and the step comes back at `due` through the scheduler. The task
   * and the job stay RUNNING meanwhile. Nothing is kept in memory: after a restart of jobdeck
   * the step finds the attempt ended and its task RUNNING, and takes the same decision (the
   * restart is counted only when the attempt starts), with the same `due` (from the attempt's
   * recorded end).
   */
  private async waitToRestart(job: JobRow, pre: AnyTransition[], due: number, observed?: ProbeResult): Promise<Next> {
    if (job.nextAttemptAt?.getTime() !== due) await this.res.store.setNextAttemptAt(job.id, new Date(due));
    if (pre.length > 0) return this.writes.decide(job).add(...pre).write('settle', observed);
    this.res.scheduler.later(job.id, Math.max(1, due - this.res.clock.now()));
    return 'idle';
  }
}
