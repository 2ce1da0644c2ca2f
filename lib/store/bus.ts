import { EventEmitter } from 'node:events';
import type { ApiToken, Attempt, Job, JobEvent, Task } from '../generated/prisma/client';
import { logger } from '../log';

/** What a store announces after a commit (the WebSocket hub and the monitor listen). */
export interface StoreEvent {
  /**
   * `event`: a status write (with its JobEvent); `created`: a submit; `deleted`: a delete;
   * `cancel-requested`: a durable cancel request written without a status change
   * (recordCancelRequest) — the job's monitor must act on it now; `updated`: a field of a job
   * that is not its status changed (see `changed`); `queues`: the operator queues changed (jobId 0);
   * `outbox`: webhook deliveries became due (jobId 0; the dispatcher listens); `logs-removed`:
   * the retention policy removed a finished job's logs (open log streams of it are told and closed);
   * `token`: an attempt's own token was created (the server's auth directory takes it at once).
   */
  type: 'event' | 'created' | 'deleted' | 'cancel-requested' | 'updated' | 'queues' | 'outbox' | 'logs-removed' | 'token';
  jobId: number;
  /** The JobEvent row, for `event` and `created`. */
  event?: JobEvent;
  /**
   * For `event` of a status write: the job, task or attempt row exactly as that write left it
   * (what `RETURNING` gave), so a listener needs no read of its own. Absent for rows the write
   * created (a new attempt) and for `created` / `deleted`.
   */
  row?: Job | Task | Attempt;
  /** For `created`: what admission needs of the new job (Job.cpus, Job.nodes, Job.gpus, Job.executor, Job.priority, Job.depsWaiting). */
  job?: Pick<Job, 'cpus' | 'executor'> & Partial<Pick<Job, 'nodes' | 'priority' | 'gpus' | 'depsWaiting'>>;
  /** For `token`: the token's row (its hash, never the token). */
  token?: ApiToken;
  /**
   * For `updated`: which field changed (a priority change reorders admission; `pendingReason`
   * covers the place in line too; `deps`: a dependent's dependencies were met; `nodes`: an
   * attempt's, Attempt.nodes).
   */
  changed?: 'priority' | 'pendingReason' | 'nextAttemptAt' | 'deps' | 'nodes';
  /**
   * Another server's write, relayed over PostgreSQL NOTIFY (lib/server/relay.ts): the JobEvent
   * is read back, `row` is absent. A remote event is never relayed again.
   */
  remote?: boolean;
}

/** A listener of the store bus. It must not throw (a throw is logged and swallowed). */
export type StoreListener = (e: StoreEvent) => void;

/**
 * One store's bus: `change` with a StoreEvent after each committed write, in commit order,
 * synchronously from the writer's call (a listener runs before the write's promise resolves).
 * Writes inside a caller's transaction (inTransaction()) are never announced: nothing is
 * committed yet. Any number of listeners.
 */
export class StoreBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  /** Adds a listener of committed writes. */
  on(event: 'change', listener: StoreListener): this {
    this.emitter.on(event, listener);
    return this;
  }

  /** Removes a listener added with on(). */
  off(event: 'change', listener: StoreListener): this {
    this.emitter.off(event, listener);
    return this;
  }

  /** Announces one committed write to every listener; a listener that throws is logged. */
  emit(e: StoreEvent): void {
    try {
      this.emitter.emit('change', e);
    } catch (err) {
      logger().error({ err, jobId: e.jobId }, 'store listener threw');
    }
  }
}
