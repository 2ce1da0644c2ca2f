import type { Attempt } from '../generated/prisma/client';
import { isTerminal, type AttemptStatus } from '../jobs/status';
import { handleFor } from './attempt-handle';
import { now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { JobRow, Next, TaskRow } from './types';
import type { Writes } from './writes';

/**
 * Ending a job group or task DAG whose end is decided while some of its tasks still run
 * (docs/design.md §17 "Task graphs and job groups"; the decision is lib/jobs/task-graph.ts
 * `graphState().stop`): a task failed with its restarts spent or was cancelled, or every primary
 * task ended (SkyPilot's `primary_tasks`). Each task to stop has its attempt's process group
 * stopped (SIGTERM, SIGKILL after the cancel grace: the executor's cancel), then the attempts and
 * the tasks end CANCELLED and the job takes its derived outcome in one guarded write.
 *
 * The processes are stopped before the write, as a cancel's last phase does: the write records
 * only what already happened. A crash between the two leaves attempts that exited on a signal;
 * the next step settles them as their task's own end, and the group's end is decided again.
 */
export class GroupSystem {
  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
  ) {}

  /** Stops the tasks of `job` at `indexes` because of `why` (see the module comment). Always 'again' or 'idle'. */
  async stop(job: JobRow, indexes: readonly number[], why: string, e: JobEntry): Promise<Next> {
    const tasks = job.tasks.filter((t) => indexes.includes(t.index));
    this.res.log.info({ jobId: job.id, tasks: tasks.map((t) => t.index) }, `job ${job.id}: ${why}: stopping task(s) ${tasks.map((t) => t.index).join(', ')}`);
    const ends = await Promise.all(tasks.map((t) => this.stopTask(job, t, e)));
    const at = now(this.res);
    const d = this.writes.decide(job);
    for (const { task, active, exitCode, nodes } of ends) {
      if (active) d.add({ entity: 'attempt', id: active.id, from: active.status as AttemptStatus, to: 'CANCELLED', reason: `stopped: ${why}`, data: { exitCode, endedAt: at, ...(nodes ? { nodes } : {}) } });
      d.task(task, 'CANCELLED', `stopped: ${why}`, task.status === 'PENDING' ? {} : { endedAt: at, ...(active ? { exitCode } : {}) });
    }
    return d.deriveJob(why).write('group-stop');
  }

  /**
   * Stops the live attempt of `task`, if any; its exit code when the executor recorded one, and
   * the nodes it ran on when no write recorded them yet (asked before the stop: an attempt's nodes
   * are written with the attach, while it runs, or with its end — docs/design.md "Replicas").
   */
  private async stopTask(job: JobRow, task: TaskRow, e: JobEntry): Promise<{ task: TaskRow; active: Attempt | undefined; exitCode: number | null; nodes: string[] | null }> {
    const att = task.attempts[0];
    const active = att && !isTerminal('attempt', att.status) ? att : undefined;
    let exitCode: number | null = null;
    let nodes: string[] | null = null;
    if (active) {
      const h = handleFor(this.res, job, task, active, e);
      if (h) {
        const executor = this.res.executor(active.executor);
        const known = active.nodes === null ? (executor.nodes?.(h) ?? null) : null;
        if (known && known.length) nodes = known;
        await executor.cancel(h, { graceMs: this.res.settings.cancelGraceMs });
        const p = await executor.probe(h);
        if (p.state === 'exited') exitCode = p.exitCode;
      }
      this.res.watches.unwatchAttempt(active.id);
    }
    return { task, active, exitCode, nodes };
  }
}
