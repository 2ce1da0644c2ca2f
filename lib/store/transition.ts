import type { Attempt, Job, JobEvent, Prisma, Task } from '../generated/prisma/client';
import { logger } from '../log';
import { assertTransition, isTerminal, type AttemptStatus, type Entity, type JobStatus, type TaskStatus } from '../jobs/status';
import type { ColumnTable } from './columns';
import { outboxInsert, webhookEventOf, type WebhookEvent } from './outbox';
import { anySubscription } from './webhook-subscriptions';
import { assignment, decodeRow, encodeValue, Params, pgTimestamp, uniqueViolationAsP2002 } from './sql';
import { queryPrepared } from './prepared';
import type { StoreScope } from './handle';

/**
 * The guarded write: the only code that writes a status (docs/design.md §4, "The guarded write";
 * the rules come from Ray's "Guard recovered monitors against stale job state"). A batch of
 * compare-and-set writes and their JobEvents is one SQL statement, all or nothing; the outcome is
 * `applied`, or `lost` with reason `gone` (stop, never re-create), `terminal` (keep it) or
 * `moved` (continue with the fresh `row`, drop what was observed under the old status). Illegal
 * transitions (lib/jobs/status.ts) throw IllegalTransitionError before any query.
 */

type RowOf<E extends Entity> = E extends 'job' ? Job : E extends 'task' ? Task : Attempt;
type UpdateOf<E extends Entity> = E extends 'job'
  ? Prisma.JobUncheckedUpdateManyInput
  : E extends 'task'
    ? Prisma.TaskUncheckedUpdateManyInput
    : Prisma.AttemptUncheckedUpdateManyInput;
type StatusFor<E extends Entity> = E extends 'job' ? JobStatus : E extends 'task' ? TaskStatus : AttemptStatus;

/** One guarded status write. `data` holds the other fields written with it (never `status`). */
export interface Transition<E extends Entity = Entity> {
  entity: E;
  id: number;
  from: StatusFor<E>;
  to: StatusFor<E>;
  /** Human-readable reason, stored on the row (`statusReason`) and in the JobEvent. */
  reason?: string | null;
  data?: Omit<UpdateOf<E>, 'status' | 'id'>;
}

/** A guarded write of any entity (a discriminated union on `entity`). */
export type AnyTransition = { [E in Entity]: Transition<E> }[Entity];

/**
 * The lease fence of an owner's write (docs/design.md "Replicas"): the write applies only while
 * job `jobId` is still owned by `ownerId` under `epoch`. A write that loses it comes back
 * `lost: gone` with `fenced: true` — for its writer the job is gone: another server owns it now.
 */
export interface Fence {
  jobId: number;
  ownerId: string;
  epoch: number;
}

/** The outcome of one guarded write. */
export type TransitionOutcome<R> =
  | { outcome: 'applied'; row: R; event: JobEvent }
  | { outcome: 'lost'; reason: 'gone'; fenced?: true }
  | { outcome: 'lost'; reason: 'terminal' | 'moved'; row: R };

/** The outcome of several guarded writes applied all-or-nothing. */
export type BatchOutcome =
  | { outcome: 'applied'; rows: Array<Job | Task | Attempt>; events: JobEvent[] }
  | { outcome: 'lost'; index: number; reason: 'gone'; fenced?: true }
  | { outcome: 'lost'; index: number; reason: 'terminal' | 'moved'; row: Job | Task | Attempt };

/** A new attempt, as startAttempt() (attempt.ts) creates it in the batch statement. */
export interface NewAttempt {
  taskId: number;
  /** 1-based; unique per task. */
  number: number;
  cause: 'first' | 'restart' | 'recovery';
  executor?: string;
  logPath?: string | null;
  /** GPUs the attempt holds in all (Attempt.gpus) and the devices it is given (Attempt.gpuGrant); absent: none. */
  gpus?: number | null;
  gpuGrant?: unknown;
}

/** One step of a batch statement: a guarded write, or the creation of an attempt of a task written by an earlier step. */
export type Step = { kind: 'write'; t: AnyTransition } | { kind: 'attempt'; task: number; a: NewAttempt };

/** Lock order of the guards: jobs, then tasks, then attempts (then by id). */
const RANK: Readonly<Record<Entity, number>> = { job: 0, task: 1, attempt: 2 };

/** The INSERT of a new attempt (a step `attempt`), from the task row its earlier step wrote. */
function attemptInsert(cols: ColumnTable, p: Params, i: number, s: Extract<Step, { kind: 'attempt' }>, at: string): { write: string; event: string } {
  const a = s.a;
  const number = encodeValue(cols.attempt, 'number', cols.attempt.columns.get('number')!, a.number);
  const gpus = encodeValue(cols.attempt, 'gpus', cols.attempt.columns.get('gpus')!, a.gpus ?? null);
  const grant = encodeValue(cols.attempt, 'gpuGrant', cols.attempt.columns.get('gpuGrant')!, a.gpuGrant ?? null);
  const write =
    `u${i} AS (INSERT INTO ${cols.attempt.table} ("jobId", "taskId", "number", "status", "statusReason", "cause", "executor", "executorRef", "pid", "pidStartTime", "exitCode", "logPath", "createdAt", "startedAt", "endedAt", "gpus", "gpuGrant")` +
    ` SELECT x."jobId", x."id", ${p.add(number, 'int')}, 'STARTING', NULL, ${p.add(a.cause, 'text')}, ${p.add(a.executor ?? 'local', 'text')}, NULL, NULL, NULL, NULL, ${p.add(a.logPath ?? null, 'text')}, ${at}, NULL, NULL, ${p.add(gpus, 'float8')}, ${p.add(grant, 'jsonb')}` +
    ` FROM u${s.task} x RETURNING *)`;
  const event = `SELECT ${i} AS k, x."jobId", 'attempt' AS "entity", x."index" AS "taskIndex", ${p.add(number, 'int')} AS "attemptNumber", NULL::text AS "from", 'STARTING'::text AS "to", ${p.add(a.cause, 'text')} AS "reason" FROM u${s.task} x`;
  return { write, event };
}

/** The guard, UPDATE and event source of one guarded write (step i). */
function guardedUpdate(cols: ColumnTable, p: Params, i: number, t: AnyTransition, now: Date): { guard: string; write: string; event: string } {
  const m = cols[t.entity];
  const statusCast = m.statusCast!;
  const id = p.add(t.id, 'int');
  const guard = `g${i} AS MATERIALIZED (SELECT "id" FROM ${m.table} WHERE "id" = ${id} AND "status" = ${p.add(t.from, statusCast)} FOR NO KEY UPDATE)`;
  const data: Record<string, unknown> = { ...(t.data ?? {}) };
  if (t.reason !== undefined) data.statusReason = t.reason;
  if (t.entity === 'job') data.updatedAt = now;
  const sets = [`"status" = ${p.add(t.to, statusCast)}`];
  for (const [column, v] of Object.entries(data)) {
    const a = assignment(p, m, column, v);
    if (a) sets.push(a);
  }
  const write = `u${i} AS (UPDATE ${m.table} SET ${sets.join(', ')} WHERE "id" = ${id} AND (SELECT ok FROM ok) RETURNING *)`;
  const source =
    t.entity === 'job'
      ? `x."id" AS "jobId", 'job' AS "entity", NULL::int AS "taskIndex", NULL::int AS "attemptNumber"`
      : t.entity === 'task'
        ? `x."jobId", 'task' AS "entity", x."index" AS "taskIndex", NULL::int AS "attemptNumber"`
        : `x."jobId", 'attempt' AS "entity", (SELECT y."index" FROM ${cols.task.table} y WHERE y."id" = x."taskId") AS "taskIndex", x."number" AS "attemptNumber"`;
  const event = `SELECT ${i} AS k, ${source}, ${p.add(t.from, 'text')} AS "from", ${p.add(t.to, 'text')} AS "to", ${p.add(t.reason ?? null, 'text')} AS "reason" FROM u${i} x`;
  return { guard, write, event };
}

/**
 * The whole batch as ONE SQL statement (data-modifying CTEs: atomic without a transaction):
 *
 *   g<i>  SELECT id FROM "<Table>" WHERE id = $ AND status = $from FOR NO KEY UPDATE   (per write)
 *   f     SELECT id FROM "Job" WHERE id = $ AND ownerId = $ AND leaseEpoch = $ FOR NO KEY UPDATE
 *         (the lease fence, only for an owner's write: one more guard)
 *   ok    true only when every guard found its row
 *   u<i>  UPDATE "<Table>" SET status, statusReason, data…, updatedAt (job)
 *         WHERE id = $ AND (SELECT ok FROM ok) RETURNING *                               (per write)
 *   u<i>  INSERT INTO "Attempt" … SELECT … FROM u<task> RETURNING *                      (startAttempt)
 *   e     INSERT INTO "JobEvent" … one row per step, in step order (serial ids in that order)
 *   w     each step's row as to_jsonb
 *   o     INSERT INTO the webhook outbox, one row per notifying event (only when subscribed)
 *   →     one result row per step, in step order: the event's typed columns and the row.
 *
 * Why this holds under concurrency (row locks re-checked on the newest version, `ok` as one
 * InitPlan, the fixed lock order jobs → tasks → attempts that rules out deadlocks):
 * docs/design.md §4. Each write's data is parameterised (`$n::<cast>`); table and column names
 * come from the column table only. All times written (job updatedAt, attempt createdAt, event
 * at) are `now`.
 */
function batchStatement(
  cols: ColumnTable,
  steps: Step[],
  now: Date,
  notices: ReadonlyArray<WebhookEvent | null>,
  fence?: Fence,
): { sql: string; params: unknown[] } {
  const p = new Params();
  const at = p.add(pgTimestamp(now), 'timestamp(3)');
  const ctes: string[] = [];
  const guards: Array<{ rank: number; id: number; name: string }> = [];
  const events: string[] = [];
  const rows: string[] = [];
  const writes: string[] = [];
  steps.forEach((s, i) => {
    if (s.kind === 'attempt') {
      const { write, event } = attemptInsert(cols, p, i, s, at);
      writes.push(write);
      events.push(event);
    } else {
      const { guard, write, event } = guardedUpdate(cols, p, i, s.t, now);
      ctes.push(guard);
      guards.push({ rank: RANK[s.t.entity], id: s.t.id, name: `g${i}` });
      writes.push(write);
      events.push(event);
    }
    const ent = s.kind === 'write' ? s.t.entity : 'attempt';
    rows.push(`SELECT ${i} AS k, '${ent}'::text AS ent, to_jsonb(x.*) AS "row" FROM u${i} x`);
  });
  if (fence) {
    // The fence is one more guard on the job's row, in the same lock order (jobs first).
    const f = `f AS MATERIALIZED (SELECT "id" FROM ${cols.job.table} WHERE "id" = ${p.add(fence.jobId, 'int')} AND "ownerId" = ${p.add(fence.ownerId, 'text')} AND "leaseEpoch" = ${p.add(fence.epoch, 'int')} FOR NO KEY UPDATE)`;
    ctes.push(f);
    guards.push({ rank: RANK.job, id: fence.jobId, name: 'f' });
  }
  guards.sort((x, y) => x.rank - y.rank || x.id - y.id);
  ctes.push(`ok AS MATERIALIZED (SELECT ${guards.length ? guards.map((g) => `EXISTS (SELECT FROM ${g.name})`).join(' AND ') : 'true'} AS ok)`);
  ctes.push(...writes);
  ctes.push(
    `e AS (INSERT INTO ${cols.event.table} ("jobId", "at", "entity", "taskIndex", "attemptNumber", "from", "to", "reason")` +
      ` SELECT x."jobId", ${at}, x."entity", x."taskIndex", x."attemptNumber", x."from", x."to", x."reason" FROM (${events.join(' UNION ALL ')}) x ORDER BY x.k RETURNING *)`,
  );
  ctes.push(`w AS (${rows.join(' UNION ALL ')})`);
  // The webhook outbox, in the same statement as the events that cause it (outbox.ts); only for
  // steps that are notifications.
  const typed = notices.flatMap((t, k) => (t ? [`(${k}, '${t}')`] : []));
  if (typed.length) {
    const events = `(SELECT x.*, n.t FROM (SELECT e.*, (row_number() OVER (ORDER BY e."id"))::int - 1 AS k FROM e) x JOIN (VALUES ${typed.join(', ')}) n(k, t) ON n.k = x.k)`;
    ctes.push(`o AS (${outboxInsert(events, 'w', at)})`);
  }
  // JobEvent's columns, selected typed (not through to_jsonb) so that Prisma decodes them itself.
  const eventColumns = [...cols.event.columns.keys()].map((c) => `e."${c}"`).join(', ');
  const sql =
    `WITH ${ctes.join(',\n')}\n` +
    `SELECT ${eventColumns}, w."row", ${typed.length ? '(SELECT count(*) FROM o)::int' : '0'} AS "outbox" FROM (SELECT e.*, (row_number() OVER (ORDER BY e."id"))::int - 1 AS k FROM e) e JOIN w ON w.k = e.k ORDER BY e."id"`;
  return { sql, params: p.values };
}

/** A statement's answer: per step, in step order, the JobEvent (typed by Prisma), the row's to_jsonb and the outbox rows inserted (the same on every row). */
type BatchRow = JobEvent & { row: Record<string, unknown>; outbox: number };

/**
 * Runs a batch statement; null (zero rows back) means a guard failed and nothing was written.
 * Raw query errors are mapped like Prisma's own calls (unique violation → P2002).
 */
export async function runBatch(store: StoreScope, steps: Step[], fence?: Fence): Promise<{ rows: Array<Job | Task | Attempt>; events: JobEvent[]; outbox: number } | null> {
  // Most writes are no notification; those that are carry the outbox only while a subscription exists.
  let notices = steps.map((s): WebhookEvent | null =>
    s.kind === 'attempt' ? webhookEventOf({ entity: 'attempt', from: null, to: 'STARTING', reason: s.a.cause }) : webhookEventOf(s.t),
  );
  if (notices.some((n) => n !== null) && !(await anySubscription(store))) notices = notices.map(() => null);
  const { sql, params } = batchStatement(store.columns, steps, new Date(), notices, fence);
  let got: BatchRow[];
  try {
    got = await queryPrepared<BatchRow>(store.prisma, store.prepared, sql, params);
  } catch (err) {
    throw uniqueViolationAsP2002(err);
  }
  if (got.length === 0) return null;
  if (got.length !== steps.length) throw new Error(`store: a batch of ${steps.length} writes answered ${got.length} rows`);
  const rows = got.map((r, i) => {
    const s = steps[i];
    return decodeRow<Job | Task | Attempt>(store.columns[s.kind === 'write' ? s.t.entity : 'attempt'], r.row);
  });
  const events = got.map(({ row: _row, outbox: _outbox, ...e }) => e as JobEvent);
  return { rows, events, outbox: Number(got[0].outbox) };
}

/**
 * After a batch wrote nothing: `gone` with `fenced` when the writer's lease of the job is lost
 * (`fence`), else the first of `transitions` (in their order) that lost — `gone` (no row), else `terminal` / `moved` with the fresh row (its status is not `from`) — from one
 * read of all their rows. When every row reads as expected again (a concurrent writer moved
 * a row back to `from`, or committed just after the statement's snapshot), the first transition
 * is reported `moved` with its fresh row: nothing was written, the caller re-reads.
 */
export async function firstLoser(store: StoreScope, transitions: AnyTransition[], fence?: Fence): Promise<Extract<BatchOutcome, { outcome: 'lost' }>> {
  const cols = store.columns;
  if (fence) {
    const own = await store.prisma.job.findUnique({ where: { id: fence.jobId }, select: { ownerId: true, leaseEpoch: true } });
    if (!own || own.ownerId !== fence.ownerId || own.leaseEpoch !== fence.epoch) return { outcome: 'lost', index: 0, reason: 'gone', fenced: true };
  }
  const p = new Params();
  const parts = transitions.map((t, i) => `SELECT ${i} AS k, to_jsonb(x.*) AS "row" FROM ${cols[t.entity].table} x WHERE x."id" = ${p.add(t.id, 'int')}`);
  const got = await store.prisma.$queryRawUnsafe<Array<{ k: number; row: Record<string, unknown> }>>(parts.join(' UNION ALL '), ...p.values);
  const fresh = new Map(got.map((r) => [Number(r.k), r.row]));
  for (let i = 0; i < transitions.length; i++) {
    const t = transitions[i];
    const json = fresh.get(i);
    if (!json) return { outcome: 'lost', index: i, reason: 'gone' };
    if (json.status !== t.from) {
      return { outcome: 'lost', index: i, reason: isTerminal(t.entity, json.status as string) ? 'terminal' : 'moved', row: decodeRow(cols[t.entity], json) };
    }
  }
  return { outcome: 'lost', index: 0, reason: 'moved', row: decodeRow(cols[transitions[0].entity], fresh.get(0)!) };
}

/**
 * Checks a batch before any query: every transition in the status table, and no row written
 * twice (one statement cannot write a row twice: write the final status once instead).
 * @throws IllegalTransitionError; Error naming the row written twice.
 */
export function assertBatch(transitions: AnyTransition[]): void {
  for (const t of transitions) assertTransition(t.entity, t.from, t.to);
  const seen = new Set<string>();
  for (const t of transitions) {
    const key = `${t.entity} ${t.id}`;
    if (seen.has(key)) throw new Error(`store: a batch writes ${key} twice`);
    seen.add(key);
  }
}

/** Logs one applied write (`job 7 task 0: RUNNING → FAILED (exit code 1)`). */
export function logApplied(t: AnyTransition, event: JobEvent): void {
  const where = t.entity === 'job' ? '' : t.entity === 'task' ? ` task ${event.taskIndex}` : ` task ${event.taskIndex} attempt ${event.attemptNumber}`;
  logger().info(
    { jobId: event.jobId, entity: t.entity, id: t.id, from: t.from, to: t.to, reason: t.reason ?? undefined },
    `job ${event.jobId}${where}: ${t.from} → ${t.to}${t.reason ? ` (${t.reason})` : ''}`,
  );
}

/**
 * Applies several guarded writes all or nothing: if any write loses its race, nothing is
 * written and the outcome names the first loser in the order given (with its fresh row).
 * Each applied write leaves exactly one JobEvent (serial ids in the order given); `rows[i]` and
 * `events[i]` are transition i's row as written and its event. Events are announced on the
 * store's bus after the commit.
 *
 * `fence` (a lease owner's write, docs/design.md "Replicas"): one more guard in the same
 * statement — the job is still owned by `fence.ownerId` under `fence.epoch` — else `lost: gone`
 * with `fenced: true`. Without it (one server, or a non-owner's durable request) nothing changes.
 *
 * Costs one SQL statement (batchStatement(): guards, updates and the events' insert as
 * data-modifying CTEs) — one database round trip, no interactive transaction — plus one read
 * when the batch lost. On a store inside a transaction (inTransaction()), the statement runs
 * inside it (the caller commits; no announcement is made).
 *
 * @throws IllegalTransitionError (before any query) when a write is not in the table; Error
 *   (before any query) when the batch writes one row twice, or a `data` entry names a column
 *   the entity does not have (or `id`); TypeError (before any query) for a `data` value its
 *   column cannot hold; database errors as Prisma raises them.
 */
export async function transitionMany(store: StoreScope, transitions: AnyTransition[], fence?: Fence): Promise<BatchOutcome> {
  assertBatch(transitions);
  if (transitions.length === 0) return { outcome: 'applied', rows: [], events: [] };
  const done = await runBatch(
    store,
    transitions.map((t) => ({ kind: 'write', t })),
    fence,
  );
  if (!done) return firstLoser(store, transitions, fence);
  const { rows, events } = done;
  transitions.forEach((t, i) => logApplied(t, events[i]));
  const bus = store.bus;
  if (bus) {
    events.forEach((e, i) => bus.emit({ type: 'event', jobId: e.jobId, event: e, row: rows[i] }));
    if (done.outbox > 0) bus.emit({ type: 'outbox', jobId: 0 });
  }
  return { outcome: 'applied', rows, events };
}

/**
 * One guarded status write (see the module comment for the outcomes).
 * @throws IllegalTransitionError before any query when `from → to` is not allowed.
 */
export async function transition<E extends Entity>(store: StoreScope, t: Transition<E>): Promise<TransitionOutcome<RowOf<E>>> {
  const r = await transitionMany(store, [t as unknown as AnyTransition]);
  if (r.outcome === 'applied') return { outcome: 'applied', row: r.rows[0] as RowOf<E>, event: r.events[0] };
  if (r.reason === 'gone') return { outcome: 'lost', reason: 'gone', ...(r.fenced ? { fenced: true as const } : {}) };
  return { outcome: 'lost', reason: r.reason, row: r.row as RowOf<E> };
}

/** Guarded job status write. See transition(). */
export function transitionJob(store: StoreScope, id: number, from: JobStatus, to: JobStatus, opts: { reason?: string | null; data?: Transition<'job'>['data'] } = {}) {
  return transition(store, { entity: 'job', id, from, to, ...opts });
}

/** Guarded task status write. See transition(). */
export function transitionTask(store: StoreScope, id: number, from: TaskStatus, to: TaskStatus, opts: { reason?: string | null; data?: Transition<'task'>['data'] } = {}) {
  return transition(store, { entity: 'task', id, from, to, ...opts });
}

/** Guarded attempt status write. See transition(). */
export function transitionAttempt(
  store: StoreScope,
  id: number,
  from: AttemptStatus,
  to: AttemptStatus,
  opts: { reason?: string | null; data?: Transition<'attempt'>['data'] } = {},
) {
  return transition(store, { entity: 'attempt', id, from, to, ...opts });
}
