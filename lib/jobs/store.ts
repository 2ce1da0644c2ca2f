import { EventEmitter } from 'node:events';
import { Prisma, type Attempt, type Job, type JobEvent, type PrismaClient, type Task } from '../generated/prisma/client';
import { logger } from '../log';
import { shared } from '../shared';
import { assertTransition, isTerminal, JOB_TERMINAL, type AttemptStatus, type Entity, type JobStatus, type TaskStatus } from './status';

/**
 * The guarded store: the only code that writes a status (DESIGN.md §3, rules 1–3, from the Ray
 * seed "Guard recovered monitors against stale job state").
 *
 * Every status write is a compare-and-set — the row is locked only if `id = $id AND status =
 * $expected`, and written only then — in the same SQL statement as the JobEvent row that records
 * it (one statement per batch of writes, all or nothing: batchStatement()). The outcome says what
 * happened:
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

/**
 * SQL type of a column: how the batch statement casts a parameter written to it and how
 * decodeRow() turns its `to_jsonb` value back into what Prisma answers.
 */
type ColumnType = 'int' | 'float8' | 'text' | 'jsonb' | 'timestamp' | 'status';

/**
 * The store's raw SQL knowledge of the tables, in one place: per entity its table, its status
 * enum type and the SQL type of every column of its Prisma model (`satisfies Record<keyof Model,
 * …>`: a column added to the schema and not here, or named here and not in the schema, does not
 * compile). tests/integration/store-batch.test.ts checks the decoded rows against Prisma reads.
 */
const MODELS = {
  job: {
    table: 'Job',
    statusType: 'JobStatus',
    columns: {
      id: 'int',
      submissionId: 'text',
      name: 'text',
      status: 'status',
      statusReason: 'text',
      specYaml: 'text',
      spec: 'jsonb',
      specHash: 'text',
      cpus: 'float8',
      metadata: 'jsonb',
      executor: 'text',
      submittedAt: 'timestamp',
      startedAt: 'timestamp',
      endedAt: 'timestamp',
      updatedAt: 'timestamp',
      cancelRequestedAt: 'timestamp',
      restartCount: 'int',
      recoveryCount: 'int',
      currentTask: 'int',
      taskCount: 'int',
    } satisfies Record<keyof Job, ColumnType>,
  },
  task: {
    table: 'Task',
    statusType: 'TaskStatus',
    columns: {
      id: 'int',
      jobId: 'int',
      index: 'int',
      name: 'text',
      status: 'status',
      statusReason: 'text',
      spec: 'jsonb',
      restarts: 'int',
      recoveries: 'int',
      exitCode: 'int',
      startedAt: 'timestamp',
      endedAt: 'timestamp',
    } satisfies Record<keyof Task, ColumnType>,
  },
  attempt: {
    table: 'Attempt',
    statusType: 'AttemptStatus',
    columns: {
      id: 'int',
      jobId: 'int',
      taskId: 'int',
      number: 'int',
      status: 'status',
      statusReason: 'text',
      cause: 'text',
      executor: 'text',
      executorRef: 'text',
      pid: 'int',
      pidStartTime: 'text',
      exitCode: 'int',
      logPath: 'text',
      createdAt: 'timestamp',
      startedAt: 'timestamp',
      endedAt: 'timestamp',
    } satisfies Record<keyof Attempt, ColumnType>,
  },
} as const satisfies Record<Entity, { table: string; statusType: string; columns: Record<string, ColumnType> }>;

/** JobEvent's columns, selected typed (not through to_jsonb) so that Prisma decodes them itself. */
const EVENT_COLUMNS = ['id', 'jobId', 'at', 'entity', 'taskIndex', 'attemptNumber', 'from', 'to', 'reason'] as const satisfies ReadonlyArray<keyof JobEvent>;
type MissingEventColumn = Exclude<keyof JobEvent, (typeof EVENT_COLUMNS)[number]>;
// A JobEvent column missing from EVENT_COLUMNS fails to compile here.
const _allEventColumns: MissingEventColumn extends never ? true : never = true;
void _allEventColumns;

function columnsOf(entity: Entity): Record<string, ColumnType> {
  return MODELS[entity].columns;
}

/** The SQL cast of a column type (fixed text: never data). */
function castOf(entity: Entity, type: ColumnType): string {
  switch (type) {
    case 'int':
      return 'int';
    case 'float8':
      return 'float8';
    case 'text':
      return 'text';
    case 'jsonb':
      return 'jsonb';
    case 'timestamp':
      return 'timestamp(3)';
    case 'status':
      return `"${MODELS[entity].statusType}"`;
  }
}

/**
 * A Date as a TIMESTAMP(3) literal: UTC wall time without a zone (Prisma's convention for
 * DateTime columns), exact to the ms whatever the session's TimeZone.
 */
function pgTimestamp(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * A value written to a column, as the parameter sent with its cast (Prisma's input rules:
 * DateTime takes a Date or an ISO string; Int an integer; Json any JSON value, Prisma.JsonNull
 * for a JSON null, Prisma.DbNull for SQL NULL).
 * @throws TypeError for a value the column cannot hold (before any query).
 */
function encodeValue(entity: Entity, column: string, type: ColumnType, v: unknown): unknown {
  const bad = () => new TypeError(`${entity}.${column}: cannot write ${typeof v === 'object' ? JSON.stringify(v) : String(v)} to a ${type} column`);
  if (type === 'jsonb') {
    if (v === null || v instanceof Prisma.NullTypes.DbNull) return null;
    if (v instanceof Prisma.NullTypes.JsonNull) return 'null';
    const s = JSON.stringify(v);
    if (s === undefined) throw bad();
    return s;
  }
  if (v === null) return null;
  switch (type) {
    case 'timestamp': {
      const d = v instanceof Date ? v : typeof v === 'string' ? new Date(v) : null;
      if (!d || Number.isNaN(d.getTime())) throw bad();
      return pgTimestamp(d);
    }
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw bad();
      return v;
    case 'float8':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw bad();
      return v;
    case 'text':
    case 'status':
      if (typeof v !== 'string') throw bad();
      return v;
  }
}

/** Prisma's numeric field update operations, as SQL operators. */
const ARITHMETIC: Record<string, string> = { increment: '+', decrement: '-', multiply: '*', divide: '/' };

/** The parameters of one statement: each value sent once, referenced as `$n::cast`. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

/**
 * `"column" = …` for one entry of a transition's `data`: a plain value, or one of Prisma's
 * field update operations (`set`; for Int / Float `increment`, `decrement`, `multiply`,
 * `divide`). Json values are always plain values. Undefined entries are skipped (Prisma's rule).
 * @throws Error when the column is not a writable column of the entity (unknown, `id`, `status`);
 *   TypeError for a value or operation the column cannot take.
 */
function assignment(p: Params, entity: Entity, column: string, v: unknown): string | null {
  if (v === undefined) return null;
  const type = Object.hasOwn(columnsOf(entity), column) ? columnsOf(entity)[column] : undefined;
  if (!type || column === 'id' || type === 'status') throw new Error(`transition data: "${column}" is not a writable column of ${entity}`);
  const cast = castOf(entity, type);
  const q = `"${column}"`;
  if (type !== 'jsonb' && v !== null && typeof v === 'object' && !(v instanceof Date)) {
    const ops = Object.entries(v).filter(([, x]) => x !== undefined);
    const [op, x] = ops.length === 1 ? ops[0] : [undefined, undefined];
    if (op === 'set') return `${q} = ${p.add(encodeValue(entity, column, type, x), cast)}`;
    if (op !== undefined && Object.hasOwn(ARITHMETIC, op) && (type === 'int' || type === 'float8')) {
      return `${q} = ${q} ${ARITHMETIC[op]} ${p.add(encodeValue(entity, column, type, x), cast)}`;
    }
    throw new TypeError(`${entity}.${column}: unsupported update ${JSON.stringify(v)}`);
  }
  return `${q} = ${p.add(encodeValue(entity, column, type, v), cast)}`;
}

/**
 * A row of `entity` from its `to_jsonb` value, as Prisma answers it: DateTime columns as Dates,
 * Json as the parsed value, Float as a number, SQL NULL as null. Only the model's columns.
 */
function decodeRow(entity: Entity, json: Record<string, unknown>): Job | Task | Attempt {
  const row: Record<string, unknown> = {};
  for (const [column, type] of Object.entries(columnsOf(entity))) {
    const v = json[column] ?? null;
    if (v === null) row[column] = null;
    else if (type === 'timestamp') row[column] = new Date(`${v as string}Z`);
    else if (type === 'float8') row[column] = typeof v === 'number' ? v : Number(v); // NaN / ±Infinity come as strings
    else row[column] = v;
  }
  return row as unknown as Job | Task | Attempt;
}

/** One step of a batch statement: a guarded write, or the creation of an attempt of a task written by an earlier step. */
type Step = { kind: 'write'; t: AnyTransition } | { kind: 'attempt'; task: number; a: NewAttempt };

/**
 * The whole batch as ONE SQL statement (data-modifying CTEs: atomic without a transaction):
 *
 *   g<i>  SELECT id FROM "<Table>" WHERE id = $ AND status = $from FOR NO KEY UPDATE   (per write)
 *   ok    true only when every guard found its row
 *   u<i>  UPDATE "<Table>" SET status, statusReason, data…, updatedAt (job)
 *         WHERE id = $ AND (SELECT ok FROM ok) RETURNING *                               (per write)
 *   u<i>  INSERT INTO "Attempt" … SELECT … FROM u<task> RETURNING *                      (startAttempt)
 *   e     INSERT INTO "JobEvent" … one row per step, in step order (serial ids in that order)
 *   w     each step's row as to_jsonb
 *   →     one result row per step, in step order: the event's typed columns and the row.
 *
 * Concurrency (READ COMMITTED): a guard's row lock waits for a concurrent writer of the row and
 * re-checks `status = from` on the newest row version (EvalPlanQual); a row moved or deleted
 * meanwhile drops out of its guard. `ok` is an InitPlan of every UPDATE / INSERT, so nothing is
 * written unless all guards hold their rows, and then each UPDATE finds its row by primary key
 * (rechecked on the newest version, which this statement has locked with the right status).
 * Two batches on one row serialize on its lock; the second sees the first's status and writes
 * nothing (no transition keeps the status). The guards lock in a fixed order — jobs, then tasks,
 * then attempts, by id; the order transitionJobsWhere() and cascading deletes take — so two
 * batches never deadlock each other, whatever the order of their transitions.
 * The lock is FOR NO KEY UPDATE, what the UPDATE itself takes: it does not block JobEvent /
 * Attempt inserts of other writers (their foreign-key checks take KEY SHARE).
 *
 * Each write's data is parameterised (`$n::<cast>`); column names come from MODELS only.
 * All times written (job updatedAt, attempt createdAt, event at) are `now`.
 */
function batchStatement(steps: Step[], now: Date): { sql: string; params: unknown[] } {
  const p = new Params();
  const at = p.add(pgTimestamp(now), 'timestamp(3)');
  const ctes: string[] = [];
  const guards: Array<{ rank: number; id: number; name: string }> = [];
  const events: string[] = [];
  const rows: string[] = [];
  const RANK: Record<Entity, number> = { job: 0, task: 1, attempt: 2 };
  const writes: string[] = [];
  steps.forEach((s, i) => {
    if (s.kind === 'attempt') {
      const a = s.a;
      const number = encodeValue('attempt', 'number', 'int', a.number);
      writes.push(
        `u${i} AS (INSERT INTO "Attempt" ("jobId", "taskId", "number", "status", "statusReason", "cause", "executor", "executorRef", "pid", "pidStartTime", "exitCode", "logPath", "createdAt", "startedAt", "endedAt")` +
          ` SELECT x."jobId", x."id", ${p.add(number, 'int')}, 'STARTING', NULL, ${p.add(a.cause, 'text')}, ${p.add(a.executor ?? 'local', 'text')}, NULL, NULL, NULL, NULL, ${p.add(a.logPath ?? null, 'text')}, ${at}, NULL, NULL` +
          ` FROM u${s.task} x RETURNING *)`,
      );
      events.push(`SELECT ${i} AS k, x."jobId", 'attempt' AS "entity", x."index" AS "taskIndex", ${p.add(number, 'int')} AS "attemptNumber", NULL::text AS "from", 'STARTING'::text AS "to", ${p.add(a.cause, 'text')} AS "reason" FROM u${s.task} x`);
      rows.push(`SELECT ${i} AS k, to_jsonb(x.*) AS "row" FROM u${i} x`);
      return;
    }
    const t = s.t;
    const { table, statusType } = MODELS[t.entity];
    const id = p.add(t.id, 'int');
    ctes.push(`g${i} AS MATERIALIZED (SELECT "id" FROM "${table}" WHERE "id" = ${id} AND "status" = ${p.add(t.from, `"${statusType}"`)} FOR NO KEY UPDATE)`);
    guards.push({ rank: RANK[t.entity], id: t.id, name: `g${i}` });
    const data: Record<string, unknown> = { ...(t.data ?? {}) };
    if (t.reason !== undefined) data.statusReason = t.reason;
    if (t.entity === 'job') data.updatedAt = now;
    const sets = [`"status" = ${p.add(t.to, `"${statusType}"`)}`];
    for (const [column, v] of Object.entries(data)) {
      const a = assignment(p, t.entity, column, v);
      if (a) sets.push(a);
    }
    writes.push(`u${i} AS (UPDATE "${table}" SET ${sets.join(', ')} WHERE "id" = ${id} AND (SELECT ok FROM ok) RETURNING *)`);
    const source =
      t.entity === 'job'
        ? `x."id" AS "jobId", 'job' AS "entity", NULL::int AS "taskIndex", NULL::int AS "attemptNumber"`
        : t.entity === 'task'
          ? `x."jobId", 'task' AS "entity", x."index" AS "taskIndex", NULL::int AS "attemptNumber"`
          : `x."jobId", 'attempt' AS "entity", (SELECT y."index" FROM "Task" y WHERE y."id" = x."taskId") AS "taskIndex", x."number" AS "attemptNumber"`;
    events.push(`SELECT ${i} AS k, ${source}, ${p.add(t.from, 'text')} AS "from", ${p.add(t.to, 'text')} AS "to", ${p.add(t.reason ?? null, 'text')} AS "reason" FROM u${i} x`);
    rows.push(`SELECT ${i} AS k, to_jsonb(x.*) AS "row" FROM u${i} x`);
  });
  guards.sort((x, y) => x.rank - y.rank || x.id - y.id);
  ctes.push(`ok AS MATERIALIZED (SELECT ${guards.length ? guards.map((g) => `EXISTS (SELECT FROM ${g.name})`).join(' AND ') : 'true'} AS ok)`);
  ctes.push(...writes);
  ctes.push(
    `e AS (INSERT INTO "JobEvent" ("jobId", "at", "entity", "taskIndex", "attemptNumber", "from", "to", "reason")` +
      ` SELECT x."jobId", ${at}, x."entity", x."taskIndex", x."attemptNumber", x."from", x."to", x."reason" FROM (${events.join(' UNION ALL ')}) x ORDER BY x.k RETURNING *)`,
  );
  ctes.push(`w AS (${rows.join(' UNION ALL ')})`);
  const cols = EVENT_COLUMNS.map((c) => `e."${c}"`).join(', ');
  const sql =
    `WITH ${ctes.join(',\n')}\n` +
    `SELECT ${cols}, w."row" FROM (SELECT e.*, (row_number() OVER (ORDER BY e."id"))::int - 1 AS k FROM e) e JOIN w ON w.k = e.k ORDER BY e."id"`;
  return { sql, params: p.values };
}

/** A statement's answer: per step, in step order, the JobEvent (typed by Prisma) and the row's to_jsonb. */
type BatchRow = JobEvent & { row: Record<string, unknown> };

/**
 * Runs a batch statement; zero rows back means a guard failed and nothing was written.
 * Raw query errors are mapped like Prisma's own calls (unique violation → P2002).
 */
async function runBatch(db: Db, steps: Step[]): Promise<{ rows: Array<Job | Task | Attempt>; events: JobEvent[] } | null> {
  const { sql, params } = batchStatement(steps, new Date());
  let got: BatchRow[];
  try {
    got = await db.$queryRawUnsafe<BatchRow[]>(sql, ...params);
  } catch (err) {
    throw uniqueViolationAsP2002(err);
  }
  if (got.length === 0) return null;
  if (got.length !== steps.length) throw new Error(`store: a batch of ${steps.length} writes answered ${got.length} rows`);
  const rows = got.map((r, i) => {
    const s = steps[i];
    return decodeRow(s.kind === 'write' ? s.t.entity : 'attempt', r.row);
  });
  const events = got.map(({ row: _row, ...e }) => e as JobEvent);
  return { rows, events };
}

/**
 * After a batch wrote nothing: the first of `transitions` (in their order) that lost — `gone`
 * (no row), else `terminal` / `moved` with the fresh row (its status is not `from`) — from one
 * read of all their rows. When every row reads as expected again (a concurrent writer moved
 * a row back to `from`, or committed just after the statement's snapshot), the first transition
 * is reported `moved` with its fresh row: nothing was written, the caller re-reads.
 */
async function firstLoser(db: Db, transitions: AnyTransition[]): Promise<Extract<BatchOutcome, { outcome: 'lost' }>> {
  const p = new Params();
  const parts = transitions.map((t, i) => `SELECT ${i} AS k, to_jsonb(x.*) AS "row" FROM "${MODELS[t.entity].table}" x WHERE x."id" = ${p.add(t.id, 'int')}`);
  const got = await db.$queryRawUnsafe<Array<{ k: number; row: Record<string, unknown> }>>(parts.join(' UNION ALL '), ...p.values);
  const fresh = new Map(got.map((r) => [Number(r.k), r.row]));
  for (let i = 0; i < transitions.length; i++) {
    const t = transitions[i];
    const json = fresh.get(i);
    if (!json) return { outcome: 'lost', index: i, reason: 'gone' };
    if (json.status !== t.from) return { outcome: 'lost', index: i, reason: isTerminal(t.entity, json.status as string) ? 'terminal' : 'moved', row: decodeRow(t.entity, json) };
  }
  return { outcome: 'lost', index: 0, reason: 'moved', row: decodeRow(transitions[0].entity, fresh.get(0)!) };
}

/**
 * Checks a batch before any query: every transition in the status table, and no row written
 * twice (one statement cannot write a row twice: write the final status once instead).
 * @throws IllegalTransitionError; Error naming the row written twice.
 */
function assertBatch(transitions: AnyTransition[]): void {
  for (const t of transitions) assertTransition(t.entity, t.from, t.to);
  const seen = new Set<string>();
  for (const t of transitions) {
    const key = `${t.entity} ${t.id}`;
    if (seen.has(key)) throw new Error(`store: a batch writes ${key} twice`);
    seen.add(key);
  }
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
 * Applies several guarded writes all or nothing: if any write loses its race, nothing is
 * written and the outcome names the first loser in the order given (with its fresh row).
 * Each applied write leaves exactly one JobEvent (serial ids in the order given); `rows[i]` and
 * `events[i]` are transition i's row as written and its event. Events are announced on
 * storeBus() after the commit.
 *
 * Costs one SQL statement (batchStatement(): guards, updates and the events' insert as
 * data-modifying CTEs) — one database round trip, no interactive transaction — plus one read
 * when the batch lost. When `db` is already a transaction client, the statement runs inside it
 * (the caller commits; no announcement is made — use only for composition inside the store's
 * own helpers).
 *
 * @throws IllegalTransitionError (before any query) when a write is not in the table; Error
 *   (before any query) when the batch writes one row twice, or a `data` entry names a column
 *   the entity does not have (or `id`); TypeError (before any query) for a `data` value its
 *   column cannot hold; database errors as Prisma raises them.
 */
export async function transitionMany(db: Db, transitions: AnyTransition[]): Promise<BatchOutcome> {
  assertBatch(transitions);
  if (transitions.length === 0) return { outcome: 'applied', rows: [], events: [] };
  const done = await runBatch(db, transitions.map((t) => ({ kind: 'write', t })));
  if (!done) return firstLoser(db, transitions);
  const { rows, events } = done;
  transitions.forEach((t, i) => logApplied(t, events[i]));
  if (!isTx(db)) events.forEach((e, i) => emit({ type: 'event', jobId: e.jobId, event: e, row: rows[i] }));
  return { outcome: 'applied', rows, events };
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
 * Prisma does) taken when the call is made, shared by submittedAt, updatedAt and the event's `at`.
 *
 * Group commit: while SUBMIT_IN_FLIGHT statements of one client are running, further submits
 * wait and then go together, up to SUBMIT_BATCH_MAX jobs in one statement (one round trip, one
 * commit). An idle server sends a submit at once, alone, so batching adds no latency; under a
 * burst it saves the per-statement cost in Prisma, the driver and PostgreSQL's commit
 * (bench/README.md, fifth session). Each job is still all-or-nothing. When PostgreSQL refuses a
 * batch's data (SQLSTATE class 22 or 23: a value it cannot store, a submissionId taken) nothing
 * was written, and every job of it is sent again alone, in call order, so each caller gets its own answer;
 * any other error (a lost connection, where a commit may have happened) is every caller's error,
 * as it would have been alone. Ids follow the order of the calls within a statement.
 *
 * @returns the job with its tasks in index order.
 * @throws Error when `tasks` is empty; Prisma's P2002 PrismaClientKnownRequestError (meta.target
 *   ['submissionId']) when `submissionId` is already taken — nothing was written (callers answer
 *   idempotently); other database errors as Prisma raises them.
 */
export async function submitJob(db: PrismaClient, job: NewJob): Promise<Job & { tasks: Task[] }> {
  if (job.tasks.length === 0) throw new Error('a job needs at least one task');
  const entry = newJobEntry(job);
  let ids: InsertedIds;
  try {
    ids = await submitQueue(db).add(entry);
  } catch (err) {
    throw uniqueViolationAsP2002(err);
  }
  return announceNewJob(entry, ids);
}

/** Most jobs one submit statement writes (its JSON parameter is ~1 KiB per simple job). */
export const SUBMIT_BATCH_MAX = 64;
/** Submit statements one client runs at once; later submits wait and go in one statement. */
export const SUBMIT_IN_FLIGHT = 2;

/** A job on its way to the database: the input, serialized once, and its timestamp. */
interface JobEntry {
  job: NewJob;
  now: Date;
  /** pgTimestamp(now). */
  at: string;
  specJson: string;
  metadataJson: string | null;
  executor: string;
  submissionId: string | null;
}

/** The ids one job got. */
interface InsertedIds {
  jobId: number;
  eventId: number;
  taskIds: number[];
}

function newJobEntry(job: NewJob): JobEntry {
  const now = new Date();
  return {
    job,
    now,
    at: pgTimestamp(now),
    specJson: JSON.stringify(job.spec),
    metadataJson: job.metadata === undefined || job.metadata === null ? null : JSON.stringify(job.metadata),
    executor: job.executor ?? 'local',
    submissionId: job.submissionId ?? null,
  };
}

/** The stored rows of a written job (from its input and ids), logged and announced as `created`. */
function announceNewJob(e: JobEntry, ids: InsertedIds): Job & { tasks: Task[] } {
  const { job, now } = e;
  const row: Job = {
    id: ids.jobId,
    submissionId: e.submissionId,
    name: job.name,
    status: 'PENDING',
    statusReason: null,
    specYaml: job.specYaml,
    spec: JSON.parse(e.specJson),
    specHash: job.specHash,
    cpus: job.cpus,
    metadata: e.metadataJson === null ? null : JSON.parse(e.metadataJson),
    executor: e.executor,
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

/** Writes one job: the statement of one submit. */
async function insertOne(db: PrismaClient, e: JobEntry): Promise<InsertedIds> {
  const { job, at } = e;
  const tasksJson = JSON.stringify(job.tasks.map((t) => ({ name: t.name ?? null, spec: t.spec })));
  const rows = await db.$queryRaw<InsertedIds[]>(Prisma.sql`
    WITH j AS (
      INSERT INTO "Job" ("submissionId", "name", "status", "statusReason", "specYaml", "spec", "specHash", "cpus", "metadata", "executor",
                         "submittedAt", "startedAt", "endedAt", "updatedAt", "cancelRequestedAt", "restartCount", "recoveryCount", "currentTask", "taskCount")
      VALUES (${e.submissionId}, ${job.name}, 'PENDING', NULL, ${job.specYaml}, ${e.specJson}::jsonb, ${job.specHash}, ${job.cpus}::float8, ${e.metadataJson}::jsonb, ${e.executor},
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
  return rows[0];
}

/**
 * Writes several jobs in one statement, in order: the ids come from the Job sequence in the
 * order of `entries` (the `input` CTE is materialized: nextval is volatile), so the tasks and the
 * event of each job join on its id. Same columns and values as insertOne().
 */
async function insertMany(db: PrismaClient, entries: readonly JobEntry[]): Promise<InsertedIds[]> {
  const input = JSON.stringify(
    entries.map((e) => ({
      submissionId: e.submissionId,
      name: e.job.name,
      specYaml: e.job.specYaml,
      spec: JSON.parse(e.specJson) as unknown,
      specHash: e.job.specHash,
      cpus: e.job.cpus,
      // Absent (SQL NULL), not a JSON null, when there is none — as insertOne() stores it.
      ...(e.metadataJson === null ? {} : { metadata: JSON.parse(e.metadataJson) as unknown }),
      executor: e.executor,
      at: e.at,
      tasks: e.job.tasks.map((t) => ({ name: t.name ?? null, spec: t.spec })),
    })),
  );
  const rows = await db.$queryRaw<Array<InsertedIds & { ord: bigint | number }>>(Prisma.sql`
    WITH input AS MATERIALIZED (
      SELECT x.i AS "ord", x.v AS "v", nextval('"Job_id_seq"'::regclass)::int AS "id"
      FROM jsonb_array_elements(${input}::jsonb) WITH ORDINALITY AS x(v, i)
    ), j AS (
      INSERT INTO "Job" ("id", "submissionId", "name", "status", "statusReason", "specYaml", "spec", "specHash", "cpus", "metadata", "executor",
                         "submittedAt", "startedAt", "endedAt", "updatedAt", "cancelRequestedAt", "restartCount", "recoveryCount", "currentTask", "taskCount")
      SELECT "id", v->>'submissionId', v->>'name', 'PENDING', NULL, v->>'specYaml', v->'spec', v->>'specHash', (v->>'cpus')::float8, v->'metadata', v->>'executor',
             (v->>'at')::timestamp(3), NULL, NULL, (v->>'at')::timestamp(3), NULL, 0, 0, 0, jsonb_array_length(v->'tasks')
      FROM input ORDER BY "ord"
      RETURNING "id"
    ), t AS (
      INSERT INTO "Task" ("jobId", "index", "name", "status", "statusReason", "spec", "restarts", "recoveries", "exitCode", "startedAt", "endedAt")
      SELECT input."id", (y.k - 1)::int, y.w->>'name', 'PENDING', NULL, y.w->'spec', 0, 0, NULL, NULL, NULL
      FROM input, jsonb_array_elements(input.v->'tasks') WITH ORDINALITY AS y(w, k)
      RETURNING "id", "jobId", "index"
    ), e AS (
      INSERT INTO "JobEvent" ("jobId", "at", "entity", "taskIndex", "attemptNumber", "from", "to", "reason")
      SELECT input."id", (input.v->>'at')::timestamp(3), 'job', NULL, NULL, NULL, 'PENDING', 'submitted' FROM input ORDER BY input."ord"
      RETURNING "id", "jobId"
    )
    SELECT input."ord", j."id" AS "jobId", e."id" AS "eventId",
           (SELECT array_agg(t."id" ORDER BY t."index") FROM t WHERE t."jobId" = j."id") AS "taskIds"
    FROM input JOIN j ON j."id" = input."id" JOIN e ON e."jobId" = input."id"
    ORDER BY input."ord"`);
  if (rows.length !== entries.length) throw new Error(`submit: a statement of ${entries.length} jobs answered ${rows.length} rows`);
  return rows.map((r) => ({ jobId: r.jobId, eventId: r.eventId, taskIds: r.taskIds }));
}

/**
 * True when PostgreSQL refused a statement for its data — SQLSTATE class 22 (data exception)
 * or 23 (integrity constraint violation), read from Prisma's driver adapter error — so that
 * nothing of it was written.
 */
function refusedData(err: unknown): boolean {
  const code = driverErrorCause(err)?.originalCode;
  return typeof code === 'string' && /^2[23]/.test(code);
}

/** The driver adapter's error under a raw query's Prisma P2010 error; undefined for any other. */
function driverErrorCause(err: unknown): { kind?: string; originalCode?: string; originalMessage?: string } | undefined {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2010') return undefined;
  return (err.meta?.driverAdapterError as { cause?: { kind?: string; originalCode?: string; originalMessage?: string } } | undefined)?.cause;
}

/** One client's submits: the group commit of submitJob(). */
class SubmitQueue {
  private waiting: Array<{ entry: JobEntry; resolve(ids: InsertedIds): void; reject(err: unknown): void }> = [];
  private inFlight = 0;

  constructor(private readonly db: PrismaClient) {}

  /** Resolves with the job's ids once its statement committed; rejects with its error. */
  add(entry: JobEntry): Promise<InsertedIds> {
    return new Promise<InsertedIds>((resolve, reject) => {
      this.waiting.push({ entry, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < SUBMIT_IN_FLIGHT && this.waiting.length) {
      const batch = this.waiting.splice(0, SUBMIT_BATCH_MAX);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: SubmitQueue['waiting']): Promise<void> {
    const stats = submitStats();
    stats.statements++;
    stats.jobs += batch.length;
    if (batch.length === 1) {
      const [one] = batch;
      await insertOne(this.db, one.entry).then(one.resolve, one.reject);
      return;
    }
    let ids: InsertedIds[];
    try {
      ids = await insertMany(
        this.db,
        batch.map((b) => b.entry),
      );
    } catch (err) {
      if (!refusedData(err)) {
        for (const b of batch) b.reject(err);
        return;
      }
      // Nothing of the batch was written: each job alone, in call order (of two submits of one
      // new submissionId, the first wins), so that only the refused ones fail.
      for (const b of batch) {
        stats.statements++;
        stats.jobs++;
        await insertOne(this.db, b.entry).then(b.resolve, b.reject);
      }
      return;
    }
    batch.forEach((b, i) => b.resolve(ids[i]));
  }
}

/** Submit statements sent in this process, and the jobs they carried. */
export interface SubmitStatementStats {
  statements: number;
  jobs: number;
}

function submitStats(): SubmitStatementStats {
  const s = shared();
  return (s.submitStats ??= { statements: 0, jobs: 0 }) as SubmitStatementStats;
}

/**
 * How submitJob()'s group commit went in this process so far: submit statements sent and the
 * jobs they carried (refused batches and their job-by-job retries included); jobs ÷ statements
 * is the mean batch. Zeros before the first submit.
 */
export function submitStatementStats(): SubmitStatementStats {
  return { ...submitStats() };
}

/** One queue per database client, process-wide (route bundles may load their own copy of this module). */
function submitQueue(db: PrismaClient): SubmitQueue {
  const s = shared();
  const queues = (s.submitQueues ??= new WeakMap<PrismaClient, SubmitQueue>()) as WeakMap<PrismaClient, SubmitQueue>;
  let q = queues.get(db);
  if (!q) queues.set(db, (q = new SubmitQueue(db)));
  return q;
}

/**
 * A raw query's unique violation (Prisma P2010, driver error 23505 / UniqueConstraintViolation)
 * as the P2002 error Prisma's model calls raise, so callers keep one check: `meta.modelName` and
 * `meta.target` (the fields) are read from the violated index's name, which follows Prisma's
 * `<Model>_<field>_<field>_key` (e.g. Job_submissionId_key, Attempt_taskId_number_key). In
 * submitJob()'s statement only Job.submissionId can collide (ids are fresh, task indexes
 * distinct); in startAttempt()'s, Attempt (taskId, number).
 */
function uniqueViolationAsP2002(err: unknown): unknown {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2010') return err;
  const cause = driverErrorCause(err);
  if (cause?.kind !== 'UniqueConstraintViolation' && cause?.originalCode !== '23505' && !/\b23505\b/.test(err.message)) return err;
  const index = /unique constraint "([^"]+)"/.exec(cause?.originalMessage ?? err.message)?.[1] ?? '';
  const named = /^([A-Za-z]+)_(\w+)_key$/.exec(index);
  const target = named ? named[2].split('_') : [index];
  return new Prisma.PrismaClientKnownRequestError(`Unique constraint failed on the fields: (${target.map((f) => `\`${f}\``).join(',')})`, {
    code: 'P2002',
    clientVersion: err.clientVersion,
    meta: { modelName: named?.[1], target },
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
 * STARTING, all or nothing, with a JobEvent for each. Loses like any guarded write — a
 * deleted or terminal task never gets an attempt. `before` / `after` add guarded writes to the
 * same statement (the monitor ends the previous attempt and moves the job with the new
 * attempt, all or nothing); if any of them loses, nothing is written and the outcome is `lost`
 * (the first loser of before, task, after, in that order: its reason and fresh row, whatever its
 * kind). Events, in this order: `before`'s, the task's, the attempt's (`null → STARTING`, reason
 * = cause), `after`'s; announced in that order after the commit, each write's with its row.
 *
 * One SQL statement, like transitionMany() (batchStatement(): the attempt's INSERT reads the
 * task's UPDATE), plus one read when it lost.
 * @throws IllegalTransitionError when `from → STARTING` (or a `before`/`after` write) is not
 *   allowed; Error / TypeError as transitionMany() for a row written twice or bad `data` (all
 *   before any query); Prisma's P2002 PrismaClientKnownRequestError when the task already has
 *   an attempt with this number (nothing was written); other database errors as Prisma raises them.
 */
export async function startAttempt(
  db: PrismaClient,
  a: NewAttempt & {
    taskFrom: TaskStatus;
    reason?: string;
    taskData?: Transition<'task'>['data'];
    /** Guarded writes applied first, in the same statement (e.g. the previous attempt's end). */
    before?: AnyTransition[];
    /** Guarded writes applied after the attempt is created, in the same statement (e.g. the job's status). */
    after?: AnyTransition[];
  },
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
  const done = await runBatch(db, steps);
  if (!done) {
    const r = await firstLoser(db, writes);
    // Reported as the attempt's outcome, with the loser's row whatever its kind (as before).
    return r.reason === 'gone' ? { outcome: 'lost', reason: 'gone' } : ({ outcome: 'lost', reason: r.reason, row: r.row } as unknown as TransitionOutcome<Attempt>);
  }
  const ai = before.length + 1;
  const logged: Array<{ t: AnyTransition | null; i: number }> = steps.map((s, i) => ({ t: s.kind === 'write' ? (i === before.length ? { ...task, reason: a.reason } : s.t) : null, i }));
  for (const { t, i } of logged) if (t) logApplied(t, done.events[i]);
  done.events.forEach((e, i) => emit({ type: 'event', jobId: e.jobId, event: e, ...(i === ai ? {} : { row: done.rows[i] }) }));
  return { outcome: 'applied', row: done.rows[ai] as Attempt, event: done.events[ai] };
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
