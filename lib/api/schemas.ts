/**
 * The zod schemas of the REST API: the ONE place that says what a request may carry (route
 * handlers validate with them) and what an answer looks like; the OpenAPI document
 * (lib/api/openapi.ts) is generated from these same objects with `z.toJSONSchema`.
 *
 * Response schemas mirror lib/api/types.ts (the TypeScript contract the CLI and dashboard use);
 * compile-time checks at the end of this file fail `tsc` when the two drift apart.
 */
import { z } from 'zod';
import { SCHEDULE_ORIGIN, SUBMIT_ORIGINS } from '../jobs/origin';
import { ATTEMPT_STATUSES, JOB_STATUSES, TASK_STATUSES } from '../jobs/status';
import type {
  AttemptView,
  CancelResult,
  JobCounts,
  JobDetail,
  JobEventView,
  JobList,
  JobSummary,
  LogRange,
  QueueList,
  QueueView,
  SubmitResult,
  UploadManifestView,
  TaskSummary,
  TaskView,
} from './types';
import { GroupSummarySchema, submitFlowFields } from './schemas-flow';
import { AFTER_MODES, checkPlainValue, DEFAULT_QUEUE, PRIORITY, PRIORITY_EXPECTED, QUEUE_NAME, QUEUE_NAME_EXPECTED, textProblem, type SpecIssue } from '../jobs/spec';

export { apiRegistry, named, type SchemaMeta } from './schema-registry';
import { named } from './schema-registry';

// ─── building blocks ────────────────────────────────────────────────────────────────────────

/**
 * A string a user sends, `min`–`max` characters, refused when the database cannot store it
 * (NUL, lone surrogates: lib/jobs/spec textProblem, the rule the spec applies too).
 */
export const userText = (min: number, max?: number) =>
  (max === undefined ? z.string().min(min) : z.string().min(min).max(max)).superRefine((v, ctx) => {
      const p = textProblem(v);
      if (p) ctx.addIssue({ code: 'custom', message: p });
    });

/**
 * Client metadata: any JSON object, held to the spec's plain-value rules (depth, size, storable
 * text in values and keys: lib/jobs/spec checkPlainValue), each problem at its path.
 */
export const MetadataSchema = z.record(z.string(), z.unknown()).superRefine((v, ctx) => {
  for (const p of checkPlainValue(v)) ctx.addIssue({ code: 'custom', message: p.message.replace(/^the spec /, 'the metadata '), path: p.path });
});

export const isoTime = () => z.string().meta({ format: 'date-time', description: 'ISO-8601 time, UTC' });
const count = () => z.number().int().min(0);
const JobStatusSchema = named(z.enum(JOB_STATUSES), 'JobStatus', 'Job status (lib/jobs/status.ts; SkyPilot ManagedJobStatus).');
const TaskStatusSchema = named(z.enum(TASK_STATUSES), 'TaskStatus', 'Task (pipeline step) status.');
const AttemptStatusSchema = named(z.enum(ATTEMPT_STATUSES), 'AttemptStatus', 'Attempt (one run of a task) status.');

/** The largest PostgreSQL `integer`: ids, task indexes, attempt numbers, event ids. */
export const MAX_PG_INT = 2_147_483_647;
/** Upper bound of a job id (PostgreSQL `integer`). */
export const MAX_JOB_ID = MAX_PG_INT;
/** Largest page of GET /api/jobs. */
export const MAX_LIST_LIMIT = 200;
/** Default page size of GET /api/jobs. */
export const DEFAULT_LIST_LIMIT = 50;

const statusList = JOB_STATUSES.join(', ');

/** A job status as a filter value; the error lists every valid status. */
export const JobStatusFilterSchema = z.enum(JOB_STATUSES, {
  error: (iss) => `unknown status "${String(iss.input)}"; valid statuses: ${statusList}`,
});

/** Path parameter `id` of /api/jobs/{id}. */
export const JobIdSchema = z
  .string()
  .regex(/^[0-9]+$/, { error: (iss) => `job id must be a positive integer, got "${String(iss.input)}"` })
  .transform((s) => Number(s))
  .refine((n) => n >= 1 && n <= MAX_JOB_ID, { error: `job id must be between 1 and ${MAX_JOB_ID}` })
  .meta({ description: 'Job id (positive integer).' });

/** A client-chosen idempotency key (Ray's `submission_id`). */
export const SubmissionIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:@\/+=-]+$/, { error: 'submissionId may hold only letters, digits and . _ : @ / + = -' })
  .meta({ description: "Client-chosen idempotency key (Ray's submission_id). A repeat with the same spec answers the existing job (200); with a different spec, 409." });

/** Env overrides: names as in shell (`[A-Za-z_][A-Za-z0-9_]*`), values strings. */
export const EnvsSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'env names must match [A-Za-z_][A-Za-z0-9_]*' }), userText(0))
  .meta({ description: 'Env overrides applied to every task (override the YAML envs).' });

/** Secret overrides: like envs, but always masked when shown and never logged (docs/spec.md "secrets"). */
export const SecretsSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'secret names must match [A-Za-z_][A-Za-z0-9_]*' }), userText(0))
  .meta({ description: "Secret values applied to every task (override the YAML secrets; give the ones the YAML leaves empty). Never shown back: a re-run reuses them server-side." });

const JobNameSchema = userText(1, 200).meta({ description: 'Overrides the job name from the spec.' });
const FilenameSchema = userText(1, 1024).meta({ description: 'File name used in spec error messages (e.g. the CLI file argument).' });

/** What submits a job (Job.origin), as the client says; absent = "api". */
export const OriginSchema = z
  .enum(SUBMIT_ORIGINS, { error: (iss) => `origin must be one of ${SUBMIT_ORIGINS.join(', ')}, got ${JSON.stringify(iss.input)}` })
  .meta({ description: 'What submits the job (shown on its page): cli, api or dashboard. Default api.' });

/** Admission priority (lib/jobs/spec PRIORITY): an integer 0–1000, higher first. */
export const PrioritySchema = z
  .int({ error: PRIORITY_EXPECTED })
  .min(PRIORITY.min, { error: PRIORITY_EXPECTED })
  .max(PRIORITY.max, { error: PRIORITY_EXPECTED })
  .meta({ description: `Admission priority, ${PRIORITY.min}–${PRIORITY.max}: higher starts first, FIFO within a priority (default: the spec's, else the queue's, else ${PRIORITY.default}).` });

/** The same as a query parameter (a decimal integer). */
const PriorityQuerySchema = z
  .string()
  .regex(/^[0-9]{1,4}$/, { error: PRIORITY_EXPECTED })
  .transform((s) => Number(s))
  .pipe(PrioritySchema)
  .meta({ description: PrioritySchema.description });

/** The `queue` filter of GET /api/jobs and /api/jobs/counts: a queue name (whether it is defined or not). */
export const QueueFilterSchema = z
  .string()
  .regex(QUEUE_NAME, { error: (iss) => `queue ${JSON.stringify(String(iss.input).slice(0, 80))}: ${QUEUE_NAME_EXPECTED}` })
  .meta({ description: 'Only the jobs of this operator queue ("default": those that name none).' });

/** The queue a submit names (`queue` of POST /api/jobs): the queue name rule; an unknown one is refused with the list. */
const SubmitQueueSchema = z
  .string()
  .regex(QUEUE_NAME, { error: (iss) => `queue ${JSON.stringify(String(iss.input).slice(0, 80))}: ${QUEUE_NAME_EXPECTED}` })
  .meta({ description: "The operator queue (wins over the spec's `queue`); one the server does not have is refused (400) with the list of queues." });

// ─── requests ───────────────────────────────────────────────────────────────────────────────

/** Content types POST /api/jobs and POST /api/validate accept as raw YAML text. */
export const YAML_CONTENT_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'text/plain'] as const;

/**
 * JSON body of POST /api/jobs: exactly one of `yaml`, `spec` or `cmd`, plus overrides.
 */
export const SubmitJsonSchema = named(
  z
    .strictObject({
      yaml: z.string().meta({ description: 'The job YAML text (one document, or several separated by --- for a pipeline).' }).optional(),
      spec: z.unknown().meta({ description: 'The job spec as a JSON value (same keys as the YAML).' }).optional(),
      cmd: z.string().min(1).meta({ description: 'A one-command job: its `run` script.' }).optional(),
      name: JobNameSchema.optional(),
      envs: EnvsSchema.optional(),
      secrets: SecretsSchema.optional(),
      workdirUpload: z
        .string()
        .regex(/^[0-9a-f]{64}$/, { error: 'workdirUpload must be an upload hash (64 lower-case hex digits, from POST /api/uploads)' })
        .meta({ description: 'The hash POST /api/uploads answered: the folder a relative workdir names; each attempt runs in a fresh copy.' })
        .optional(),
      fileMountUploads: z
        .record(
          z.string().min(1).max(4096, { error: 'a file_mounts target is at most 4096 characters' }),
          z.strictObject({
            hash: z.string().regex(/^[0-9a-f]{64}$/, { error: 'fileMountUploads hash must be an upload hash (64 lower-case hex digits, from POST /api/uploads)' }),
            kind: z.enum(['file', 'dir'], { error: 'fileMountUploads kind must be "file" or "dir"' }),
          }),
        )
        .refine((m) => Object.keys(m).length <= 64, { error: 'fileMountUploads holds at most 64 targets' })
        .meta({ description: 'The uploaded content of local file_mounts sources, by target as written in the spec: `dir` (a folder, placed at the target) or `file` (an archive of one file, placed as the target).' })
        .optional(),
      submissionId: SubmissionIdSchema.optional(),
      metadata: MetadataSchema.meta({ description: "Arbitrary client metadata (Ray's metadata), stored with the job." }).optional(),
      filename: FilenameSchema.optional(),
      origin: OriginSchema.optional(),
      priority: PrioritySchema.optional(),
      queue: SubmitQueueSchema.optional(),
      ...submitFlowFields,
    })
    .superRefine((v, ctx) => {
      const given = (['yaml', 'spec', 'cmd'] as const).filter((k) => v[k] !== undefined);
      if (given.length !== 1) {
        ctx.addIssue({ code: 'custom', path: [], message: given.length ? `give exactly one of yaml, spec or cmd, not ${given.join(' and ')}` : 'give one of yaml, spec or cmd' });
      }
    }),
  'SubmitRequest',
  'POST /api/jobs JSON body: exactly one of yaml, spec or cmd.',
);
export type SubmitJson = z.infer<typeof SubmitJsonSchema>;

/** Query parameters of POST /api/jobs (used with a raw YAML body; a JSON body carries them itself). */
export const SubmitQuerySchema = z.object({
  name: JobNameSchema.optional(),
  submissionId: SubmissionIdSchema.optional(),
  filename: FilenameSchema.optional(),
  origin: OriginSchema.optional(),
  priority: PriorityQuerySchema.optional(),
  queue: SubmitQueueSchema.optional(),
});

/** Body of POST /api/jobs/{id}/rerun (optional: an empty body is `{}`). */
export const RerunRequestSchema = named(
  z.strictObject({ origin: OriginSchema.optional(), name: JobNameSchema.optional(), envs: EnvsSchema.optional(), priority: PrioritySchema.optional() }),
  'RerunRequest',
  "POST /api/jobs/{id}/rerun body: what asks for the re-run (the new job's origin) and what changes from the job's submission — the name, env vars merged over the ones given at launch (each wins), the priority.",
);

/** Body of PATCH /api/jobs/{id}: what may change on a job (its priority, while PENDING). */
export const PatchJobSchema = named(
  z.strictObject({ priority: PrioritySchema }),
  'PatchJobRequest',
  'PATCH /api/jobs/{id} JSON body: the new priority of a PENDING job (409 otherwise).',
);

/**
 * Body of POST /api/jobs/cancel: `ids`, or a filter (`status`, `q`, or `all: true`). A filter
 * selects the jobs that match it and are not terminal yet. A body with neither is refused.
 */
export const CancelRequestSchema = named(
  z
    .strictObject({
      ids: z.array(z.number().int().min(1).max(MAX_JOB_ID)).min(1, { error: 'ids: give at least one job id' }).max(10_000).optional(),
      status: z.array(JobStatusFilterSchema).min(1).optional(),
      q: userText(1, 200).optional(),
      all: z.literal(true).meta({ description: 'Every job that is not terminal yet.' }).optional(),
    })
    .superRefine((v, ctx) => {
      if (v.ids && (v.status || v.q || v.all)) ctx.addIssue({ code: 'custom', path: [], message: 'give ids or a filter (status, q, all), not both' });
    }),
  'CancelRequest',
  'POST /api/jobs/cancel body: `ids`, or a filter over jobs not yet terminal. An empty filter is refused.',
);
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

/** JSON body of POST /api/validate (a raw YAML body works too). */
export const ValidateJsonSchema = named(
  z.strictObject({ yaml: z.string(), filename: FilenameSchema.optional() }),
  'ValidateRequest',
  'POST /api/validate JSON body.',
);

// ─── responses (mirror lib/api/types.ts) ─────────────────────────────────────────────────────

/** One problem found in a job spec, with where it is (line/column are 1-based; null when unknown). */
export const SpecIssueSchema = named(
  z.object({
    file: z.string(),
    line: z.number().int().nullable(),
    column: z.number().int().nullable(),
    endLine: z.number().int().nullable().meta({ description: 'Where the offending node ends (for editors).' }),
    endColumn: z.number().int().nullable().meta({ description: 'Exclusive end column.' }),
    path: z.string().meta({ description: 'Key path, e.g. "tasks[1].resources.cpus".' }),
    message: z.string(),
  }),
  'SpecIssue',
  'A problem in a job spec: file, 1-based line and column, key path, message.',
);

/** RFC 9457 problem details (every error answer). */
export const ProblemSchema = named(
  z
    .object({
      type: z.string(),
      title: z.string(),
      status: z.number().int(),
      detail: z.string(),
      issues: z.array(z.unknown()).optional().meta({ description: 'For spec and request errors: each problem with its place.' }),
    })
    .loose(),
  'Problem',
  'application/problem+json: what went wrong (title) and what and where (detail).',
);

export const ValidateResultSchema = named(
  z.object({
    ok: z.boolean(),
    issues: z.array(SpecIssueSchema),
    warnings: z.array(SpecIssueSchema).meta({ description: 'Keys accepted and not acted on: where, and what jobdeck does instead (docs/spec.md "SkyPilot keys").' }),
    required: z.array(SpecIssueSchema).meta({ description: 'Envs and secrets without a value: required at launch (`envs`/`secrets` of the submit); not errors of the text.' }),
  }),
  'ValidateResult',
  'POST /api/validate answer: ok, or the issues with line, column and key path; and the warnings.',
);

const ratio = () => z.number().min(0).nullable();

export const AttemptUsageSchema = named(
  z.object({
    cpuSeconds: z.number().min(0).meta({ description: 'CPU time, user + system (s), as of sampledAt.' }),
    averageCores: ratio().meta({ description: 'Average cores over the wall time so far.' }),
    rssBytes: z.number().min(0).nullable(),
    peakRssBytes: z.number().min(0).nullable(),
    peakProcs: z.number().int().min(0).nullable(),
    sampledAt: isoTime().nullable(),
    requested: z.object({ cpus: z.number().min(0), memoryBytes: z.number().min(0).nullable() }),
    efficiency: z.object({
      cpu: ratio().meta({ description: 'CPU-seconds ÷ (cpus × wall seconds).' }),
      memory: ratio().meta({ description: 'Peak RSS ÷ requested memory; null when none was requested.' }),
    }),
    series: z
      .array(z.tuple([z.number(), z.number().min(0), z.number().min(0), z.number().int().min(0), z.number().int().min(1)]))
      .max(720)
      .meta({ description: 'Downsampled points [t ms since epoch, CPU ms so far, RSS bytes, processes, samples merged].' }),
  }),
  'AttemptUsage',
  'What an attempt used, seff-like.',
);

export const AttemptViewSchema = named(
  z.object({
    number: z.number().int().min(1),
    status: AttemptStatusSchema,
    cause: z.enum(['first', 'restart', 'recovery']),
    exitCode: z.number().int().nullable(),
    reason: z.string().nullable(),
    executor: z.string(),
    nodes: z.array(z.string()).nullable().meta({ description: 'The nodes it ran on, host names in rank order (SkyPilot\'s node_names): locally the host name, on Slurm the allocated nodes; null until known or not recorded.' }),
    createdAt: isoTime(),
    startedAt: isoTime().nullable(),
    endedAt: isoTime().nullable(),
    logBytes: count().meta({ description: "What the attempt's log takes on disk now (bytes): its size, or its compressed size once the finished log was compressed." }),
    usage: AttemptUsageSchema.nullable().meta({ description: 'What the attempt used (CPU, memory, seff-like efficiency); null: not recorded.' }),
    gpus: z
      .object({
        type: z.string(),
        count: z.number().min(0),
        devices: z.array(z.object({ index: count(), share: z.number().min(0).max(1) })).optional(),
        gpuSeconds: z.number().min(0),
      })
      .nullable()
      .meta({ description: 'The GPUs it held: type, count per node, the devices given (local; absent: the executor placed them), GPU-seconds so far; null: none.' }),
    osUser: z.string().nullable().meta({ description: 'The OS account its setup and run ran as (isolation on); null: jobdeck\'s own.' }),
    logLostBytes: count().nullable().meta({ description: 'Bytes of output its log could not take (a full disk); the log has a "[jobdeck] N bytes of output lost here" line where they went missing. null: none lost.' }),
  }),
  'AttemptView',
  'One attempt (one run of a task).',
);

const taskSummaryShape = {
  index: count(),
  name: z.string().nullable(),
  status: TaskStatusSchema,
  attempts: count(),
  restarts: count(),
  maxRestarts: count(),
  exitCodeRestarts: count().meta({ description: 'Restarts on an exit code of recover_on_exit_codes (not counted against maxRestarts).' }),
  recoveries: count(),
  startedAt: isoTime().nullable(),
  endedAt: isoTime().nullable(),
  nodeNames: z.array(z.string()).meta({ description: "The nodes its latest attempt runs or ran on (SkyPilot's node_names); [] before one is known." }),
  nodes: z.number().int().min(2).optional().meta({ description: "Nodes of each attempt (num_nodes), one log per rank; absent for one node." }),
};
export const TaskSummarySchema = named(z.object(taskSummaryShape), 'TaskSummary', 'One task (pipeline step) as the job list shows it.');

const jobSummaryBase = {
  id: z.number().int().min(1),
  name: z.string(),
  status: JobStatusSchema,
  statusReason: z.string().nullable(),
  submissionId: z.string().nullable(),
  submittedAt: isoTime(),
  startedAt: isoTime().nullable(),
  endedAt: isoTime().nullable(),
  totalDurationMs: count().meta({ description: 'Submitted → end (or now), ms.' }),
  jobDurationMs: count().nullable().meta({ description: 'Started → end (or now), ms; null before it started.' }),
  taskCount: count(),
  currentTask: count(),
  tasksSucceeded: count(),
  restartCount: count().meta({ description: "Restarts after the user's own failure, counted against max_restarts_on_errors (all tasks)." }),
  exitCodeRestartCount: count().meta({ description: 'Restarts on an exit code of recover_on_exit_codes, not counted against the budget (all tasks).' }),
  recoveryCount: count().meta({ description: 'Attempts the executor lost and started again (all tasks).' }),
  labels: z.record(z.string(), z.string()).meta({ description: 'resources.labels of its tasks (a key\'s value from the first task that has it); {} when none. Filter with ?label=key=value.' }),
  cancelRequested: z.boolean(),
  priority: z.number().int().min(0).max(1000).meta({ description: 'Admission priority: higher starts first, FIFO within a priority.' }),
  queue: z.string().meta({ description: 'The operator queue ("default": no limits of its own).' }),
  owner: z.string().nullable().meta({ description: 'Who submitted it (the user name); null when no submitter is recorded.' }),
  pendingReason: z
    .string()
    .nullable()
    .meta({ description: 'While PENDING: why it waits and its place in line, from the last admission pass that read it (null: not read yet, further back). While STARTING or RUNNING: why the executor\'s own scheduler still holds its attempt ("Slurm: Resources"; null when it runs). Null otherwise.' }),
  place: named(
    z.object({
      position: z.number().int().min(1).nullable().meta({ description: "1-based place among its executor's waiting jobs (priority, then submission); null when the pass did not read every job ahead of it." }),
      queuePosition: z.number().int().min(1).meta({ description: '1-based place among the waiting jobs of its queue on that executor.' }),
      ahead: z.object({ jobs: count(), cpus: z.number().min(0), gpus: z.number().min(0) }).nullable().meta({ description: 'The jobs waiting ahead of it and the CPUs and GPUs they ask for; null with position null.' }),
    }),
    'JobPlace',
    'Where a waiting job is in line, as the last admission pass that read it found it.',
  )
    .nullable()
    .meta({ description: 'While PENDING: its place in line (updated as jobs ahead start); null otherwise or before a pass read it.' }),
  nextAttemptAt: isoTime().nullable().meta({ description: 'When the next attempt of its current task starts at the earliest: a restart or recovery waiting out its backoff; null when none waits.' }),
  group: z.object({ id: z.number().int(), index: count(), lead: z.boolean() }).nullable().meta({ description: 'The group (array/sweep) it belongs to and its slot; lead: it stands for the group in a folded list. Null: a job of its own.' }),
  scheduleId: z.number().int().nullable().meta({ description: 'The schedule whose fire submitted it; null otherwise.' }),
};
export const JobSummarySchema = named(z.object({ ...jobSummaryBase, tasks: z.array(TaskSummarySchema) }), 'JobSummary', 'One job in the list.');

const AlternativeSchema = z.object({ key: z.enum(['any_of', 'ordered']), index: count(), of: count() }).nullable().meta({ description: 'The resources.any_of / ordered alternative chosen at submit (index 0-based of `of`), or null.' });
export const TaskViewSchema = named(
  z.object({
    ...taskSummaryShape,
    labels: z.record(z.string(), z.string()).meta({ description: 'Its resources.labels; {} when none.' }),
    statusReason: z.string().nullable(),
    exitCode: z.number().int().nullable(),
    setup: z.string().nullable(),
    run: z.string().nullable(),
    envs: z.record(z.string(), z.string()).meta({ description: 'Secret-looking values masked.' }),
    workdir: z.string().nullable(),
    resources: z.object({ cpus: z.number(), cpusAtLeast: z.boolean(), memoryGb: z.number().nullable(), memoryAtLeast: z.boolean(), alternative: AlternativeSchema }),
    recoverOnExitCodes: z.array(z.number().int()),
    attemptList: z.array(AttemptViewSchema),
  }),
  'TaskView',
  'A task with its attempts and masked spec.',
);

export const JobEventViewSchema = named(
  z.object({
    id: z.number().int(),
    at: isoTime(),
    entity: z.enum(['job', 'task', 'attempt', 'server']),
    taskIndex: z.number().int().nullable(),
    attemptNumber: z.number().int().nullable(),
    from: z.string().nullable(),
    to: z.string(),
    reason: z.string().nullable(),
  }),
  'JobEventView',
  'One entry of a job\'s history (append-only): a status change, or the server\'s own (entity server: STOPPED, READOPTED).',
);

export const UploadManifestSchema = named(
  z.object({
    hash: z.string().meta({ description: 'sha256 of the archive: what a submit names as workdirUpload.' }),
    size: count().meta({ description: 'Archive size (bytes, compressed).' }),
    unpackedSize: count().meta({ description: 'Sum of the file sizes (bytes).' }),
    entries: count(),
    files: z.array(z.string()).meta({ description: 'The first 1000 entries (folders end in /, links as "a -> b").' }),
  }),
  'UploadManifest',
  'POST /api/uploads answer: a stored folder (gzip\'d tar), once per content hash.',
);

export const JobDetailSchema = named(
  z.object({
    ...jobSummaryBase,
    tasks: z.array(TaskViewSchema),
    dependsOn: z.array(z.object({ jobId: z.number().int(), after: z.enum(AFTER_MODES) })).meta({ description: 'The jobs it waits (or waited) for (depends_on), each with its mode.' }),
    events: z.array(JobEventViewSchema),
    specYaml: z.string().meta({ description: 'The YAML as submitted, secret-looking env values masked.' }),
    launch: z
      .object({
        name: z.string().nullable().meta({ description: 'The name given at launch (overriding the YAML), or null.' }),
        envs: z.record(z.string(), z.string()).meta({ description: 'Envs given at launch (overriding the YAML), masked like task envs.' }),
      })
      .meta({ description: 'What was submitted beside the YAML; a re-run submits both again.' }),
    origin: z.enum([...SUBMIT_ORIGINS, SCHEDULE_ORIGIN]).meta({ description: 'What submitted the job ("schedule": a schedule\'s fire).' }),
    metadata: z.unknown(),
    executor: z.string(),
    warnings: z.array(SpecIssueSchema).meta({ description: 'The spec\'s warnings at submit: keys accepted and not acted on (docs/spec.md "SkyPilot keys").' }),
    viaToken: z.string().nullable().meta({ description: 'The prefix of the personal token it was submitted through; null: the admin token, a browser session, or none.' }),
    upload: UploadManifestSchema.extend({ hash: z.string().nullable().meta({ description: 'sha256 of the archive; null for a caller who may not use the upload (who may not re-run the job).' }) })
      .nullable()
      .meta({ description: 'The folder uploaded for the workdir, or null.' }),
    logsRemovedAt: isoTime().nullable().meta({ description: 'When the retention policy removed the logs (its logs then answer 410), or null.' }),
    logBytesTotal: count().meta({ description: "Disk usage of the job's logs now (bytes): every attempt's log, its rank logs (multi-node) and time indexes." }),
  }),
  'JobDetail',
  'GET /api/jobs/{id}: the job with tasks, attempts and events.',
);

export const JobListSchema = named(
  z.object({ jobs: z.array(JobSummarySchema), nextCursor: z.string().nullable(), groups: z.array(GroupSummarySchema).optional().meta({ description: 'With fold=groups: the groups whose first job is on this page; absent otherwise.' }) }),
  'JobList',
  'A page of jobs, newest first; pass nextCursor back as cursor for the next page.',
);

export const SubmitResultSchema = named(
  z.object({
    id: z.number().int().min(1),
    submissionId: z.string().nullable(),
    status: JobStatusSchema,
    warnings: z.array(SpecIssueSchema).meta({ description: 'Keys of the spec accepted and not acted on (as stored on the job).' }),
    group: z.object({ id: z.number().int(), size: count(), jobIds: z.array(z.number().int()) }).optional().meta({ description: 'For an array: its group; id above is its first job.' }),
  }),
  'SubmitResult',
  'POST /api/jobs answer.',
);

export const JobCountsSchema = named(
  z.object({
    total: count().meta({ description: 'Jobs the search finds, in every status.' }),
    byStatus: z.partialRecord(z.enum(JOB_STATUSES), count()).meta({ description: 'Jobs per status; a status without jobs is absent.' }),
  }),
  'JobCounts',
  'GET /api/jobs/counts: how many jobs are in each status (for the status filters).',
);

export const CancelResultSchema = named(
  z.object({
    cancelled: z.array(z.number().int()).meta({ description: 'Ended as CANCELLED at once (they had not started).' }),
    cancelling: z.array(z.number().int()).meta({ description: 'Asked to stop; the monitor ends them.' }),
    alreadyTerminal: z.array(z.object({ id: z.number().int(), status: z.string() })),
    notFound: z.array(z.number().int()),
    forbidden: z.array(z.number().int()).optional().meta({ description: "Another user's jobs a member may not cancel (none written); only when some were named." }),
  }),
  'CancelResult',
  'What a cancel did to each job.',
);

export const QueueViewSchema = named(
  z.object({
    name: z.string(),
    owner: z.string().nullable().meta({ description: 'The name of the user who created it; null: none recorded (the default queue).' }),
    maxRunning: z.number().int().nullable(),
    maxCpus: z.number().nullable(),
    maxGpus: z.number().nullable(),
    startTimeoutMs: z.number().int().nullable().meta({ description: "Its own start timeout (ms); null: the server's." }),
    defaultPriority: z.number().int().nullable(),
    memberMaxPriority: z.number().int().nullable().meta({ description: "Highest priority a member may give the queue's jobs; null: the role's cap only (admins are not capped)." }),
    pending: count().meta({ description: 'Jobs of the queue waiting (PENDING).' }),
    running: count().meta({ description: 'Jobs of the queue active now.' }),
    cpus: z.number().min(0).meta({ description: 'CPUs its active jobs hold.' }),
    gpus: z.number().min(0).meta({ description: 'GPUs its active jobs hold.' }),
  }),
  'Queue',
  `An operator queue with its limits (null: none) and what it holds now; "${DEFAULT_QUEUE}" has no limits.`,
);

export const QueueListSchema = named(
  z.object({ queues: z.array(QueueViewSchema), memberMaxPriority: z.number().int().nullable().meta({ description: "Highest priority a member may give a job in any queue (JOBDECK_QUOTA_MEMBER_MAX_PRIORITY); null: none. A queue's own may be lower." }) }),
  'QueueList',
  `Every queue, "${DEFAULT_QUEUE}" first, then by name, and the members' priority cap.`,
);

export const LogRangeSchema = named(
  z.object({
    task: count(),
    attempt: z.number().int().min(1),
    offset: count(),
    nextOffset: count(),
    size: count(),
    complete: z.boolean(),
    data: z.string(),
    rank: count().optional().meta({ description: 'The rank (node) of a multi-node attempt whose log this is; absent for rank 0 not asked for.' }),
  }),
  'LogRange',
  'One bounded byte range of one attempt log.',
);

// ─── compile-time checks: the schemas and lib/api/types.ts describe the same shapes ───────────

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Check<T extends true> = T;
export type SchemaTypeChecks = [
  Check<Equals<z.infer<typeof AttemptViewSchema>, AttemptView>>,
  Check<Equals<z.infer<typeof TaskSummarySchema>, TaskSummary>>,
  Check<Equals<z.infer<typeof JobSummarySchema>, JobSummary>>,
  Check<Equals<z.infer<typeof TaskViewSchema>, TaskView>>,
  Check<Equals<z.infer<typeof JobEventViewSchema>, JobEventView>>,
  Check<Equals<z.infer<typeof JobDetailSchema>, JobDetail>>,
  Check<Equals<z.infer<typeof JobListSchema>, JobList>>,
  Check<Equals<z.infer<typeof SubmitResultSchema>, SubmitResult>>,
  Check<Equals<z.infer<typeof CancelResultSchema>, CancelResult>>,
  Check<Equals<z.infer<typeof JobCountsSchema>, JobCounts>>,
  Check<Equals<z.infer<typeof LogRangeSchema>, LogRange>>,
  Check<Equals<z.infer<typeof QueueViewSchema>, QueueView>>,
  Check<Equals<z.infer<typeof QueueListSchema>, QueueList>>,
  Check<Equals<z.infer<typeof SpecIssueSchema>, SpecIssue>>,
  Check<Equals<z.infer<typeof UploadManifestSchema>, UploadManifestView>>,
];
