import type { Attempt } from '../generated/prisma/client';
import { assertTransition, type TaskStatus } from '../jobs/status';
import type { Store } from './handle';
import { assertBatch, firstLoser, logApplied, runBatch, type AnyTransition, type Fence, type NewAttempt, type Step, type Transition, type TransitionOutcome } from './transition';

/**
 * Starts a task attempt: moves the task `from → STARTING` (guarded) and creates the attempt in
 * STARTING, all or nothing, with a JobEvent for each. Loses like any guarded write — a
 * deleted or terminal task never gets an attempt. `before` / `after` add guarded writes to the
 * same statement (the monitor ends the previous attempt and moves the job with the new
 * attempt, all or nothing); if any of them loses, nothing is written and the outcome is `lost`
 * (the first loser of before, task, after, in that order: its reason and fresh row, whatever its
 * kind). Events, in this order: `before`'s, the task's, the attempt's (`null → STARTING`, reason
 * = cause), `after`'s; announced in that order on the store's bus after the commit, each write's
 * with its row.
 *
 * `fence`: the lease owner's fence, as transitionMany() takes it (a lost fence: `lost: gone`,
 * `fenced`). One SQL statement, like transitionMany() (the batch statement of transition.ts: the attempt's
 * INSERT reads the task's UPDATE), plus one read when it lost.
 * @throws IllegalTransitionError when `from → STARTING` (or a `before`/`after` write) is not
 *   allowed; Error / TypeError as transitionMany() for a row written twice or bad `data` (all
 *   before any query); Prisma's P2002 PrismaClientKnownRequestError when the task already has
 *   an attempt with this number (nothing was written); other database errors as Prisma raises them.
 */
export async function startAttempt(
  store: Store,
  a: NewAttempt & {
    taskFrom: TaskStatus;
    reason?: string;
    taskData?: Transition<'task'>['data'];
    /** Guarded writes applied first, in the same statement (e.g. the previous attempt's end). */
    before?: AnyTransition[];
    /** Guarded writes applied after the attempt is created, in the same statement (e.g. the job's status). */
    after?: AnyTransition[];
  },
  fence?: Fence,
): Promise<TransitionOutcome<Attempt>> {
  const before = a.before ?? [];
  const after = a.after ?? [];
  const task: Transition<'task'> = { entity: 'task', id: a.taskId, from: a.taskFrom, to: 'STARTING', reason: a.reason ?? null, data: a.taskData };
  const writes: AnyTransition[] = [...before, task, ...after];
  assertTransition('task', a.taskFrom, 'STARTING');
  assertBatch(writes);
  const steps: Step[] = [
    ...before.map((t): Step => ({ kind: 'write', t })),
    { kind: 'write', t: task },
    { kind: 'attempt', task: before.length, a },
    ...after.map((t): Step => ({ kind: 'write', t })),
  ];
  const done = await runBatch(store, steps, fence);
  if (!done) {
    const r = await firstLoser(store, writes, fence);
    // Reported as the attempt's outcome, with the loser's row whatever its kind.
    return r.reason === 'gone' ? { outcome: 'lost', reason: 'gone', ...(r.fenced ? { fenced: true as const } : {}) } : ({ outcome: 'lost', reason: r.reason, row: r.row } as unknown as TransitionOutcome<Attempt>);
  }
  const ai = before.length + 1;
  const logged: Array<{ t: AnyTransition | null; i: number }> = steps.map((s, i) => ({ t: s.kind === 'write' ? (i === before.length ? { ...task, reason: a.reason } : s.t) : null, i }));
  for (const { t, i } of logged) if (t) logApplied(t, done.events[i]);
  done.events.forEach((e, i) => store.bus.emit({ type: 'event', jobId: e.jobId, event: e, ...(i === ai ? {} : { row: done.rows[i] }) }));
  if (done.outbox > 0) store.bus.emit({ type: 'outbox', jobId: 0 });
  return { outcome: 'applied', row: done.rows[ai] as Attempt, event: done.events[ai] };
}

/** Records the OS account an attempt runs as (Attempt.osUser; docs/design.md §16). */
export async function recordAttemptAccount(store: Store, attemptId: number, osUser: string): Promise<void> {
  await store.prisma.attempt.updateMany({ where: { id: attemptId }, data: { osUser } });
}
