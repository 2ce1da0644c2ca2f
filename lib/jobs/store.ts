import { EventEmitter } from 'node:events';
import { Prisma, type Attempt, type Job, type JobEvent, type PrismaClient, type Task } from '../generated/prisma/client';
import { logger } from '../log';
import { shared } from '../shared';
import { assertTransition, isTerminal, JOB_TERMINAL, type AttemptStatus, type Entity, type JobStatus, type TaskStatus } from './status';

/**
 * The guarded store: the only code that writes a status (DESIGN.md §3, rules 1–3, from the Ray
 * seed "Guard recovered monitors against stale job state").
 *
 * Every status write is a compare-and-set — `updateMany({ where: { id, status: expected } })` —
 * in the same transaction as the JobEvent row that records it. The outcome says what happened:
 * - `applied`: the row had the expected status and now has the new one (one JobEvent written);
 * - `lost`, reason `gone`: the row no longer exists (deleted) — stop; never re-create it;
 * - `lost`, reason `terminal`: the row is already terminal — keep it as it is;
 * - `lost`, reason `moved`: the row moved to another non-terminal status — `row` is fresh;
 *   the caller continues with it and drops whatever it observed under the old status.
 * Illegal transitions (lib/jobs/status.ts) throw IllegalTransitionError before any query.
 * The store never upserts and creates a job only in submitJob().
 */

/** A Prisma client or an interactive-transaction client. */
export type Db = PrismaClient | Prisma.TransactionClient;

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

/** The outcome of one guarded write. */
export type TransitionOutcome<R> =
  | { outcome: 'applied'; row: R; event: JobEvent }
  | { outcome: 'lost'; reason: 'gone' }
  | { outcome: 'lost'; reason: 'terminal' | 'moved'; row: R };

/** The outcome of several guarded writes applied all-or-nothing. */
export type BatchOutcome =
  | { outcome: 'applied'; rows: Array<Job | Task | Attempt>; events: JobEvent[] }
  | { outcome: 'lost'; index: number; reason: 'gone' }
  | { outcome: 'lost'; index: number; reason: 'terminal' | 'moved'; row: Job | Task | Attempt };

/** What the store announces after a commit (the WebSocket hub and the monitor listen). */
export interface StoreEvent {
  type: 'event' | 'created' | 'deleted';
  jobId: number;
  /** The JobEvent row, for `event` and `created`. */
  event?: JobEvent;
  /**
   * For `event` of a status write: the job, task or attempt row exactly as that write left it
   * (what `RETURNING` gave), so a listener needs no read of its own. Absent for rows the write
   * created (a new attempt) and for `created` / `deleted`.
   */
  row?: Job | Task | Attempt;
  /** For `created`: what admission needs of the new job (Job.cpus, Job.executor). */
  job?: Pick<Job, 'cpus' | 'executor'>;
}

/**
 * The process-wide store bus: emits `change` with a StoreEvent after each committed write.
 * Listeners must not throw.
 */
export function storeBus(): EventEmitter {
  const s = shared();
  if (!s.storeBus) {
    const bus = new EventEmitter();
    bus.setMaxListeners(0);
    s.storeBus = bus;
  }
  return s.storeBus as EventEmitter;
}

function emit(e: StoreEvent): void {
  try {
    storeBus().emit('change', e);
  } catch (err) {
    logger().error({ err, jobId: e.jobId }, 'store listener threw');
  }
}

class Lost extends Error {
  constructor(
    readonly index: number,
    readonly result: Exclude<TransitionOutcome<Job | Task | Attempt>, { outcome: 'applied' }>,
  ) {
    super('lost race');
  }
}

function delegate(tx: Prisma.TransactionClient, entity: Entity) {
  // The three delegates share the calls used here; one typed view keeps the code single.
  return (entity === 'job' ? tx.job : entity === 'task' ? tx.task : tx.attempt) as unknown as {
    updateManyAndReturn(args: { where: { id: number; status: string }; data: Record<string, unknown> }): Promise<Array<Job | Task | Attempt>>;
    findUnique(args: { where: { id: number } }): Promise<(Job | Task | Attempt) | null>;
  };
}

/**
 * One guarded write inside a transaction: `UPDATE … WHERE id AND status = from RETURNING *` (one
 * statement); only a lost race reads the row again to say why (gone / terminal / moved).
 * Returns the written row and its JobEvent, to be inserted with the others by insertEvents().
 * `taskIndex` maps task ids to their index for attempt events (filled by task writes of the same
 * batch; looked up otherwise).
 */
async function writeOne(
  tx: Prisma.TransactionClient,
  t: AnyTransition,
  index: number,
  taskIndex: Map<number, number>,
): Promise<{ row: Job | Task | Attempt; event: Prisma.JobEventCreateManyInput }> {
  const d = delegate(tx, t.entity);
  const data: Record<string, unknown> = { ...(t.data ?? {}), status: t.to };
  if (t.reason !== undefined) data.statusReason = t.reason;
  if (t.entity === 'job') data.updatedAt = new Date();
  const written = await d.updateManyAndReturn({ where: { id: t.id, status: t.from }, data });
  const row = written[0];
  if (!row) {
    const now = await d.findUnique({ where: { id: t.id } });
    if (!now) throw new Lost(index, { outcome: 'lost', reason: 'gone' });
    throw new Lost(index, { outcome: 'lost', reason: isTerminal(t.entity, now.status) ? 'terminal' : 'moved', row: now });
  }
  let jobId: number;
  let ti: number | null = null;
  let attemptNumber: number | null = null;
  if (t.entity === 'job') jobId = row.id;
  else if (t.entity === 'task') {
    jobId = (row as Task).jobId;
    ti = (row as Task).index;
    taskIndex.set(row.id, ti);
  } else {
    const a = row as Attempt;
    jobId = a.jobId;
    attemptNumber = a.number;
    ti = taskIndex.get(a.taskId) ?? (await tx.task.findUnique({ where: { id: a.taskId }, select: { index: true } }))?.index ?? null;
  }
  return { row, event: { jobId, entity: t.entity, taskIndex: ti, attemptNumber, from: t.from, to: t.to, reason: t.reason ?? null } };
}

/**
 * Inserts a transaction's JobEvents in one statement, answered in the order given (a multi-row
 * INSERT takes its serial ids in row order: sorted by id = the order of `data`).
 */
async function insertEvents(tx: Prisma.TransactionClient, data: Prisma.JobEventCreateManyInput[]): Promise<JobEvent[]> {
  if (data.length === 0) return [];
  const evs = await tx.jobEvent.createManyAndReturn({ data });
  return evs.sort((x, y) => x.id - y.id);
}

function logApplied(t: AnyTransition, event: JobEvent): void {
  const where = t.entity === 'job' ? '' : t.entity === 'task' ? ` task ${event.taskIndex}` : ` task ${event.taskIndex} attempt ${event.attemptNumber}`;
  logger().info(
    { jobId: event.jobId, entity: t.entity, id: t.id, from: t.from, to: t.to, reason: t.reason ?? undefined },
    `job ${event.jobId}${where}: ${t.from} → ${t.to}${t.reason ? ` (${t.reason})` : ''}`,
  );
}

/**
 * An interactive-transaction client? Prisma 7's has `$transaction` too (nested transactions), so
 * that cannot tell; it lacks `$disconnect` (Prisma's itxClientDenyList: $connect, $disconnect,
 * $on, $use, $extends).
 */
function isTx(db: Db): db is Prisma.TransactionClient {
  return typeof (db as PrismaClient).$disconnect !== 'function';
}

/**
 * Applies several guarded writes in one transaction, all or nothing: if any write loses its
 * race, nothing is written and the outcome names the first loser (with its fresh row).
 * Each applied write leaves exactly one JobEvent; events are announced on storeBus() after the
 * commit. When `db` is already a transaction client, runs inside it (the caller commits; no
 * announcement is made — use only for composition inside the store's own helpers).
 *
 * @throws IllegalTransitionError (before any query) when a write is not in the table.
 */
export async function transitionMany(db: Db, transitions: AnyTransition[]): Promise<BatchOutcome> {
  for (const t of transitions) assertTransition(t.entity, t.from, t.to);
  const run = async (tx: Prisma.TransactionClient) => {
    const rows: Array<Job | Task | Attempt> = [];
    const data: Prisma.JobEventCreateManyInput[] = [];
    const taskIndex = new Map<number, number>();
    for (let i = 0; i < transitions.length; i++) {
      const r = await writeOne(tx, transitions[i], i, taskIndex);
      rows.push(r.row);
      data.push(r.event);
    }
    return { rows, events: await insertEvents(tx, data) };
  };
  try {
    const { rows, events } = isTx(db) ? await run(db) : await (db as PrismaClient).$transaction(run);
    transitions.forEach((t, i) => logApplied(t, events[i]));
    if (!isTx(db)) events.forEach((e, i) => emit({ type: 'event', jobId: e.jobId, event: e, row: rows[i] }));
    return { outcome: 'applied', rows, events };
  } catch (err) {
    if (err instanceof Lost) {
      const r = err.result;
      return r.reason === 'gone' ? { outcome: 'lost', index: err.index, reason: 'gone' } : { outcome: 'lost', index: err.index, reason: r.reason, row: r.row };
    }
    throw err;
  }
}

/**
 * One guarded status write (see the module comment for the outcomes).
 * @throws IllegalTransitionError before any query when `from → to` is not allowed.
 */
export async function transition<E extends Entity>(db: Db, t: Transition<E>): Promise<TransitionOutcome<RowOf<E>>> {
  const r = await transitionMany(db, [t as unknown as AnyTransition]);
  if (r.outcome === 'applied') return { outcome: 'applied', row: r.rows[0] as RowOf<E>, event: r.events[0] };
  if (r.reason === 'gone') return { outcome: 'lost', reason: 'gone' };
  return { outcome: 'lost', reason: r.reason, row: r.row as RowOf<E> };
}

/** Guarded job status write. See transition(). */
export function transitionJob(db: Db, id: number, from: JobStatus, to: JobStatus, opts: { reason?: string | null; data?: Transition<'job'>['data'] } = {}) {
  return transition(db, { entity: 'job', id, from, to, ...opts });
}

/** Guarded task status write. See transition(). */
export function transitionTask(db: Db, id: number, from: TaskStatus, to: TaskStatus, opts: { reason?: string | null; data?: Transition<'task'>['data'] } = {}) {
  return transition(db, { entity: 'task', id, from, to, ...opts });
}

/** Guarded attempt status write. See transition(). */
export function transitionAttempt(db: Db, id: number, from: AttemptStatus, to: AttemptStatus, opts: { reason?: string | null; data?: Transition<'attempt'>['data'] } = {}) {
  return transition(db, { entity: 'attempt', id, from, to, ...opts });
}

/** A task of a new job, as submitJob() stores it. */
export interface NewTask {
  name?: string | null;
  /** The task's normalized spec (lib/jobs/spec). */
  spec: Prisma.InputJsonValue;
}

/** A new job, as submitJob() stores it. */
export interface NewJob {
  name: string;
  submissionId?: string | null;
  specYaml: string;
  spec: Prisma.InputJsonValue;
  specHash: string;
  cpus: number;
  metadata?: Prisma.InputJsonValue;
  executor?: string;
  tasks: NewTask[];
}

/**
 * Creates a job in PENDING with its tasks (PENDING) and the first JobEvent ("submitted"), then
 * announces `created` on the store bus. The only place a job row is created.
 *
 * One SQL statement (data-modifying CTEs: atomic like a transaction) writes the three tables and
 * answers only the new ids: one database round trip per submit instead of seven for Prisma's
 * nested create (BEGIN, INSERT ×3, re-read of job and tasks, COMMIT). Every column is written
 * explicitly, so the returned rows — built here from the input and those ids, typed as the Prisma
 * models so a new column cannot be forgotten — are what a read would answer; JSON values are
 * returned as stored (JSON round trip). Timestamps are one `new Date()` (ms, stored as UTC like
 * Prisma does), shared by submittedAt, updatedAt and the event's `at`.
 *
 * @returns the job with its tasks in index order.
 * @throws Error when `tasks` is empty; Prisma's P2002 PrismaClientKnownRequestError (meta.target
 *   ['submissionId']) when `submissionId` is already taken — nothing was written (callers answer
 *   idempotently); other database errors as Prisma raises them.
 */
export async function submitJob(db: PrismaClient, job: NewJob): Promise<Job & { tasks: Task[] }> {
  if (job.tasks.length === 0) throw new Error('a job needs at least one task');
  const now = new Date();
  // TIMESTAMP(3) columns hold UTC wall time (Prisma's convention); a literal without a zone is exact.
  const at = now.toISOString().replace('T', ' ').replace('Z', '');
  const specJson = JSON.stringify(job.spec);
  const metadataJson = job.metadata === undefined || job.metadata === null ? null : JSON.stringify(job.metadata);
  const tasksJson = JSON.stringify(job.tasks.map((t) => ({ name: t.name ?? null, spec: t.spec })));
  const executor = job.executor ?? 'local';
  const submissionId = job.submissionId ?? null;
  let ids: { jobId: number; eventId: number; taskIds: number[] };
  try {
    const rows = await db.$queryRaw<Array<{ jobId: number; eventId: number; taskIds: number[] }>>(Prisma.sql`
      WITH j AS (
        INSERT INTO "Job" ("submissionId", "name", "status", "statusReason", "specYaml", "spec", "specHash", "cpus", "metadata", "executor",
                           "submittedAt", "startedAt", "endedAt", "updatedAt", "cancelRequestedAt", "restartCount", "recoveryCount", "currentTask", "taskCount")
        VALUES (${submissionId}, ${job.name}, 'PENDING', NULL, ${job.specYaml}, ${specJson}::jsonb, ${job.specHash}, ${job.cpus}::float8, ${metadataJson}::jsonb, ${executor},
                ${at}::timestamp(3), NULL, NULL, ${at}::timestamp(3), NULL, 0, 0, 0, ${job.tasks.length}::int)
        RETURNING "id"
      ), t AS (
        INSERT INTO "Task" ("jobId", "index", "name", "status", "statusReason", "spec", "restarts", "recoveries", "exitCode", "startedAt", "endedAt")
        SELECT j."id", (x.i - 1)::int, x.v->>'name', 'PENDING', NULL, x.v->'spec', 0, 0, NULL, NULL, NULL
        FROM j, jsonb_array_elements(${tasksJson}::jsonb) WITH ORDINALITY AS x(v, i)
        RETURNING "id", "index"
      ), e AS (
        INSERT INTO "JobEvent" ("jobId", "at", "entity", "taskIndex", "attemptNumber", "from", "to", "reason")
        SELECT j."id", ${at}::timestamp(3), 'job', NULL, NULL, NULL, 'PENDING', 'submitted' FROM j
        RETURNING "id"
      )
      SELECT j."id" AS "jobId", e."id" AS "eventId", (SELECT array_agg(t."id" ORDER BY t."index") FROM t) AS "taskIds" FROM j, e`);
    ids = rows[0];
  } catch (err) {
    throw uniqueViolationAsP2002(err);
  }
  const row: Job = {
    id: ids.jobId,
    submissionId,
    name: job.name,
    status: 'PENDING',
    statusReason: null,
    specYaml: job.specYaml,
    spec: JSON.parse(specJson),
    specHash: job.specHash,
    cpus: job.cpus,
    metadata: metadataJson === null ? null : JSON.parse(metadataJson),
    executor,
    submittedAt: now,
    startedAt: null,
    endedAt: null,
    updatedAt: now,
    cancelRequestedAt: null,
    restartCount: 0,
    recoveryCount: 0,
    currentTask: 0,
    taskCount: job.tasks.length,
  };
  const tasks: Task[] = job.tasks.map((t, index) => ({
    id: ids.taskIds[index],
    jobId: row.id,
    index,
    name: t.name ?? null,
    status: 'PENDING',
    statusReason: null,
    spec: JSON.parse(JSON.stringify(t.spec)),
    restarts: 0,
    recoveries: 0,
    exitCode: null,
    startedAt: null,
    endedAt: null,
  }));
  const event: JobEvent = { id: ids.eventId, jobId: row.id, at: now, entity: 'job', taskIndex: null, attemptNumber: null, from: null, to: 'PENDING', reason: 'submitted' };
  logger().info({ jobId: row.id, name: row.name, tasks: job.tasks.length }, `job ${row.id}: submitted (${row.name})`);
  emit({ type: 'created', jobId: row.id, event, job: { cpus: row.cpus, executor: row.executor } });
  return { ...row, tasks };
}

/**
 * A raw query's unique violation (Prisma P2010, driver error 23505 / UniqueConstraintViolation)
 * as the P2002 error Prisma's model calls raise, so callers keep one check. In submitJob()'s
 * statement only Job.submissionId can collide (ids are fresh, task indexes distinct).
 */
function uniqueViolationAsP2002(err: unknown): unknown {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2010') return err;
  const cause = (err.meta?.driverAdapterError as { cause?: { kind?: string; originalCode?: string } } | undefined)?.cause;
  if (cause?.kind !== 'UniqueConstraintViolation' && cause?.originalCode !== '23505' && !/\b23505\b/.test(err.message)) return err;
  return new Prisma.PrismaClientKnownRequestError('Unique constraint failed on the fields: (`submissionId`)', {
    code: 'P2002',
    clientVersion: err.clientVersion,
    meta: { modelName: 'Job', target: ['submissionId'] },
  });
}

/** A new attempt, as createAttempt() stores it. */
export interface NewAttempt {
  taskId: number;
  /** 1-based; unique per task. */
  number: number;
  cause: 'first' | 'restart' | 'recovery';
  executor?: string;
  logPath?: string | null;
}

/**
 * Starts a task attempt: moves the task `from → STARTING` (guarded) and creates the attempt in
 * STARTING, in one transaction, with a JobEvent for each. Loses like any guarded write — a
 * deleted or terminal task never gets an attempt. `before` / `after` add guarded writes to the
 * same transaction (the monitor ends the previous attempt and moves the job with the new
 * attempt, all or nothing); if any of them loses, nothing is written and the outcome is `lost`.
 * @throws IllegalTransitionError when `from → STARTING` (or a `before`/`after` write) is not allowed.
 */
export async function startAttempt(
  db: PrismaClient,
  a: NewAttempt & {
    taskFrom: TaskStatus;
    reason?: string;
    taskData?: Transition<'task'>['data'];
    /** Guarded writes applied first, in the same transaction (e.g. the previous attempt's end). */
    before?: AnyTransition[];
    /** Guarded writes applied after the attempt is created, in the same transaction (e.g. the job's status). */
    after?: AnyTransition[];
  },
): Promise<TransitionOutcome<Attempt>> {
  assertTransition('task', a.taskFrom, 'STARTING');
  const before = a.before ?? [];
  const after = a.after ?? [];
  for (const t of [...before, ...after]) assertTransition(t.entity, t.from, t.to);
  try {
    const res = await db.$transaction(async (tx) => {
      // Every write first, then all their events in one INSERT, in this order.
      const taskIndex = new Map<number, number>();
      const data: Prisma.JobEventCreateManyInput[] = [];
      const beforeRows: Array<Job | Task | Attempt> = [];
      for (let i = 0; i < before.length; i++) {
        const w = await writeOne(tx, before[i], i, taskIndex);
        data.push(w.event);
        beforeRows.push(w.row);
      }
      const t = await writeOne(tx, { entity: 'task', id: a.taskId, from: a.taskFrom, to: 'STARTING', reason: a.reason ?? null, data: a.taskData }, before.length, taskIndex);
      const task = t.row as Task;
      data.push(t.event);
      const attempt = await tx.attempt.create({
        data: { jobId: task.jobId, taskId: task.id, number: a.number, cause: a.cause, executor: a.executor ?? 'local', logPath: a.logPath ?? null },
      });
      data.push({ jobId: task.jobId, entity: 'attempt', taskIndex: task.index, attemptNumber: a.number, from: null, to: 'STARTING', reason: a.cause });
      for (let i = 0; i < after.length; i++) data.push((await writeOne(tx, after[i], before.length + 1 + i, taskIndex)).event);
      const evs = await insertEvents(tx, data);
      const pre = before.map((b, i) => ({ t: b, event: evs[i], row: beforeRows[i] }));
      const post = after.map((b, i) => ({ t: b, event: evs[before.length + 2 + i] }));
      return { pre, taskEvent: evs[before.length], attempt, event: evs[before.length + 1], post };
    });
    for (const p of res.pre) logApplied(p.t, p.event);
    logApplied({ entity: 'task', id: a.taskId, from: a.taskFrom, to: 'STARTING', reason: a.reason }, res.taskEvent);
    for (const p of res.post) logApplied(p.t, p.event);
    for (const p of res.pre) emit({ type: 'event', jobId: p.event.jobId, event: p.event, row: p.row });
    emit({ type: 'event', jobId: res.event.jobId, event: res.taskEvent });
    emit({ type: 'event', jobId: res.event.jobId, event: res.event });
    for (const p of res.post) emit({ type: 'event', jobId: p.event.jobId, event: p.event });
    return { outcome: 'applied', row: res.attempt, event: res.event };
  } catch (err) {
    if (err instanceof Lost) {
      const r = err.result;
      // The task lost; report it as the attempt's outcome with no row of the attempt's kind.
      return r.reason === 'gone' ? { outcome: 'lost', reason: 'gone' } : ({ outcome: 'lost', reason: r.reason, row: r.row } as unknown as TransitionOutcome<Attempt>);
    }
    throw err;
  }
}

/** A set write over many jobs: see transitionJobsWhere(). */
export interface JobsWhere {
  ids: number[];
  from: JobStatus;
  to: JobStatus;
  reason?: string | null;
  data?: Omit<Prisma.JobUncheckedUpdateManyInput, 'status' | 'id'>;
  /** Also move these jobs' tasks that are in `tasks.from` (same transaction). */
  tasks?: { from: TaskStatus; to: TaskStatus; reason?: string | null; data?: Omit<Prisma.TaskUncheckedUpdateManyInput, 'status' | 'id'> };
}

/**
 * Guarded set write over many jobs at once (batch cancel): every job of `ids` whose status is
 * `from` moves to `to` — one `UPDATE … WHERE id IN (…) AND status = from RETURNING id` per chunk
 * of 1000, the guard in the WHERE clause — and, with `tasks`, those jobs' tasks in `tasks.from`
 * move to `tasks.to` in the same transaction. One JobEvent per row written (per job: its tasks'
 * events, then the job's), announced after each commit. Jobs not in `from` (moved, terminal,
 * gone) are simply not in `applied`: the caller re-reads them.
 * @throws IllegalTransitionError before any query when a transition is not allowed.
 */
export async function transitionJobsWhere(db: PrismaClient, b: JobsWhere): Promise<{ applied: number[]; events: JobEvent[] }> {
  assertTransition('job', b.from, b.to);
  if (b.tasks) assertTransition('task', b.tasks.from, b.tasks.to);
  const applied: number[] = [];
  const events: JobEvent[] = [];
  const ids = [...new Set(b.ids)];
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    const res = await db.$transaction(async (tx) => {
      const jobs = await tx.job.updateManyAndReturn({
        where: { id: { in: chunk }, status: b.from },
        data: { ...(b.data ?? {}), status: b.to, ...(b.reason !== undefined ? { statusReason: b.reason } : {}), updatedAt: new Date() },
        select: { id: true },
      });
      const jobIds = jobs.map((j) => j.id).sort((x, y) => x - y);
      if (jobIds.length === 0) return { jobIds, events: [] as JobEvent[] };
      const byJob = new Map<number, Prisma.JobEventCreateManyInput[]>(jobIds.map((id) => [id, []]));
      if (b.tasks) {
        const t = b.tasks;
        const rows = await tx.task.updateManyAndReturn({
          where: { jobId: { in: jobIds }, status: t.from },
          data: { ...(t.data ?? {}), status: t.to, ...(t.reason !== undefined ? { statusReason: t.reason } : {}) },
          select: { jobId: true, index: true },
        });
        rows.sort((x, y) => x.jobId - y.jobId || x.index - y.index);
        for (const r of rows) byJob.get(r.jobId)!.push({ jobId: r.jobId, entity: 'task', taskIndex: r.index, from: t.from, to: t.to, reason: t.reason ?? null });
      }
      const data: Prisma.JobEventCreateManyInput[] = [];
      for (const id of jobIds) data.push(...byJob.get(id)!, { jobId: id, entity: 'job', from: b.from, to: b.to, reason: b.reason ?? null });
      const evs = await tx.jobEvent.createManyAndReturn({ data });
      return { jobIds, events: evs.sort((x, y) => x.id - y.id) };
    });
    applied.push(...res.jobIds);
    events.push(...res.events);
    if (res.jobIds.length) {
      logger().info({ jobs: res.jobIds.length, from: b.from, to: b.to, reason: b.reason ?? undefined }, `${res.jobIds.length} jobs: ${b.from} → ${b.to}${b.reason ? ` (${b.reason})` : ''}`);
    }
    for (const e of res.events) emit({ type: 'event', jobId: e.jobId, event: e });
  }
  return { applied, events };
}

/**
 * Deletes terminal jobs (with their tasks, attempts and events, by cascade). Non-terminal ids
 * are left alone and reported, so a running job is never deleted from under its monitor.
 * @returns the ids deleted and the ids refused because they were not terminal (or missing).
 */
export async function deleteTerminalJobs(db: PrismaClient, ids: number[]): Promise<{ deleted: number[]; refused: number[] }> {
  if (ids.length === 0) return { deleted: [], refused: [] };
  const terminal = [...JOB_TERMINAL];
  const deleted = await db.$transaction(async (tx) => {
    const rows = await tx.job.findMany({ where: { id: { in: ids }, status: { in: terminal } }, select: { id: true } });
    const found = rows.map((r) => r.id);
    if (found.length) await tx.job.deleteMany({ where: { id: { in: found }, status: { in: terminal } } });
    return found;
  });
  for (const id of deleted) {
    logger().info({ jobId: id }, `job ${id}: deleted`);
    emit({ type: 'deleted', jobId: id });
  }
  const set = new Set(deleted);
  return { deleted, refused: ids.filter((id) => !set.has(id)) };
}
