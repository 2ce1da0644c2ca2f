/**
 * Deleting finished jobs: the delete itself (only terminal rows, so a running job is never
 * deleted from under its monitor) and the read of what their attempts may have left running.
 */
import { logger } from '../log';
import { JOB_TERMINAL } from '../jobs/status';
import { appendAudit, type AuditEntry } from './audit';
import { inTransaction, type Store } from './handle';

/**
 * Deletes terminal jobs (with their tasks, attempts and events, by cascade) and announces a
 * `deleted` event per job on the store's bus. Non-terminal ids are left alone and reported, so a
 * running job is never deleted from under its monitor. With `audit`, the audit row it makes of
 * the ids deleted is appended in the same transaction (none when nothing was deleted).
 * @returns the ids deleted and the ids refused because they were not terminal (or missing).
 */
export async function deleteTerminalJobs(store: Store, ids: number[], audit?: (deleted: number[]) => AuditEntry): Promise<{ deleted: number[]; refused: number[] }> {
  if (ids.length === 0) return { deleted: [], refused: [] };
  const terminal = [...JOB_TERMINAL];
  const deleted = await store.prisma.$transaction(async (tx) => {
    const rows = await tx.job.findMany({ where: { id: { in: ids }, status: { in: terminal } }, select: { id: true } });
    const found = rows.map((r) => r.id);
    if (found.length) await tx.job.deleteMany({ where: { id: { in: found }, status: { in: terminal } } });
    if (found.length && audit) await appendAudit(inTransaction(store, tx), audit(found));
    return found;
  });
  for (const id of deleted) {
    logger().info({ jobId: id }, `job ${id}: deleted`);
    store.bus.emit({ type: 'deleted', jobId: id });
  }
  const set = new Set(deleted);
  return { deleted, refused: ids.filter((id) => !set.has(id)) };
}

/** An attempt of a terminal job, with what it takes to find and stop what it left running. */
export interface LeftoverAttempt {
  jobId: number;
  number: number;
  executor: string;
  executorRef: string | null;
  pid: number | null;
  pidStartTime: string | null;
  logPath: string | null;
  task: { index: number };
}

/**
 * The attempts of those of `jobIds` that are terminal now (a terminal job never gets a new
 * attempt, so the list is complete), for a delete to stop their leftovers first.
 */
export async function leftoverAttempts(store: Store, jobIds: number[]): Promise<LeftoverAttempt[]> {
  if (jobIds.length === 0) return [];
  return store.prisma.attempt.findMany({
    where: { jobId: { in: jobIds }, task: { job: { status: { in: [...JOB_TERMINAL] } } } },
    select: { jobId: true, number: true, executor: true, executorRef: true, pid: true, pidStartTime: true, logPath: true, task: { select: { index: true } } },
  });
}
