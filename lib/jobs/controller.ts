import { rmSync } from 'node:fs';
import path from 'node:path';
import type { PrismaClient } from '../generated/prisma/client';
import { getExecutor } from '../executors';
import type { AttemptHandle, Executor } from '../executors/types';
import { logger } from '../log';
import { monitorSettingsFromEnv } from '../monitor/config';
import { wakeMonitor } from '../monitor/handle';
import { attemptDir, jobDir } from './paths';
import { isTerminal, JOB_TERMINAL, type JobStatus } from './status';
import { deleteTerminalJobs, transitionJobsWhere } from './store';

/**
 * The controller's verbs on jobs: cancel (stop) and delete — different verbs, as in Ray's job
 * API. Both take a batch of ids and answer per id; both write only through the guarded store.
 */

/** What requestCancel() did, per id (each id appears in exactly one list, ids ascending). */
export interface CancelOutcome {
  /** Were PENDING: now CANCELLED with all their tasks (never started). */
  cancelled: number[];
  /** Were running: now CANCELLING; the monitor stops the process group, then CANCELLED. */
  cancelling: number[];
  /** Already terminal: nothing written (the API answers an error that says so). */
  alreadyTerminal: { id: number; status: string }[];
  notFound: number[];
}

const RUNNING_STATES: JobStatus[] = ['STARTING', 'RUNNING', 'RECOVERING'];

/**
 * Cancels jobs, in one batch:
 * - PENDING → CANCELLED at once, the job and all its tasks in one guarded set write per chunk
 *   (no process was ever started);
 * - STARTING / RUNNING / RECOVERING → CANCELLING with cancelRequestedAt set (guarded set write per
 *   status); the monitor is woken, sends SIGTERM to the process group and SIGKILL after
 *   JOBDECK_CANCEL_GRACE_MS, then writes CANCELLED. The request is durable: a monitor started
 *   after a crash honours it;
 * - CANCELLING already → reported as `cancelling` (idempotent, nothing written);
 * - terminal → `alreadyTerminal` with its status; unknown id → `notFound`.
 * A job whose status changed between the read and the write (lost race) is read again and
 * handled by its fresh status (a few rounds). Cost: two reads plus one write per status group and
 * chunk of 1000 ids — hundreds of ids in well under a second.
 */
export async function requestCancel(db: PrismaClient, ids: number[]): Promise<CancelOutcome> {
  const out: CancelOutcome = { cancelled: [], cancelling: [], alreadyTerminal: [], notFound: [] };
  let remaining = [...new Set(ids)].filter((id) => Number.isInteger(id) && id > 0);
  out.notFound.push(...[...new Set(ids)].filter((id) => !(Number.isInteger(id) && id > 0)));
  const woken: number[] = [];
  for (let round = 0; round < 5 && remaining.length > 0; round++) {
    const rows = await db.job.findMany({ where: { id: { in: remaining } }, select: { id: true, status: true } });
    const found = new Map(rows.map((r) => [r.id, r.status as JobStatus]));
    const byStatus = new Map<JobStatus, number[]>();
    for (const id of remaining) {
      const status = found.get(id);
      if (status === undefined) out.notFound.push(id);
      else if (isTerminal('job', status)) out.alreadyTerminal.push({ id, status });
      else if (status === 'CANCELLING') out.cancelling.push(id);
      else byStatus.set(status, [...(byStatus.get(status) ?? []), id]);
    }
    const now = new Date();
    const retry: number[] = [];
    const pending = byStatus.get('PENDING') ?? [];
    if (pending.length > 0) {
      const r = await transitionJobsWhere(db, {
        ids: pending,
        from: 'PENDING',
        to: 'CANCELLED',
        reason: 'cancelled by request before it started',
        data: { cancelRequestedAt: now, endedAt: now },
        tasks: { from: 'PENDING', to: 'CANCELLED', reason: 'job cancelled before it started' },
      });
      out.cancelled.push(...r.applied);
      const applied = new Set(r.applied);
      retry.push(...pending.filter((id) => !applied.has(id)));
    }
    for (const from of RUNNING_STATES) {
      const group = byStatus.get(from) ?? [];
      if (group.length === 0) continue;
      const r = await transitionJobsWhere(db, { ids: group, from, to: 'CANCELLING', reason: 'cancel requested', data: { cancelRequestedAt: now } });
      out.cancelling.push(...r.applied);
      woken.push(...r.applied);
      const applied = new Set(r.applied);
      retry.push(...group.filter((id) => !applied.has(id)));
    }
    remaining = retry;
  }
  if (remaining.length > 0) {
    // Still racing after several rounds (a job changing status constantly): record the request
    // durably without a status write; the monitor honours cancelRequestedAt on its next step.
    await db.job.updateMany({ where: { id: { in: remaining }, cancelRequestedAt: null, status: { notIn: [...JOB_TERMINAL] } }, data: { cancelRequestedAt: new Date() } });
    out.cancelling.push(...remaining);
    woken.push(...remaining);
  }
  for (const id of woken) wakeMonitor(id);
  out.cancelled.sort((a, b) => a - b);
  out.cancelling.sort((a, b) => a - b);
  out.alreadyTerminal.sort((a, b) => a.id - b.id);
  out.notFound.sort((a, b) => a - b);
  if (out.cancelled.length + out.cancelling.length > 0) {
    logger().info({ cancelled: out.cancelled.length, cancelling: out.cancelling.length }, `cancel: ${out.cancelled.length} cancelled, ${out.cancelling.length} cancelling`);
  }
  return out;
}

/** What deleteJobs() did. */
export interface DeleteOutcome {
  deleted: number[];
  /** Not deleted: not terminal (status given) or not found (status null). */
  refused: { id: number; status: string | null }[];
}

/** Options of deleteJobs(). */
export interface DeleteOptions {
  /** Data folder (default `$JOBDECK_HOME`). */
  home?: string;
  /** Executors by name (default: the process-wide ones, lib/executors getExecutor). */
  executor?: (name: string) => Executor;
  /** SIGTERM → SIGKILL grace for what the jobs' attempts left running (ms; default JOBDECK_LEFTOVER_GRACE_MS, 2000). */
  leftoverGraceMs?: number;
}

/** How many attempts deleteJobs() checks for leftovers at once (a Slurm check runs a command). */
const LEFTOVER_CONCURRENCY = 32;

/**
 * Stops whatever the attempts of these (terminal) jobs left running — the monitor does it when an
 * attempt ends, but not if jobdeck died between the status write and that reap. executor.cancel()
 * on an attempt with nothing left sends nothing. Failures are logged; the delete goes on.
 */
async function stopLeftovers(db: PrismaClient, jobIds: number[], opts: DeleteOptions): Promise<void> {
  if (jobIds.length === 0) return;
  const terminal = [...JOB_TERMINAL];
  // Attempts of jobs that are terminal now: a terminal job never gets a new attempt.
  const rows = await db.attempt.findMany({
    where: { jobId: { in: jobIds }, task: { job: { status: { in: terminal } } } },
    select: { jobId: true, number: true, executor: true, executorRef: true, pid: true, pidStartTime: true, logPath: true, task: { select: { index: true } } },
  });
  if (rows.length === 0) return;
  const resolve = opts.executor ?? getExecutor;
  const graceMs = opts.leftoverGraceMs ?? monitorSettingsFromEnv().leftoverGraceMs;
  const work = rows.map((a) => async () => {
    try {
      const executor = resolve(a.executor);
      const dir = a.logPath ? path.dirname(a.logPath) : attemptDir(a.jobId, a.task.index, a.number, opts.home);
      const handle: AttemptHandle | null = a.executorRef
        ? { executor: a.executor, ref: a.executorRef, pid: a.pid, pidStartTime: a.pidStartTime, attemptDir: dir }
        : (executor.findHandle?.(dir) ?? null);
      if (handle) await executor.cancel(handle, { graceMs });
    } catch (err) {
      logger().error({ jobId: a.jobId, task: a.task.index, attempt: a.number, err: (err as Error).message }, `job ${a.jobId}: could not stop what attempt ${a.number} of task ${a.task.index} left running`);
    }
  });
  let next = 0;
  const lane = async () => {
    while (next < work.length) await work[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(LEFTOVER_CONCURRENCY, work.length) }, lane));
}

/**
 * Deletes terminal jobs: first stops anything their attempts left running (processes started in
 * the background; see lib/monitor "Leftovers"), then their rows (job, tasks, attempts, events —
 * store.deleteTerminalJobs) and their folder `$JOBDECK_HOME/jobs/<id>` (attempt folders and log
 * files). A job that is not terminal is refused with its status — cancel it first; an unknown id
 * is refused with status null. A folder that cannot be removed is logged, not an error (the rows
 * are gone); so is a leftover that cannot be stopped.
 */
export async function deleteJobs(db: PrismaClient, ids: number[], opts: DeleteOptions = {}): Promise<DeleteOutcome> {
  const unique = [...new Set(ids)].filter((id) => Number.isInteger(id) && id > 0);
  await stopLeftovers(db, unique, opts);
  const { deleted } = await deleteTerminalJobs(db, unique);
  for (const id of deleted) {
    try {
      rmSync(jobDir(id, opts.home), { recursive: true, force: true });
    } catch (err) {
      logger().warn({ jobId: id, err: (err as Error).message }, `job ${id}: rows deleted but its folder could not be removed`);
    }
  }
  const done = new Set(deleted);
  const refusedIds = [...new Set(ids)].filter((id) => !done.has(id));
  const valid = refusedIds.filter((id) => Number.isInteger(id) && id > 0);
  const rows = valid.length ? await db.job.findMany({ where: { id: { in: valid } }, select: { id: true, status: true } }) : [];
  const status = new Map(rows.map((r) => [r.id, r.status as string]));
  return {
    deleted: [...deleted].sort((a, b) => a - b),
    refused: refusedIds.sort((a, b) => a - b).map((id) => ({ id, status: status.get(id) ?? null })),
  };
}
