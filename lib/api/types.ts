/**
 * The shapes the REST API answers and the WebSocket streams send (JSON), shared by route
 * handlers, the stream endpoints, the CLI and the dashboard.
 * Browser-safe: types only. Times are ISO-8601 strings (UTC); durations are in ms; byte offsets
 * and sizes are in bytes. Env values whose names look secret are masked ("••••••").
 */
import type { JobPlace } from '../jobs/waiting';
import type { SubmitOrigin } from '../jobs/origin';
import type { Role } from '../jobs/roles';
import type { SpecIssue } from '../jobs/spec';
import type { AttemptStatus, JobStatus, TaskStatus } from '../jobs/status';
import type { GroupSummary } from './flow-types';

/** One attempt (one run of a task). */
export interface AttemptView {
  /** 1-based within its task. */
  number: number;
  status: AttemptStatus;
  /** Why the attempt exists: the first run, a restart after the task's own failure, a recovery. */
  cause: 'first' | 'restart' | 'recovery';
  exitCode: number | null;
  reason: string | null;
  executor: string;
  /**
   * The nodes it ran on, host names in rank order (SkyPilot's node_names): locally the machine's
   * host name, on Slurm the allocated nodes. Null until known (a Slurm job not started yet) or
   * when not recorded (attempts from before it was).
   */
  nodes: string[] | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** What the attempt's log takes on disk now (bytes): its size, or its compressed size once compressed (docs/design.md §8); 0 when none yet. */
  logBytes: number;
  /** What the attempt used (docs/design.md §7 "Resource usage"); null: not recorded. */
  usage: AttemptUsageView | null;
  /**
   * The GPUs it held (docs/design.md §6 "GPUs"): type, count per node, the device indices and
   * shares it was given (local; absent where the executor placed them: Slurm), and GPU-seconds
   * (GPUs × its run time so far); null: none.
   */
  gpus: { type: string; count: number; devices?: Array<{ index: number; share: number }>; gpuSeconds: number } | null;
  /** The OS account its setup and run ran as (isolation on, docs/design.md §16); null: jobdeck's own. */
  osUser: string | null;
  /**
   * Bytes of output its log could not take (a full disk); the log has a `[jobdeck] N bytes of
   * output lost here` line where they went missing (docs/design.md §8). null: none lost.
   */
  logLostBytes: number | null;
}

/**
 * An attempt's resource usage, seff-like. CPU efficiency = cpuSeconds ÷ (cpus × wall seconds);
 * memory efficiency = peak ÷ requested memory (null when none was requested).
 */
export interface AttemptUsageView {
  /** CPU time, user + system, seconds (as of `sampledAt`). */
  cpuSeconds: number;
  /** Average cores over the wall time so far (null without a start time). */
  averageCores: number | null;
  /** Resident memory at the last sample and the highest seen (bytes). */
  rssBytes: number | null;
  peakRssBytes: number | null;
  /** Most processes at once. */
  peakProcs: number | null;
  /** When the last sample was taken. */
  sampledAt: string | null;
  /** What the task asked for: CPUs, and memory in bytes (null: none asked). */
  requested: { cpus: number; memoryBytes: number | null };
  efficiency: { cpu: number | null; memory: number | null };
  /**
   * The downsampled series (at most 720 points), each `[t ms since epoch, CPU ms so far, RSS
   * bytes, processes, samples merged]`; the CPU is cumulative, so cores between two points are
   * ΔCPU ÷ Δt.
   */
  series: Array<[number, number, number, number, number]>;
}

/** One task (pipeline step) as the job list shows it. */
export interface TaskSummary {
  /** 0-based position in the pipeline. */
  index: number;
  name: string | null;
  status: TaskStatus;
  /** Number of attempts so far. */
  attempts: number;
  /** Restarts on error spent / allowed (job_recovery.max_restarts_on_errors). */
  restarts: number;
  maxRestarts: number;
  /** Restarts on an exit code of job_recovery.recover_on_exit_codes (not counted against maxRestarts). */
  exitCodeRestarts: number;
  /** Attempts the executor lost and started again (not the user's failure). */
  recoveries: number;
  startedAt: string | null;
  endedAt: string | null;
  /** The nodes its latest attempt runs or ran on (AttemptView.nodes; SkyPilot's node_names); [] before one is known. */
  nodeNames: string[];
  /** Nodes of each attempt (`num_nodes`), each rank with its own log; absent for one node. */
  nodes?: number;
}

/** One job in the list (GET /api/jobs). */
export interface JobSummary {
  id: number;
  name: string;
  status: JobStatus;
  statusReason: string | null;
  submissionId: string | null;
  submittedAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** Submitted → end (or now), ms — SkyPilot's TOT. DURATION. */
  totalDurationMs: number;
  /** Started → end (or now), ms — SkyPilot's JOB DURATION; null before it started. */
  jobDurationMs: number | null;
  taskCount: number;
  /** 0-based index of the task the pipeline is on. */
  currentTask: number;
  tasksSucceeded: number;
  /** Restarts after the user's own failure, counted against max_restarts_on_errors (all tasks). */
  restartCount: number;
  /** Restarts on an exit code of recover_on_exit_codes, not counted against the budget (all tasks). */
  exitCodeRestartCount: number;
  /** Attempts the executor lost and started again (all tasks). */
  recoveryCount: number;
  /**
   * `resources.labels` of its tasks (a key's value from the first task that has it); {} when none.
   * `GET /api/jobs?label=k=v` filters by them.
   */
  labels: Record<string, string>;
  cancelRequested: boolean;
  /** Admission priority, 0–1000 (higher starts first; docs/design.md §6 "Admission"). */
  priority: number;
  /** The operator queue ("default" when the spec names none). */
  queue: string;
  /** Who submitted it (the user's name); null when no submitter is recorded. */
  owner: string | null;
  /**
   * While PENDING: why it waits, with its place in line ("needs 4 CPUs, 2 of 8 free", "3 jobs
   * ahead at priority ≥ 500", "queue gpu at its limit (2 of 2 running)"), null before an
   * admission pass read it (it is then further back in line). While STARTING / RUNNING: why the
   * executor's own scheduler still holds its attempt ("Slurm: Resources"), null once it runs.
   * Null otherwise.
   */
  pendingReason: string | null;
  /**
   * While PENDING: its place in line as the last admission pass that read it found it — position
   * among its executor's waiting jobs (null when the pass did not read every job ahead) and in its
   * queue, and what waits ahead (jobs, the CPUs and GPUs they ask for); updated as jobs ahead
   * start. Null otherwise, or before a pass read it (docs/design.md §6 "Why pending").
   */
  place: JobPlace | null;
  /**
   * When the next attempt of its current task starts at the earliest: a restart or a recovery
   * waiting out its backoff (job_recovery `restart_backoff`, docs/spec.md); null when none waits.
   */
  nextAttemptAt: string | null;
  /** The group (an array or sweep) it belongs to and its slot; `lead`: it stands for the group in a folded list. Null: a job of its own. */
  group: { id: number; index: number; lead: boolean } | null;
  /** The schedule whose fire submitted it; null otherwise. */
  scheduleId: number | null;
  tasks: TaskSummary[];
}

export type { JobPlace } from '../jobs/waiting';

/** A task with its attempts and (masked) spec, for the job page. */
export interface TaskView extends TaskSummary {
  /** Its `resources.labels`; {} when none. */
  labels: Record<string, string>;
  statusReason: string | null;
  exitCode: number | null;
  setup: string | null;
  run: string | null;
  /** Masked where the name looks secret. */
  envs: Record<string, string>;
  workdir: string | null;
  /** `alternative`: the `any_of` / `ordered` entry chosen at submit (0-based `index` of `of`), or null. */
  resources: { cpus: number; cpusAtLeast: boolean; memoryGb: number | null; memoryAtLeast: boolean; alternative: { key: 'any_of' | 'ordered'; index: number; of: number } | null };
  recoverOnExitCodes: number[];
  /** Every attempt of the task, oldest first (TaskSummary.attempts is their count). */
  attemptList: AttemptView[];
}

/**
 * One entry of a job's history (JobEvent row): a status change of the job, a task or an attempt,
 * or the server's own (`entity: 'server'`, `from` null, `to` "STOPPED" — jobdeck stopped with the
 * job unfinished — or "READOPTED" — it started again and took the job up). `at` has milliseconds.
 */
export interface JobEventView {
  id: number;
  at: string;
  entity: 'job' | 'task' | 'attempt' | 'server';
  taskIndex: number | null;
  attemptNumber: number | null;
  from: string | null;
  to: string;
  reason: string | null;
}

/** GET /api/jobs/:id. */
export interface JobDetail extends Omit<JobSummary, 'tasks'> {
  tasks: TaskView[];
  /** The jobs it waits (or waited) for (`depends_on`), each with its mode. */
  dependsOn: Array<{ jobId: number; after: 'ok' | 'failed' | 'any' }>;
  events: JobEventView[];
  /** The YAML as submitted, with secret-looking env values masked. */
  specYaml: string;
  /** What was submitted beside the YAML (a re-run submits both again); envs masked. */
  launch: { name: string | null; envs: Record<string, string> };
  /** What submitted the job. */
  origin: SubmitOrigin;
  metadata: unknown;
  executor: string;
  /** The spec's warnings at submit (keys accepted, not acted on); empty when none. */
  warnings: SpecIssue[];
  /** The prefix of the personal token it was submitted through (Job.tokenId); null: another credential. */
  viaToken: string | null;
  /**
   * The folder uploaded for the workdir (size, file list), or null. Its `hash` is null for a
   * caller who may not use the upload (who may not re-run the job: docs/design.md §16).
   */
  upload: {
    hash: string | null;
    size: number;
    unpackedSize: number;
    entries: number;
    files: string[];
  } | null;
  /** When the retention policy removed the job's logs (ISO 8601), or null: they are kept. */
  logsRemovedAt: string | null;
  /** Disk usage of the job's logs now (bytes): every attempt's log, its rank logs and time indexes. */
  logBytesTotal: number;
}

/** POST /api/uploads answer; JobDetail.upload (lib/uploads/upload.ts UploadManifest). */
export interface UploadManifestView {
  hash: string;
  size: number;
  unpackedSize: number;
  entries: number;
  files: string[];
}

/** GET /api/jobs. Newest first; pass nextCursor back as `cursor` for the next page. */
export interface JobList {
  jobs: JobSummary[];
  nextCursor: string | null;
  /** With `fold=groups`: the groups whose first job is on this page (each shown as one row); absent otherwise. */
  groups?: GroupSummary[];
}

export type { GroupDetail, GroupSummary, ScheduleFireView, ScheduleView } from './flow-types';

/** GET /api/jobs/counts: jobs per status (a status without jobs is absent), for the filter chips. */
export interface JobCounts {
  total: number;
  byStatus: Partial<Record<JobStatus, number>>;
}

/** POST /api/jobs answer (201 created, 200 when a repeated submissionId matched). */
export interface SubmitResult {
  id: number;
  submissionId: string | null;
  status: JobStatus;
  /** Keys of the spec accepted and not acted on (file:line, key path, what jobdeck does instead). */
  warnings: SpecIssue[];
  /** For an array: its group (`id` above is its first job). */
  group?: { id: number; size: number; jobIds: number[] };
}

/** GET /api/jobs/:id/logs — one bounded byte range of one attempt's log. */
export interface LogRange {
  task: number;
  attempt: number;
  /** Byte offset of the first byte of `data`. */
  offset: number;
  /** Where the next read starts (offset + bytes returned). */
  nextOffset: number;
  /** File size now (bytes). */
  size: number;
  /** True when nextOffset reached the end of the file and the attempt has ended. */
  complete: boolean;
  /** The bytes, decoded as UTF-8 (a range never splits a multi-byte character). */
  data: string;
  /** The rank (node) of a multi-node attempt whose log this is, when one was asked for. */
  rank?: number;
}

/** POST /api/jobs/cancel and POST /api/jobs/:id/cancel. */
export interface CancelResult {
  cancelled: number[];
  cancelling: number[];
  alreadyTerminal: { id: number; status: string }[];
  notFound: number[];
  /** Another user's jobs the caller may not cancel (nothing written); only when some were named. */
  forbidden?: number[];
}

// The WebSocket messages (JSON text frames) of the job stream and the list stream; the protocol
// around them — binary log frames, order, positions, close codes — is lib/logs/protocol.ts.

/** JSON control messages, server → client. */
export type StreamMessage =
  /** First message: the job as it is now. */
  | { type: 'hello'; protocol: number; job: JobSummary }
  /** The job's status changed. `eventId`: the JobEvent id (pass the last one back as `since`). */
  | { type: 'job'; status: JobStatus; reason: string | null; at: string; eventId?: number }
  /** A task's status changed (e.g. STARTING, SUCCEEDED, CANCELLED). */
  | { type: 'task'; task: number; name: string | null; status: TaskStatus; reason: string | null; at: string; eventId?: number }
  /**
   * An attempt started (`phase: 'start'`, before its first log chunk) or ended (`phase: 'end'`,
   * after its last log chunk, with exitCode). `restart` is present on the start of a restart:
   * `{ n, max }` = restart n of max allowed ("restarting (attempt 2 of 2)").
   */
  | {
      type: 'attempt';
      phase: 'start' | 'end';
      task: number;
      attempt: number;
      status: AttemptStatus;
      cause: 'first' | 'restart' | 'recovery';
      exitCode: number | null;
      reason: string | null;
      at: string;
      restart?: { n: number; max: number };
      /** The JobEvent id of the attempt's creation (start) or of its terminal status (end). */
      eventId?: number;
      /** Ranks (nodes) of a multi-node attempt, each with its own log; absent for one node. */
      nodes?: number;
    }
  /**
   * Line times of an attempt's log (rank 0, or `rank`): `entries` are [end, ms] pairs of its time
   * index — bytes before `end` (after the previous entry's end) were first written at unix time
   * `ms` (lib/logs/protocol.ts timeAt). Sent before the log chunks they cover, or after them when
   * the index is written later than the bytes were read; never for an attempt without an index.
   */
  | { type: 'times'; task: number; attempt: number; rank?: number; entries: [number, number][] }
  /** Everything up to the requested point was sent and the job is terminal (or follow=0). */
  | { type: 'end'; status: JobStatus; follow: boolean }
  /**
   * The server is dropping this client (code in STREAM_ERROR_CODES); reconnect with `resume`
   * (`task`/`attempt`/`offset` as query parameters, `since` and `offsets` — comma-separated —
   * too when present, and the same `rank`) to continue exactly where the bytes the client
   * received end.
   */
  | { type: 'error'; code: string; message: string; resume?: { task: number; attempt: number; offset: number; since?: number; offsets?: number[] } };

/** Messages a client may send (JSON text frames); anything else closes with BAD_REQUEST. */
export type ClientMessage = { type: 'ping' };

/**
 * The server's answer to a ClientMessage ping, on both endpoints. Not part of StreamMessage /
 * ListMessage: a client that never pings never sees it; one that pings checks for it first.
 */
export type PongMessage = { type: 'pong' };

/**
 * Messages on the list endpoint `/ws/jobs` (dashboard jobs page). The server sends nothing on
 * connect: open the socket first, then GET /api/jobs, then apply messages (each carries the
 * whole JobSummary, so applying one twice is harmless). Bursts are coalesced: at most one
 * message per job per 100 ms, always with the job as it is at send time; `created` is sent for
 * a job whose creation falls in the coalesced burst.
 */
export type ListMessage =
  | { type: 'created'; job: JobSummary }
  | { type: 'updated'; job: JobSummary }
  | { type: 'deleted'; jobId: number };

/** An operator queue (GET /api/queues): its limits (null: none) and what it holds now. */
export interface QueueView {
  name: string;
  /** The name of the user who created it (Queue.userId); null: none recorded (the default queue). */
  owner: string | null;
  maxRunning: number | null;
  maxCpus: number | null;
  /** GPUs its active jobs may hold at once; null: no limit. */
  maxGpus: number | null;
  /** Its own start timeout (ms); null: the server's (JOBDECK_START_TIMEOUT_MS, none by default). */
  startTimeoutMs: number | null;
  defaultPriority: number | null;
  /** Highest priority a member may give the queue's jobs (null: only the role's cap, `UserMe.maxPriority`); admins are not capped. */
  memberMaxPriority: number | null;
  /** Jobs of the queue waiting (PENDING). */
  pending: number;
  /** Jobs of the queue active now. */
  running: number;
  /** CPUs its active jobs hold. */
  cpus: number;
  /** GPUs its active jobs hold. */
  gpus: number;
}

/** GET /api/queues: every queue, "default" first, then by name. */
export interface QueueList {
  queues: QueueView[];
  /** The highest priority a member may give a job in any queue (JOBDECK_QUOTA_MEMBER_MAX_PRIORITY); null: none. A queue's `memberMaxPriority` may be lower. */
  memberMaxPriority: number | null;
}

/** A webhook subscription (GET /api/webhooks…); its secret is never shown after create / rotate. */
export interface WebhookView {
  id: number;
  name: string;
  /** The name of the user who created it (WebhookSubscription.userId); null: none recorded. */
  owner: string | null;
  url: string;
  events: string[];
  jobNameGlob: string | null;
  metadataFilter: Record<string, unknown> | null;
  /** Only jobs whose spec names it (`notify: [name]`). */
  namedOnly: boolean;
  format: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One notification and its last try (a subscription's delivery log, a job's notifications). */
export interface DeliveryView {
  /** The delivery id: the `webhook-id` header of every try. */
  id: string;
  subscription: string;
  eventType: string;
  jobId: number | null;
  jobEventId: number | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** When the next try is due (null unless pending). */
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  /** The last answer's first ≤ 1 KiB. */
  responseHead: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** Percentiles per bucket (seconds; null: no job in the bucket) and how many jobs each holds. */
export interface PercentileSeries {
  p50: Array<number | null>;
  p95: Array<number | null>;
  jobs: number[];
}

/** Percentiles over a whole range (seconds; null: no job) and how many jobs they cover. */
export interface PercentileTotal {
  p50: number | null;
  p95: number | null;
  jobs: number;
}

/** GET /api/insights: what the charts page draws for one range (every series has one value per bucket). */
export interface InsightsView {
  range: '24h' | '7d' | '30d';
  /** The range, whole buckets (ISO-8601): the last bucket is the one holding `now` (it ends after it). */
  from: string;
  to: string;
  /** When the figures were computed: running jobs count up to here, not to `to`. */
  now: string;
  bucketSeconds: number;
  /** Start of each bucket. */
  buckets: string[];
  /** Jobs that started (their first start) in each bucket. */
  started: number[];
  /** Jobs that ended in each bucket, by final status (only statuses seen in the range). */
  ended: Record<string, number[]>;
  /** Submit → first start of the jobs that started in each bucket. */
  queueWait: PercentileSeries;
  /** First start → end of the jobs that ended in each bucket. */
  runDuration: PercentileSeries;
  /** The job names submitted most in the range (at most 10): jobs, failed ones, summed run seconds (a running job's up to `now`). */
  busiest: Array<{ name: string; jobs: number; failed: number; runSeconds: number }>;
  /** The whole range at once (for legends and summaries): jobs started, ended by status, and the percentiles over every job of the range. */
  totals: { started: number; ended: Record<string, number>; queueWait: PercentileTotal; runDuration: PercentileTotal };
  /**
   * GPU-hours used in the range by user and queue (each attempt's GPUs × its run time inside the
   * range; `user` null: a job without a known submitter), most first, at most 50; `gpusNow`: the
   * GPUs their running attempts hold now.
   */
  gpuHours: Array<{ user: string | null; queue: string; gpuHours: number; gpusNow: number }>;
}

/**
 * A live server as GET /api/monitor lists it under `servers` (several servers on one PostgreSQL;
 * docs/design.md §11; times ISO 8601). Schema: lib/api/monitor.ts ServerViewSchema.
 */
export interface ServerView {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  /** Milliseconds since its last heartbeat. */
  heartbeatAgeMs: number;
  jobsOwned: number;
  /** Jobs it took over from another server since its start. */
  takeovers: number;
  /** True for the server that answered. */
  self: boolean;
}

/** The part of GET /api/monitor the dashboard reads: `servers` is absent on one server (PGlite, no leases). */
export interface MonitorServers {
  servers?: ServerView[];
}

// Users, personal tokens and the audit log (lib/api/team.ts, lib/api/audit.ts).

/** A token as listed (never the token itself). */
export interface TokenView {
  id: number;
  userId: number;
  userName?: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

/**
 * GET /api/users/me: who the caller is, the highest priority it may give a job, and what the
 * authorization table (lib/auth/rules.ts) lets it call — what the dashboard shows its controls
 * and pages by.
 */
export interface UserMe {
  id: number;
  name: string;
  role: Role;
  /** The token it came with (its prefix); null for a browser session. */
  tokenPrefix: string | null;
  /**
   * Highest priority it may give a job in any queue (its role's cap, JOBDECK_QUOTA_MEMBER_MAX_PRIORITY);
   * a queue may lower it (QueueView.memberMaxPriority). Null: no cap (admins; members when none is set).
   */
  maxPriority: number | null;
  /**
   * Every row of the table the caller passes, keyed as the table is (`"PUT /api/queues/[name]"`),
   * with its reach: `any`, or `own` — only on its own jobs (a member) or its own tokens.
   * A row that is absent is refused.
   */
  may: Record<string, 'any' | 'own'>;
}

/** A new personal token (POST /api/tokens): the token itself is in this answer only. */
export interface CreatedTokenView extends TokenView {
  token: string;
}

/** A quota that applies to a user: its value (null: no limit) and where it comes from. */
export interface QuotaView {
  value: number | null;
  /** `user`: the user's own value; `role`: its role's default (JOBDECK_QUOTA_*); null: none. */
  source: 'user' | 'role' | null;
}

/** A user as listed (never the password hash). */
export interface UserView {
  id: number;
  name: string;
  /** `admin`, `member` or `viewer` (lib/jobs/roles.ts ROLES). */
  role: string;
  hasPassword: boolean;
  sso: boolean;
  /** The user's own running-CPU quota; null: its role's default, if any (see `quotas`). */
  maxRunningCpus: number | null;
  /** The user's own running-GPU quota; null: its role's default, if any (see `quotas`). */
  maxRunningGpus: number | null;
  /** The user's own pending-jobs quota; null: its role's default, if any (see `quotas`). */
  maxPendingJobs: number | null;
  /** The quotas that apply (docs/design.md §15 "Quotas"): the user's own, else its role's default. */
  quotas: { maxRunningCpus: QuotaView; maxRunningGpus: QuotaView; maxPendingJobs: QuotaView };
  /** The OS account its jobs run as when isolation is on (docs/design.md §16); null: the run account. */
  osUser: string | null;
  disabled: boolean;
  createdAt: string;
}

/** One audit row as the API answers it. */
export interface AuditRow {
  id: number;
  at: string;
  action: string;
  userId: number | null;
  userName: string | null;
  tokenPrefix: string | null;
  ip: string | null;
  target: string | null;
  detail: unknown;
}
