import path from 'node:path';
import type { Attempt, Job, Task } from '../generated/prisma/client';
import type { AttemptHandle } from '../executors/types';
import { attemptLogPath } from '../jobs/paths';
import type { MonitorResources } from './resources';
import type { JobEntry } from './scheduler';

/**
 * The attempt's executor handle: the one launched here (memory), the one recorded on the row,
 * or the executor's own copy in the attempt folder (a crash between the launch and the RUNNING
 * write). Null when none exists yet.
 * @throws Error when the attempt's executor is unknown (only on the last lookup).
 */
export function handleFor(res: MonitorResources, job: Job, task: Task, att: Attempt, e: JobEntry): AttemptHandle | null {
  const mem = e.handles.get(att.id);
  if (mem) return mem;
  const dir = att.logPath ? path.dirname(att.logPath) : path.dirname(attemptLogPath(job.id, task.index, att.number, res.home));
  if (att.executorRef) {
    return { executor: att.executor, ref: att.executorRef, pid: att.pid, pidStartTime: att.pidStartTime, hostId: att.hostId, attemptDir: dir };
  }
  return res.executor(att.executor).findHandle?.(dir) ?? null;
}
