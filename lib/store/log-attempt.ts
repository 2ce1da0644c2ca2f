/** The reads behind the log routes and the job stream: which attempt a logs request is about, one attempt by task and number. */
import type { Attempt, Task } from '../generated/prisma/client';
import type { StoreScope } from './handle';

/** Which attempt's log: absent fields mean the job's current task and that task's latest attempt. */
export interface LogTarget {
  task?: number;
  attempt?: number;
}

/** What findLogAttempt() found, or which part of the target does not exist. */
export type LogAttemptLookup =
  | { found: true; task: Task; attempt: Attempt }
  | { found: false; missing: 'job' }
  | { found: false; missing: 'task'; index: number; taskCount: number }
  | { found: false; missing: 'attempt'; index: number; attempts: number; asked: number | undefined };

/** Finds the task and attempt a logs request names (three small reads by unique keys). */
export async function findLogAttempt(store: StoreScope, jobId: number, target: LogTarget): Promise<LogAttemptLookup> {
  const { prisma } = store;
  const job = await prisma.job.findUnique({ where: { id: jobId }, select: { id: true, currentTask: true, taskCount: true } });
  if (!job) return { found: false, missing: 'job' };
  const index = target.task ?? job.currentTask;
  const task = await prisma.task.findUnique({ where: { jobId_index: { jobId, index } } });
  if (!task) return { found: false, missing: 'task', index, taskCount: job.taskCount };
  const attempt =
    target.attempt !== undefined
      ? await prisma.attempt.findUnique({ where: { taskId_number: { taskId: task.id, number: target.attempt } } })
      : await prisma.attempt.findFirst({ where: { taskId: task.id }, orderBy: { number: 'desc' } });
  if (attempt) return { found: true, task, attempt };
  const attempts = target.attempt !== undefined ? await prisma.attempt.count({ where: { taskId: task.id } }) : 0;
  return { found: false, missing: 'attempt', index, attempts, asked: target.attempt };
}

/** Attempt `number` of job `jobId`'s task `taskIndex` (the attempt a job stream opens), or null. */
export function attemptOf(store: StoreScope, jobId: number, taskIndex: number, number: number): Promise<Attempt | null> {
  return store.prisma.attempt.findFirst({ where: { jobId, number, task: { index: taskIndex } } });
}

/** Which restart of its task attempt `number` is: the task's attempts caused by a restart, up to and including it. */
export function restartOrdinal(store: StoreScope, taskId: number, number: number): Promise<number> {
  return store.prisma.attempt.count({ where: { taskId, cause: 'restart', number: { lte: number } } });
}
