/**
 * The submit statements — one job, or a batch of jobs, written in one SQL statement — and the
 * group commit that batches concurrent submits of one store (submit.ts is the verb).
 */
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { pgTimestamp, refusedData } from './sql';
import { queryPrepared, type PreparedStatements } from './prepared';

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
  /** Nodes asked for at once (Job.nodes; default 1). */
  nodes?: number;
  /** GPUs in all (Job.gpus; default 0) and the alternatives per node (Job.gpuRequest; default none). */
  gpus?: number;
  gpuRequest?: Prisma.InputJsonValue;
  /** Admission priority (Job.priority; default 500). */
  priority?: number;
  /** The operator queue (Job.queue; default "default"). */
  queue?: string;
  metadata?: Prisma.InputJsonValue;
  /** The launch overrides as submitted (Job.launch), or none. */
  launch?: Prisma.InputJsonValue;
  /** The spec's warnings (Job.warnings), or none. */
  warnings?: Prisma.InputJsonValue;
  /** The tasks' `resources.labels` (Job.labels: one map per task that has labels), or none. */
  labels?: ReadonlyArray<Record<string, string>> | null;
  /** What submitted it (Job.origin; default "api"). */
  origin?: string;
  executor?: string;
  /** Who submitted it (Job.userId: User.id), or nobody known. */
  userId?: number | null;
  /** Through which personal token (Job.tokenId: ApiToken.id), or none. */
  tokenId?: number | null;
  /** The group it belongs to and its slot (Job.groupId, groupIndex, groupLead), or none. */
  group?: { id: number; index: number; lead: boolean } | null;
  /** The schedule whose fire submits it (Job.scheduleId), or none. */
  scheduleId?: number | null;
  /** Its job-level dependencies (JobDependency rows), resolved to job ids. */
  dependsOn?: ReadonlyArray<{ onJobId: number; after: string }>;
  /** True while those are not met (Job.depsWaiting): it waits outside its executor's line. */
  depsWaiting?: boolean;
  /** The reason it waits, written with it (a dependent's "waits for job 41 to succeed"); null: none yet. */
  pendingReason?: string | null;
  tasks: NewTask[];
}

/** Most jobs one submit statement writes (its JSON parameter is ~1 KiB per simple job). */
export const SUBMIT_BATCH_MAX = 64;
/** Submit statements one store runs at once; later submits wait and go in one statement. */
export const SUBMIT_IN_FLIGHT = 2;

/** A job on its way to the database: the input, serialized once, and its timestamp. */
export interface JobEntry {
  job: NewJob;
  now: Date;
  /** pgTimestamp(now). */
  at: string;
  specJson: string;
  metadataJson: string | null;
  launchJson: string | null;
  warningsJson: string | null;
  gpuRequestJson: string | null;
  labelsJson: string | null;
  origin: string;
  executor: string;
  submissionId: string | null;
  userId: number | null;
  tokenId: number | null;
  groupId: number | null;
  groupIndex: number | null;
  groupLead: boolean;
  scheduleId: number | null;
  depsJson: string;
  depsWaiting: boolean;
  pendingReason: string | null;
}

/**
 * The job's operator queue was not there when its row was to be written (deleted since the
 * submit checked it): nothing of the job was written. The queue's row is locked (FOR KEY SHARE)
 * by the statement that writes the job, and deleteQueue() locks it before it counts the queue's
 * unfinished jobs, so a job is never written into a queue whose delete went ahead without it.
 */
export class QueueGoneError extends Error {
  constructor(readonly queue: string) {
    super(`queue ${queue} is not defined (it was deleted while the job was submitted)`);
    this.name = 'QueueGoneError';
  }
}

const DEFAULT_QUEUE_NAME = 'default';

/** The ids one job got. */
export interface InsertedIds {
  jobId: number;
  eventId: number;
  taskIds: number[];
}

/** A job's entry, its timestamp taken now (ms). */
export function newJobEntry(job: NewJob): JobEntry {
  const now = new Date();
  return {
    job,
    now,
    at: pgTimestamp(now),
    specJson: JSON.stringify(job.spec),
    metadataJson: job.metadata === undefined || job.metadata === null ? null : JSON.stringify(job.metadata),
    launchJson: job.launch === undefined || job.launch === null ? null : JSON.stringify(job.launch),
    warningsJson: job.warnings === undefined || job.warnings === null ? null : JSON.stringify(job.warnings),
    gpuRequestJson: job.gpuRequest === undefined || job.gpuRequest === null ? null : JSON.stringify(job.gpuRequest),
    labelsJson: job.labels && job.labels.length ? JSON.stringify(job.labels) : null,
    origin: job.origin ?? 'api',
    executor: job.executor ?? 'local',
    submissionId: job.submissionId ?? null,
    userId: job.userId ?? null,
    tokenId: job.tokenId ?? null,
    groupId: job.group?.id ?? null,
    groupIndex: job.group?.index ?? null,
    groupLead: job.group?.lead ?? false,
    scheduleId: job.scheduleId ?? null,
    depsJson: JSON.stringify(job.dependsOn ?? []),
    depsWaiting: job.depsWaiting ?? false,
    pendingReason: job.pendingReason ?? null,
  };
}

/**
 * The statement of one job (insertOne) with `before` data-modifying CTEs ahead of its own and the
 * job's row written only when `gate` (a FROM item) yields a row: the schedule fire's
 * compare-and-set (schedule-fire.ts) is such a gate. `id` is the job's id when the caller drew it
 * (nextval) beforehand, else the sequence's default. Answers the ids, or no row when the gate
 * held nothing back.
 */
export function jobInsertSql(e: JobEntry, gate: Prisma.Sql, before: Prisma.Sql | null = null, id: Prisma.Sql | null = null): Prisma.Sql {
  const { job, at } = e;
  const queue = job.queue ?? DEFAULT_QUEUE_NAME;
  const tasksJson = JSON.stringify(job.tasks.map((t) => ({ name: t.name ?? null, spec: t.spec })));
  const queueGate = queue === DEFAULT_QUEUE_NAME ? Prisma.sql`(SELECT 1) AS g` : Prisma.sql`(SELECT 1 FROM "Queue" WHERE "name" = ${queue}::text FOR KEY SHARE) AS g`;
  return Prisma.sql`
    WITH ${before ? Prisma.sql`${before}, ` : Prisma.empty}j AS (
      INSERT INTO "Job" (${id ? Prisma.sql`"id", ` : Prisma.empty}"submissionId", "name", "status", "statusReason", "pendingReason", "specYaml", "spec", "specHash", "cpus", "nodes", "gpus", "gpuRequest", "priority", "queue", "metadata", "launch", "warnings", "labels", "origin", "executor", "userId", "tokenId",
                         "groupId", "groupIndex", "groupLead", "scheduleId", "depsWaiting",
                         "submittedAt", "startedAt", "endedAt", "updatedAt", "cancelRequestedAt", "restartCount", "recoveryCount", "currentTask", "taskCount")
      SELECT ${id ? Prisma.sql`${id}, ` : Prisma.empty}${e.submissionId}::text, ${job.name}::text, 'PENDING', NULL, ${e.pendingReason}::text, ${job.specYaml}::text, ${e.specJson}::jsonb, ${job.specHash}::text, ${job.cpus}::float8, ${job.nodes ?? 1}::int, ${job.gpus ?? 0}::float8, ${e.gpuRequestJson}::jsonb, ${job.priority ?? 500}::int, ${queue}::text, ${e.metadataJson}::jsonb, ${e.launchJson}::jsonb, ${e.warningsJson}::jsonb, ${e.labelsJson}::jsonb, ${e.origin}::text, ${e.executor}::text, ${e.userId}::int, ${e.tokenId}::int,
              ${e.groupId}::int, ${e.groupIndex}::int, ${e.groupLead}::boolean, ${e.scheduleId}::int, ${e.depsWaiting}::boolean,
              ${at}::timestamp(3), NULL, NULL, ${at}::timestamp(3), NULL, 0, 0, 0, ${job.tasks.length}::int
      FROM ${queueGate}, ${gate}
      RETURNING "id"
    ), t AS (
      INSERT INTO "Task" ("jobId", "index", "name", "status", "statusReason", "spec", "restarts", "recoveries", "exitCode", "startedAt", "endedAt")
      SELECT j."id", (x.i - 1)::int, x.v->>'name', 'PENDING', NULL, x.v->'spec', 0, 0, NULL, NULL, NULL
      FROM j, jsonb_array_elements(${tasksJson}::jsonb) WITH ORDINALITY AS x(v, i)
      RETURNING "id", "index"
    ), d AS (
      INSERT INTO "JobDependency" ("jobId", "onJobId", "after")
      SELECT j."id", (x.v->>'onJobId')::int, x.v->>'after' FROM j, jsonb_array_elements(${e.depsJson}::jsonb) AS x(v)
      RETURNING "jobId"
    ), e AS (
      INSERT INTO "JobEvent" ("jobId", "at", "entity", "taskIndex", "attemptNumber", "from", "to", "reason")
      SELECT j."id", ${at}::timestamp(3), 'job', NULL, NULL, NULL, 'PENDING', 'submitted' FROM j
      RETURNING "id"
    )
    SELECT j."id" AS "jobId", e."id" AS "eventId", (SELECT array_agg(t."id" ORDER BY t."index") FROM t) AS "taskIds", (SELECT count(*) FROM d)::int AS "deps" FROM j, e`;
}

/**
 * Writes one job: the statement of one submit. A job of a named queue is written only while the
 * queue's row is there, which the statement locks (see QueueGoneError).
 * @throws QueueGoneError when the queue's row is gone.
 */
export async function insertOne(db: PrismaClient | Prisma.TransactionClient, e: JobEntry, prepared: PreparedStatements | null = null): Promise<InsertedIds> {
  // Every value of the statement is cast, so it prepares on PGlite (prepared.ts) as it runs on PostgreSQL.
  const sql = jobInsertSql(e, Prisma.sql`(SELECT 1) AS s`);
  const rows = await queryPrepared<InsertedIds>(db, prepared, sql.text, sql.values);
  if (rows.length === 0) throw new QueueGoneError(e.job.queue ?? DEFAULT_QUEUE_NAME);
  return { jobId: rows[0].jobId, eventId: rows[0].eventId, taskIds: rows[0].taskIds };
}

/**
 * Writes several jobs in one statement, in order: the ids come from the Job sequence in the
 * order of `entries` (the `input` CTE is materialized: nextval is volatile), so the tasks and the
 * event of each job join on its id. Same columns and values as insertOne(); a job whose named
 * queue's row is gone is not written (null in its place), the others are (see QueueGoneError).
 */
export async function insertMany(db: PrismaClient | Prisma.TransactionClient, entries: readonly JobEntry[], prepared: PreparedStatements | null = null): Promise<Array<InsertedIds | null>> {
  const input = JSON.stringify(
    entries.map((e) => ({
      submissionId: e.submissionId,
      name: e.job.name,
      specYaml: e.job.specYaml,
      spec: JSON.parse(e.specJson) as unknown,
      specHash: e.job.specHash,
      cpus: e.job.cpus,
      nodes: e.job.nodes ?? 1,
      gpus: e.job.gpus ?? 0,
      ...(e.gpuRequestJson === null ? {} : { gpuRequest: JSON.parse(e.gpuRequestJson) as unknown }),
      priority: e.job.priority ?? 500,
      queue: e.job.queue ?? 'default',
      // Absent (SQL NULL), not a JSON null, when there is none — as insertOne() stores it.
      ...(e.metadataJson === null ? {} : { metadata: JSON.parse(e.metadataJson) as unknown }),
      ...(e.launchJson === null ? {} : { launch: JSON.parse(e.launchJson) as unknown }),
      ...(e.warningsJson === null ? {} : { warnings: JSON.parse(e.warningsJson) as unknown }),
      ...(e.labelsJson === null ? {} : { labels: JSON.parse(e.labelsJson) as unknown }),
      origin: e.origin,
      executor: e.executor,
      userId: e.userId,
      tokenId: e.tokenId,
      groupId: e.groupId,
      groupIndex: e.groupIndex,
      groupLead: e.groupLead,
      scheduleId: e.scheduleId,
      depsWaiting: e.depsWaiting,
      pendingReason: e.pendingReason,
      deps: JSON.parse(e.depsJson) as unknown,
      at: e.at,
      tasks: e.job.tasks.map((t) => ({ name: t.name ?? null, spec: t.spec })),
    })),
  );
  const named = [...new Set(entries.map((e) => e.job.queue ?? DEFAULT_QUEUE_NAME))].filter((q) => q !== DEFAULT_QUEUE_NAME);
  // The named queues' rows, locked until the jobs are written (none named: nothing to read).
  const queueGate = named.length
    ? Prisma.sql`q AS (SELECT "name" FROM "Queue" WHERE "name" IN (${Prisma.join(named.map((q) => Prisma.sql`${q}::text`))}) FOR KEY SHARE)`
    : Prisma.sql`q AS (SELECT NULL::text AS "name" WHERE false)`;
  const statement = Prisma.sql`
    WITH input AS MATERIALIZED (
      SELECT x.i AS "ord", x.v AS "v", nextval('"Job_id_seq"'::regclass)::int AS "id"
      FROM jsonb_array_elements(${input}::jsonb) WITH ORDINALITY AS x(v, i)
    ), ${queueGate}, j AS (
      INSERT INTO "Job" ("id", "submissionId", "name", "status", "statusReason", "pendingReason", "specYaml", "spec", "specHash", "cpus", "nodes", "gpus", "gpuRequest", "priority", "queue", "metadata", "launch", "warnings", "labels", "origin", "executor", "userId", "tokenId",
                         "groupId", "groupIndex", "groupLead", "scheduleId", "depsWaiting",
                         "submittedAt", "startedAt", "endedAt", "updatedAt", "cancelRequestedAt", "restartCount", "recoveryCount", "currentTask", "taskCount")
      SELECT "id", v->>'submissionId', v->>'name', 'PENDING', NULL, v->>'pendingReason', v->>'specYaml', v->'spec', v->>'specHash', (v->>'cpus')::float8, (v->>'nodes')::int, (v->>'gpus')::float8, v->'gpuRequest', (v->>'priority')::int, v->>'queue', v->'metadata', v->'launch', v->'warnings', v->'labels', v->>'origin', v->>'executor', (v->>'userId')::int, (v->>'tokenId')::int,
             (v->>'groupId')::int, (v->>'groupIndex')::int, (v->>'groupLead')::boolean, (v->>'scheduleId')::int, (v->>'depsWaiting')::boolean,
             (v->>'at')::timestamp(3), NULL, NULL, (v->>'at')::timestamp(3), NULL, 0, 0, 0, jsonb_array_length(v->'tasks')
      FROM input WHERE v->>'queue' = ${DEFAULT_QUEUE_NAME}::text OR v->>'queue' IN (SELECT "name" FROM q) ORDER BY "ord"
      RETURNING "id"
    ), t AS (
      INSERT INTO "Task" ("jobId", "index", "name", "status", "statusReason", "spec", "restarts", "recoveries", "exitCode", "startedAt", "endedAt")
      SELECT input."id", (y.k - 1)::int, y.w->>'name', 'PENDING', NULL, y.w->'spec', 0, 0, NULL, NULL, NULL
      FROM input JOIN j ON j."id" = input."id", jsonb_array_elements(input.v->'tasks') WITH ORDINALITY AS y(w, k)
      RETURNING "id", "jobId", "index"
    ), d AS (
      INSERT INTO "JobDependency" ("jobId", "onJobId", "after")
      SELECT input."id", (y.w->>'onJobId')::int, y.w->>'after'
      FROM input JOIN j ON j."id" = input."id", jsonb_array_elements(input.v->'deps') AS y(w)
      RETURNING "jobId"
    ), e AS (
      INSERT INTO "JobEvent" ("jobId", "at", "entity", "taskIndex", "attemptNumber", "from", "to", "reason")
      SELECT input."id", (input.v->>'at')::timestamp(3), 'job', NULL, NULL, NULL, 'PENDING', 'submitted' FROM input JOIN j ON j."id" = input."id" ORDER BY input."ord"
      RETURNING "id", "jobId"
    )
    SELECT input."ord", j."id" AS "jobId", e."id" AS "eventId",
           (SELECT array_agg(t."id" ORDER BY t."index") FROM t WHERE t."jobId" = j."id") AS "taskIds",
           (SELECT count(*) FROM d WHERE d."jobId" = j."id")::int AS "deps"
    FROM input JOIN j ON j."id" = input."id" JOIN e ON e."jobId" = input."id"
    ORDER BY input."ord"`;
  const rows = await queryPrepared<InsertedIds & { ord: bigint | number }>(db, prepared, statement.text, statement.values);
  const out: Array<InsertedIds | null> = entries.map(() => null);
  for (const r of rows) out[Number(r.ord) - 1] = { jobId: r.jobId, eventId: r.eventId, taskIds: r.taskIds };
  return out;
}

/** Submit statements a store sent, and the jobs they carried. */
export interface SubmitStatementStats {
  statements: number;
  jobs: number;
}

/**
 * One store's submits: the group commit of submitJob(). While SUBMIT_IN_FLIGHT statements run,
 * further submits wait and then go together, up to SUBMIT_BATCH_MAX jobs in one statement.
 */
export class SubmitQueue {
  private waiting: Array<{ entry: JobEntry; resolve(ids: InsertedIds): void; reject(err: unknown): void }> = [];
  private inFlight = 0;
  private readonly counts: SubmitStatementStats = { statements: 0, jobs: 0 };

  /** `prepared`: the store's prepared statements (PGlite; prepared.ts), null on PostgreSQL. */
  constructor(
    private readonly db: PrismaClient,
    private readonly prepared: PreparedStatements | null = null,
  ) {}

  /** Statements sent so far and the jobs they carried (a copy; refused batches and their retries included). */
  stats(): SubmitStatementStats {
    return { ...this.counts };
  }

  /** Resolves with the job's ids once its statement committed; rejects with its error (as Prisma raised it). */
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
    const stats = this.counts;
    stats.statements++;
    stats.jobs += batch.length;
    if (batch.length === 1) {
      const [one] = batch;
      await insertOne(this.db, one.entry, this.prepared).then(one.resolve, one.reject);
      return;
    }
    let ids: Array<InsertedIds | null>;
    try {
      ids = await insertMany(
        this.db,
        batch.map((b) => b.entry),
        this.prepared,
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
        await insertOne(this.db, b.entry, this.prepared).then(b.resolve, b.reject);
      }
      return;
    }
    batch.forEach((b, i) => {
      const got = ids[i];
      if (got) b.resolve(got);
      else b.reject(new QueueGoneError(b.entry.job.queue ?? DEFAULT_QUEUE_NAME));
    });
  }
}
