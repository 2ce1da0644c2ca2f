/**
 * Job submission with idempotency (Ray's `submission_id`): parse and validate the spec
 * (lib/jobs/spec/), then create the job through the store (lib/store submitJob).
 *
 * A client-chosen `submissionId` makes a submit safe to repeat: the same id with the same spec
 * (specHash, after overrides) answers the job that exists; with a different spec it is refused.
 * Two concurrent submits with one id create exactly one job: the unique index on
 * Job.submissionId decides, and the loser (Prisma P2002) re-reads the winner's row.
 */
import { stringify } from 'yaml';
import type { Job } from '../generated/prisma/client';
import { commandSpec, DEFAULT_QUEUE, jobCpus, jobExecutor, jobNodes, PRIORITY, readJobSpec, readJobSpecObject, serverExecutor, specHash, type PipelineSpec, type SpecUploads, type SpecExecutor, type SpecIssue } from '../jobs/spec';
import type { SubmitOrigin } from '../jobs/origin';
import type { Actor } from '../jobs/roles';
import { localGpuCount } from '../executors/gpus';
import { readManifest, type FileMountUpload } from '../executors/upload';
import type { JobStatus } from '../jobs/status';
import { cachedQueueRows, jobBySubmissionId, pendingJobsOf, QueueGoneError, submitJob, type Store } from '../store';

/** Where a spec comes from. */
export type SpecSource =
  /** YAML text; `filename` is shown in spec errors (default "job.yaml"). */
  | { kind: 'yaml'; text: string; filename?: string }
  /** The JSON form (a task object or a list of documents). */
  | { kind: 'spec'; value: unknown; filename?: string }
  /** A one-command job (`run: cmd`). */
  | { kind: 'cmd'; cmd: string };

/** A submission. */
export interface SubmitInput {
  source: SpecSource;
  /** Overrides the job name. */
  name?: string;
  /** Merged into every task's envs (wins over the file). */
  envs?: Record<string, string>;
  /** Merged into every task's secrets (wins over the file); never shown back, never logged. */
  secrets?: Record<string, string>;
  /** The content hash of a folder uploaded for the tasks' workdir (POST /api/uploads; lib/executors/upload.ts). */
  workdirUpload?: string;
  /** Uploaded content of the tasks' local `file_mounts` sources, by target (docs/spec.md "file_mounts"). */
  fileMountUploads?: Record<string, FileMountUpload>;
  /** Idempotency key. */
  submissionId?: string | null;
  /** Stored as is (Ray's metadata). */
  metadata?: Record<string, unknown> | null;
  /** What submits it (Job.origin; default "api"). */
  origin?: SubmitOrigin;
  /** Who submits it (Job.userId, Job.tokenId); none: no submitter recorded. */
  actor?: Actor;
  /** Admission priority (0–1000, checked by the caller); wins over the spec's `priority`. */
  priority?: number;
  /** The operator queue; wins over the spec's `queue` (checked like it: an unknown one is a SpecError). */
  queue?: string;
}

/**
 * The launch overrides of a submit as Job.launch keeps them — what a re-run passes again with
 * the stored YAML (lib/control/rerun.ts). Keys are present only when given.
 */
export interface LaunchOverrides {
  name?: string;
  envs?: Record<string, string>;
  /** Secrets given at launch: kept for a re-run (server-side), never shown back (views mask them). */
  secrets?: Record<string, string>;
  /** The uploaded workdir's content hash: each attempt runs in a fresh copy; a re-run reuses it. */
  workdirUpload?: string;
  /** The file_mounts uploads by target: placed in every attempt; a re-run reuses them. */
  fileMountUploads?: Record<string, FileMountUpload>;
  /** The queue given at launch (`--queue`, the API's `queue`). */
  queue?: string;
  /** The priority given at launch (`--priority`, the API's `priority`) or set while PENDING (lib/store setPendingPriority). */
  priority?: number;
  /** The file name spec errors were reported against. */
  filename?: string;
}

/** Job.launch of a submission: its overrides, or null when it had none. */
export function launchOf(input: SubmitInput): LaunchOverrides | null {
  const out: LaunchOverrides = {};
  if (input.name !== undefined) out.name = input.name;
  if (input.envs !== undefined && Object.keys(input.envs).length > 0) out.envs = { ...input.envs };
  if (input.secrets !== undefined && Object.keys(input.secrets).length > 0) out.secrets = { ...input.secrets };
  if (input.workdirUpload !== undefined) out.workdirUpload = input.workdirUpload;
  if (input.fileMountUploads !== undefined && Object.keys(input.fileMountUploads).length > 0) out.fileMountUploads = { ...input.fileMountUploads };
  if (input.queue !== undefined) out.queue = input.queue;
  if (input.priority !== undefined) out.priority = input.priority;
  const filename = input.source.kind === 'cmd' ? undefined : input.source.filename;
  if (filename !== undefined) out.filename = filename;
  return Object.keys(out).length ? out : null;
}

/** The job a submit answers (the API's SubmitResult). */
export interface SubmittedJob {
  id: number;
  submissionId: string | null;
  status: JobStatus;
  /** The spec's warnings (keys accepted, not acted on; docs/spec.md "SkyPilot keys"), as stored on the job. */
  warnings: SpecIssue[];
}

/** What a submit did: `created` false means a repeated submissionId matched an existing job. */
export interface SubmitOutcome {
  created: boolean;
  result: SubmittedJob;
}

/** The submit names an upload the data folder does not hold (never uploaded, or removed). Nothing was written. */
export class UnknownUploadError extends Error {
  constructor(
    readonly hash: string,
    readonly field = 'workdirUpload',
  ) {
    super(`${field} ${hash} is not a stored upload: upload the folder first (POST /api/uploads)`);
    this.name = 'UnknownUploadError';
  }
}

/** A submissionId was reused with a different spec. Nothing was written. */
export class SubmissionConflictError extends Error {
  constructor(
    readonly submissionId: string,
    readonly jobId: number,
  ) {
    super(`submissionId "${submissionId}" was already used for job ${jobId} with a different spec; use a new submissionId for a different job`);
    this.name = 'SubmissionConflictError';
  }
}

/** A validated spec and the YAML text stored with it (Job.specYaml). */
export interface BuiltSpec {
  spec: PipelineSpec;
  specYaml: string;
  /** Keys accepted and not acted on (lib/jobs/spec readJobSpec). */
  warnings: SpecIssue[];
}

/**
 * Validates a source into a normalized pipeline, applying the overrides; with `queues` (the
 * server's queue names) a `queue` naming none of them is an issue. For the JSON form and a
 * command, the stored YAML is written from what was submitted (one document per task).
 * @throws SpecError (lib/jobs/spec/) with every issue, lines included for YAML.
 */
export function buildSpec(
  source: SpecSource,
  overrides: { name?: string; envs?: Record<string, string>; secrets?: Record<string, string>; queue?: string } = {},
  queues?: readonly string[],
  uploads: SpecUploads = {},
): BuiltSpec {
  const ov = { name: overrides.name, envs: overrides.envs, secrets: overrides.secrets, queue: overrides.queue };
  const defaultExecutor = defaultExecutorOrNone();
  switch (source.kind) {
    case 'yaml':
      return { ...readJobSpec(source.text, { filename: source.filename, overrides: ov, defaultExecutor, queues, uploads, localGpus: localGpusOrNone() }), specYaml: source.text };
    case 'spec': {
      const read = readJobSpecObject(source.value, { filename: source.filename, overrides: ov, defaultExecutor, queues, uploads, localGpus: localGpusOrNone() });
      const docs = Array.isArray(source.value) ? source.value : [source.value];
      return { ...read, specYaml: docs.map((d) => stringify(d)).join('---\n') };
    }
    case 'cmd':
      return { spec: commandSpec(source.cmd, ov, defaultExecutor, queues), specYaml: stringify({ run: source.cmd }), warnings: [] };
  }
}

/** The local executor's GPUs (lib/executors/gpus.ts), or undefined when JOBDECK_LOCAL_GPUS is malformed (the server's start reports it). */
export function localGpusOrNone(): number | undefined {
  try {
    return localGpuCount();
  } catch {
    return undefined;
  }
}

/**
 * The server's default executor for the spec checks that depend on it (num_nodes on local);
 * undefined when JOBDECK_EXECUTOR is invalid — the submit then fails on it, saying so.
 */
export function defaultExecutorOrNone(): SpecExecutor | undefined {
  try {
    return serverExecutor();
  } catch {
    return undefined;
  }
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'P2002';
}

const resultOf = (job: Job): SubmittedJob => ({ id: job.id, submissionId: job.submissionId, status: job.status, warnings: storedWarnings(job.warnings) });

/** Job.warnings as the API answers it: the stored list, or none (jobs from before warnings, or without any). */
export function storedWarnings(v: unknown): SpecIssue[] {
  return Array.isArray(v) ? (v as SpecIssue[]) : [];
}

/** A submit over its user's pending quota (User.maxPendingJobs, else its role's default): nothing was written. */
export class PendingQuotaError extends Error {
  constructor(
    readonly user: string,
    readonly pending: number,
    readonly maxPendingJobs: number,
    /** The role whose default the quota is; null: the user's own value. */
    readonly roleDefault: string | null = null,
  ) {
    super(`user ${user} has ${pending} job${pending === 1 ? '' : 's'} pending and may have ${maxPendingJobs} at once${roleDefault ? ` (the ${roleDefault} role's default)` : ''}: wait for one to start, or cancel one`);
    this.name = 'PendingQuotaError';
  }
}

/**
 * @throws PendingQuotaError when the actor's pending jobs are at its quota (Actor.pendingQuota:
 *   its own, else its role's default). Checked before the write, not inside it: submits racing
 *   each other may pass it together (a quota, not a lock).
 */
async function checkPendingQuota(store: Store, actor: Actor | undefined): Promise<void> {
  const max = actor?.pendingQuota?.value;
  if (max === null || max === undefined || !actor) return;
  const pending = await pendingJobsOf(store, actor.userId);
  if (pending >= max) throw new PendingQuotaError(actor.name, pending, max, actor.pendingQuota?.source === 'role' ? actor.role : null);
}

/**
 * Submits a job: validates it (its `queue` must be one of the server's), then creates it in
 * PENDING on its executor (the spec's `resources.infra`, else JOBDECK_EXECUTOR — lib/jobs/spec/
 * jobExecutor), with its priority: the request's, else the spec's, else the queue's default,
 * else 500 — the monitor picks it
 * up from the store's 'created' event — or, for a repeated submissionId with the same spec, answers the
 * existing job with `created: false`.
 * A queue deleted after the check and before the job's row was written (the write refuses it:
 * lib/store QueueGoneError) is checked again against the queues as they are now: a SpecError
 * with the list, or — the queue defined again meanwhile — one more try.
 * @throws SpecError when the spec is invalid; SubmissionConflictError when the submissionId is
 *   taken by a job with a different spec; QueueGoneError when the queue vanished twice under the
 *   submit; Error when JOBDECK_EXECUTOR names no executor.
 */
export async function submitJobSpec(store: Store, input: SubmitInput): Promise<SubmitOutcome> {
  try {
    return await submitOnce(store, input);
  } catch (err) {
    if (!(err instanceof QueueGoneError)) throw err;
    store.queueCache = null;
    return submitOnce(store, input);
  }
}

async function submitOnce(store: Store, input: SubmitInput): Promise<SubmitOutcome> {
  const queues = await cachedQueueRows(store);
  if (input.workdirUpload !== undefined && !readManifest(input.workdirUpload)) throw new UnknownUploadError(input.workdirUpload);
  for (const [target, up] of Object.entries(input.fileMountUploads ?? {})) if (!readManifest(up.hash)) throw new UnknownUploadError(up.hash, `fileMountUploads.${target}`);
  const { spec, specYaml, warnings } = buildSpec(
    input.source,
    { name: input.name, envs: input.envs, secrets: input.secrets, queue: input.queue },
    queues.map((q) => q.name),
    { workdir: input.workdirUpload, fileMountTargets: Object.keys(input.fileMountUploads ?? {}), fileMountRoot: process.env.JOBDECK_FILE_MOUNT_ROOT || null },
  );
  const queue = spec.queue ?? DEFAULT_QUEUE;
  const hash = specHash(spec);
  const submissionId = input.submissionId ?? null;

  const existing = async (): Promise<SubmitOutcome | null> => {
    if (!submissionId) return null;
    const row = await jobBySubmissionId(store, submissionId);
    if (!row) return null;
    if (row.specHash !== hash) throw new SubmissionConflictError(submissionId, row.id);
    return { created: false, result: resultOf(row) };
  };

  const before = await existing();
  if (before) return before;
  await checkPendingQuota(store, input.actor);
  try {
    const job = await submitJob(store, {
      name: spec.name,
      submissionId,
      specYaml,
      spec: spec as never,
      specHash: hash,
      cpus: jobCpus(spec),
      nodes: jobNodes(spec),
      priority: input.priority ?? spec.priority ?? queues.find((q) => q.name === queue)?.defaultPriority ?? PRIORITY.default,
      queue,
      executor: jobExecutor(spec),
      metadata: (input.metadata ?? undefined) as never,
      launch: (launchOf(input) ?? undefined) as never,
      warnings: warnings.length ? (warnings as never) : undefined,
      origin: input.origin ?? 'api',
      userId: input.actor?.userId ?? null,
      tokenId: input.actor?.tokenId ?? null,
      tasks: spec.tasks.map((t) => ({ name: t.name, spec: t as never })),
    });
    return { created: true, result: resultOf(job) };
  } catch (err) {
    if (!submissionId || !isUniqueViolation(err)) throw err;
    // Lost the race on the unique index: the winner's row exists now.
    const after = await existing();
    if (after) return after;
    throw err;
  }
}
