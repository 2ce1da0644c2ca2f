/**
 * The delete verb (Ray's delete_job): removes finished jobs — what their attempts left running,
 * their rows, their folders. A batch of ids, answered per id. Cancel (cancel.ts) is another verb.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { leftoverGraceMsFromEnv } from '../config';
import type { AttemptHandle, Executor } from '../executors/types';
import { logger } from '../log';
import { attemptDir, jobDir } from '../jobs/paths';
import { deleteTerminalJobs, jobStatuses, leftoverAttempts, type Store } from '../store';

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
  /** The server's executors by name (lib/executors ExecutorRegistry.get). */
  executor: (name: string) => Executor;
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
async function stopLeftovers(store: Store, jobIds: number[], opts: DeleteOptions): Promise<void> {
  const rows = await leftoverAttempts(store, jobIds);
  if (rows.length === 0) return;
  const resolve = opts.executor;
  const graceMs = opts.leftoverGraceMs ?? leftoverGraceMsFromEnv();
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
 * lib/store deleteTerminalJobs, announced on the store's bus) and their folder
 * `$JOBDECK_HOME/jobs/<id>` (attempt folders and log files). A job that is not terminal is
 * refused with its status — cancel it first; an unknown id is refused with status null. A folder
 * that cannot be removed is logged, not an error (the rows are gone); so is a leftover that
 * cannot be stopped.
 */
export async function deleteJobs(store: Store, ids: number[], opts: DeleteOptions): Promise<DeleteOutcome> {
  const unique = [...new Set(ids)].filter((id) => Number.isInteger(id) && id > 0);
  await stopLeftovers(store, unique, opts);
  const { deleted } = await deleteTerminalJobs(store, unique);
  for (const id of deleted) {
    try {
      rmSync(jobDir(id, opts.home), { recursive: true, force: true });
    } catch (err) {
      logger().warn({ jobId: id, err: (err as Error).message }, `job ${id}: rows deleted but its folder could not be removed`);
    }
  }
  const done = new Set(deleted);
  const refusedIds = [...new Set(ids)].filter((id) => !done.has(id));
  const status = await jobStatuses(
    store,
    refusedIds.filter((id) => Number.isInteger(id) && id > 0),
  );
  return {
    deleted: [...deleted].sort((a, b) => a - b),
    refused: refusedIds.sort((a, b) => a - b).map((id) => ({ id, status: status.get(id) ?? null })),
  };
}
