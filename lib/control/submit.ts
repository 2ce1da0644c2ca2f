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
import { setting } from '../config';
import type { Job } from '../generated/prisma/client';
import { commandDocument, commandSpec, DEFAULT_QUEUE, jobCpus, jobExecutor, jobLabels, jobNodes, pipelineGpus, PRIORITY, readJobSpec, readJobSpecObject, serverExecutor, YAML_WRITE, specHash, type PipelineSpec, type SpecArray, type SpecDependsOn, type SpecUploads, type SpecIssue } from '../jobs/spec';
import { capabilitiesOf, type ExecutorKind } from '../jobs/executor-kinds';
import type { SubmitOrigin } from '../jobs/origin';
import { priorityCap, priorityCapProblem, type PriorityCap } from '../jobs/priority-cap';
import type { Actor } from '../jobs/roles';
import { localGpuDevices } from '../executors/local/gpus';
import type { GpuDevice } from '../jobs/gpus';
import { readManifest, type FileMountUpload } from '../uploads/upload';
import type { JobStatus } from '../jobs/status';
import { cachedQueueRows, groupSlots, jobBySubmissionId, pendingJobsOf, QueueGoneError, submitGroup, submitJob, uploadsSentBy, type NewJob, type Store } from '../store';
import { arrayOf, memberSpecs, withoutArray, withSlotEnvs, type ArrayInput, type MemberSpec } from './array';
import { resolveDependencies } from './dependencies';

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
  /** The content hash of a folder uploaded for the tasks' workdir (POST /api/uploads; lib/uploads/upload.ts). */
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
  /**
   * The uploads are a stored job's, re-run (lib/control/rerun.ts, whose caller checked that the
   * actor may re-run it): they need not be the actor's own. Otherwise an actor may name only
   * uploads it sent (docs/design.md §16).
   */
  uploadsOfRerun?: boolean;
  /** Submit as a group of jobs (`numJobs`, `params`); wins over the spec's `array`. */
  array?: ArrayInput;
  /** Other jobs this one waits for; wins over the spec's `depends_on`. */
  dependsOn?: SpecDependsOn;
  /**
   * A re-run into its group's slot (lib/control/rerun.ts): the spec's `array` is not expanded
   * again; `envs` are the slot's (SKYPILOT_JOB_RANK, JOBDECK_ARRAY_INDEX…, the parameters), set by
   * jobdeck in every task as at the group's submit — not user envs, so the JOBDECK_ names pass.
   */
  group?: { id: number; index: number; envs?: Record<string, string> };
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
  /** A job of a group: its slot's envs (lib/control/array.ts), set again by a re-run. */
  slot?: Record<string, string>;
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
  if (input.group?.envs && Object.keys(input.group.envs).length) out.slot = { ...input.group.envs };
  return Object.keys(out).length ? out : null;
}

/** The job a submit answers (the API's SubmitResult). */
export interface SubmittedJob {
  id: number;
  submissionId: string | null;
  status: JobStatus;
  /** The spec's warnings (keys accepted, not acted on; docs/spec.md "SkyPilot keys"), as stored on the job. */
  warnings: SpecIssue[];
  /** For an array: its group — `id` above is its first job. */
  group?: { id: number; size: number; jobIds: number[] };
}

/** What a submit did: `created` false means a repeated submissionId matched an existing job. */
export interface SubmitOutcome {
  created: boolean;
  result: SubmittedJob;
}

/** The submit names an upload the data folder does not hold (never uploaded, or removed), or one its actor did not send. Nothing was written. */
export class UnknownUploadError extends Error {
  constructor(
    readonly hash: string,
    readonly field = 'workdirUpload',
  ) {
    super(`${field} ${hash} is not an upload of yours: upload the folder first (POST /api/uploads)`);
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
  /** Where each `depends_on.jobs` entry is written (YAML), for the errors about them. */
  jobRefsAt?: Array<Omit<SpecIssue, 'message'>>;
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
      return { ...readJobSpec(source.text, { filename: source.filename, overrides: ov, defaultExecutor, queues, uploads, localGpus: localGpusOrNone(), containers: containersOn() }), specYaml: source.text };
    case 'spec': {
      const read = readJobSpecObject(source.value, { filename: source.filename, overrides: ov, defaultExecutor, queues, uploads, localGpus: localGpusOrNone(), containers: containersOn() });
      const docs = Array.isArray(source.value) ? source.value : [source.value];
      return { ...read, specYaml: docs.map((d) => stringify(d, YAML_WRITE)).join('---\n') };
    }
    case 'cmd':
      return { spec: commandSpec(source.cmd, ov, defaultExecutor, queues), specYaml: stringify(commandDocument(source.cmd, ov.name), YAML_WRITE), warnings: [] };
  }
}

/** True when the server runs `image_id: docker:…` in containers (JOBDECK_CONTAINER_RUNTIME; a malformed value: no — the server's start reports it). */
export function containersOn(): boolean {
  try {
    return setting('JOBDECK_CONTAINER_RUNTIME') !== 'off';
  } catch {
    return false;
  }
}

/** The local executor's GPUs (lib/executors/local/gpus.ts), or undefined when JOBDECK_LOCAL_GPUS is malformed (the server's start reports it). */
export function localGpusOrNone(): GpuDevice[] | undefined {
  try {
    return localGpuDevices();
  } catch {
    return undefined;
  }
}

/**
 * The server's default executor for the spec checks that depend on it (num_nodes on local);
 * undefined when JOBDECK_EXECUTOR is invalid — the submit then fails on it, saying so.
 */
export function defaultExecutorOrNone(): ExecutorKind | undefined {
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
    /** Jobs the refused submit would have added (an array's size). */
    readonly adding = 1,
  ) {
    super(`user ${user} has ${pending} job${pending === 1 ? '' : 's'} pending and may have ${maxPendingJobs} at once${roleDefault ? ` (the ${roleDefault} role's default)` : ''}${adding > 1 ? `; the array would add ${adding}` : ''}: wait for one to start, or cancel one`);
    this.name = 'PendingQuotaError';
  }
}

/** A member asked for a priority above its cap (lib/jobs/priority-cap.ts): nothing was written. */
export class PriorityCapError extends Error {
  constructor(
    message: string,
    readonly priority: number,
    readonly cap: PriorityCap,
  ) {
    super(message);
    this.name = 'PriorityCapError';
  }
}

/**
 * @throws PriorityCapError when `actor` may not give `priority` to a job of `queue` (its role's
 *   cap, or the queue's lower one); nothing without an actor (the server's own calls).
 */
export function checkPriorityCap(actor: Actor | undefined, priority: number | undefined, queue: { name: string; memberMaxPriority: number | null } | null): void {
  if (!actor || priority === undefined) return;
  const cap = priorityCap(actor.role, actor.maxPriority ?? null, queue);
  const problem = priorityCapProblem(priority, cap, actor.role);
  if (problem) throw new PriorityCapError(problem, priority, cap!);
}

/**
 * @throws PendingQuotaError when the actor's pending jobs are at its quota (Actor.pendingQuota:
 *   its own, else its role's default). Checked before the write, not inside it: submits racing
 *   each other may pass it together (a quota, not a lock).
 */
export async function checkPendingQuota(store: Store, actor: Actor | undefined, adding = 1): Promise<void> {
  const max = actor?.pendingQuota?.value;
  if (max === null || max === undefined || !actor) return;
  const pending = await pendingJobsOf(store, actor.userId);
  // An array counts each of its jobs: all of them must fit.
  if (pending + adding > max) throw new PendingQuotaError(actor.name, pending, max, actor.pendingQuota?.source === 'role' ? actor.role : null, adding);
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
 *   submit; PriorityCapError when a member asks for a priority above its cap; PendingQuotaError;
 *   Error when JOBDECK_EXECUTOR names no executor.
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

/**
 * Every upload a submit names is stored and, but for a re-run's, sent by its actor: an upload
 * another user sent answers exactly as one never sent, so a hash seen elsewhere tells nothing.
 * @throws UnknownUploadError naming the field.
 */
async function checkUploads(store: Store, input: SubmitInput): Promise<void> {
  const named: Array<[string, string]> = [
    ...(input.workdirUpload !== undefined ? [['workdirUpload', input.workdirUpload] as [string, string]] : []),
    ...Object.entries(input.fileMountUploads ?? {}).map(([target, up]): [string, string] => [`fileMountUploads.${target}`, up.hash]),
  ];
  if (named.length === 0) return;
  const sent = input.actor && !input.uploadsOfRerun ? await uploadsSentBy(store, named.map(([, h]) => h), input.actor.userId) : null;
  for (const [field, hash] of named) if (!readManifest(hash) || (sent && !sent.has(hash))) throw new UnknownUploadError(hash, field);
}

/** A submit validated and resolved, ready to be written (submitOnce, and a schedule's fire). */
export interface PreparedSubmit {
  spec: PipelineSpec;
  /** The job's row as submitJob() takes it (for an array: what its jobs share). */
  job: NewJob;
  /** The array it expands to; null: one job. */
  array: SpecArray | null;
}

/**
 * Validates a submission and resolves what it names (uploads, queue, `depends_on`): the job to
 * write, nothing written yet.
 * @throws SpecError (spec, overrides, `depends_on`), UnknownUploadError.
 */
export async function prepareSubmit(store: Store, input: SubmitInput): Promise<PreparedSubmit> {
  const queues = await cachedQueueRows(store);
  await checkUploads(store, input);
  const built = buildSpec(
    input.source,
    { name: input.name, envs: input.envs, secrets: input.secrets, queue: input.queue },
    queues.map((q) => q.name),
    { workdir: input.workdirUpload, fileMountTargets: Object.keys(input.fileMountUploads ?? {}), fileMountRoot: setting('JOBDECK_FILE_MOUNT_ROOT') },
  );
  const file = (input.source.kind === 'cmd' ? undefined : input.source.filename) ?? (input.source.kind === 'spec' ? 'job.json' : 'job.yaml');
  const array = input.group ? null : arrayOf(built.spec, input.array, file);
  const spec = input.group ? withSlotEnvs(withoutArray(built.spec), input.group.envs ?? {}) : built.spec;
  if (array) spec.array = array;
  const dependsOn = input.dependsOn ?? spec.dependsOn;
  if (input.dependsOn) spec.dependsOn = input.dependsOn;
  const deps = dependsOn ? await resolveDependencies(store, dependsOn, spec.name, input.actor?.userId, input.dependsOn ? [] : built.jobRefsAt, file) : null;
  const queue = spec.queue ?? DEFAULT_QUEUE;
  return {
    spec,
    array,
    job: {
      name: spec.name,
      submissionId: input.submissionId ?? null,
      specYaml: built.specYaml,
      spec: spec as never,
      specHash: specHash(spec),
      cpus: jobCpus(spec),
      nodes: jobNodes(spec),
      ...gpusOf(spec),
      priority: input.priority ?? spec.priority ?? queues.find((q) => q.name === queue)?.defaultPriority ?? PRIORITY.default,
      queue,
      executor: jobExecutor(spec),
      metadata: (input.metadata ?? undefined) as never,
      launch: (launchOf(input) ?? undefined) as never,
      warnings: built.warnings.length ? (built.warnings as never) : undefined,
      labels: jobLabels(spec.tasks),
      origin: input.origin ?? 'api',
      userId: input.actor?.userId ?? null,
      tokenId: input.actor?.tokenId ?? null,
      group: input.group ? { id: input.group.id, index: input.group.index, lead: false } : null,
      dependsOn: deps?.edges ?? [],
      depsWaiting: deps?.waiting ?? false,
      pendingReason: deps?.reason ?? null,
      tasks: spec.tasks.map((t) => ({ name: t.name, spec: t as never })),
    },
  };
}

async function submitOnce(store: Store, input: SubmitInput): Promise<SubmitOutcome> {
  const prepared = await prepareSubmit(store, input);
  const { job } = prepared;
  const members = prepared.array ? memberSpecs(prepared.spec, prepared.array) : null;
  // An array's submissionId is its first job's, and so is the hash a repeat is compared with.
  const hash = members ? members[0].hash : job.specHash;
  const submissionId = job.submissionId ?? null;

  const existing = async (): Promise<SubmitOutcome | null> => {
    if (!submissionId) return null;
    const row = await jobBySubmissionId(store, submissionId);
    if (!row) return null;
    if (row.specHash !== hash) throw new SubmissionConflictError(submissionId, row.id);
    return { created: false, result: await resultWithGroup(store, row) };
  };

  const before = await existing();
  if (before) return before;
  // What the member asked for (the request's, else the spec's); a queue's default is the operator's.
  const queueRow = (await cachedQueueRows(store)).find((q) => q.name === job.queue) ?? null;
  checkPriorityCap(input.actor, input.priority ?? prepared.spec.priority, queueRow);
  await checkPendingQuota(store, input.actor, members?.length ?? 1);
  try {
    if (members) return { created: true, result: await writeArray(store, input, prepared, members) };
    return { created: true, result: resultOf(await submitJob(store, job)) };
  } catch (err) {
    if (!submissionId || !isUniqueViolation(err)) throw err;
    // Lost the race on the unique index: the winner's row exists now.
    const after = await existing();
    if (after) return after;
    throw err;
  }
}

/** Job.gpus and Job.gpuRequest of a spec (lib/jobs/spec pipelineGpus): none → nothing to write. */
function gpusOf(spec: PipelineSpec): { gpus?: number; gpuRequest?: never } {
  const executor = jobExecutor(spec);
  const g = pipelineGpus(spec.tasks, executor, capabilitiesOf(executor)?.gpus === 'host' ? localGpusOrNone() : undefined);
  return g.options.length ? { gpus: g.total, gpuRequest: g.options as never } : {};
}

/** An array's jobs written as one group (lib/store submitGroup). */
async function writeArray(store: Store, input: SubmitInput, prepared: PreparedSubmit, members: MemberSpec[]): Promise<SubmittedJob> {
  const { job, spec, array } = prepared;
  const launch = launchOf(input) ?? {};
  const jobs: NewJob[] = members.map((m) => ({
    ...job,
    // The first job carries the submit's idempotency key.
    submissionId: m.index === 0 ? job.submissionId : null,
    name: m.spec.name,
    spec: m.spec as never,
    specHash: m.hash,
    // A re-run of one job submits its slot's name and envs again (lib/control/rerun.ts).
    launch: { ...launch, name: m.spec.name, slot: m.envs } as never,
    tasks: m.spec.tasks.map((t) => ({ name: t.name, spec: t as never })),
  }));
  const written = await submitGroup(store, { name: spec.name, array: { numJobs: array!.numJobs, params: Object.fromEntries(array!.params) }, userId: job.userId ?? null, tokenId: job.tokenId ?? null }, jobs);
  const first = written.jobs[0];
  return { ...resultOf(first), group: { id: written.groupId, size: written.jobs.length, jobIds: written.jobs.map((j) => j.id) } };
}

/** The answer for a job, with its group when it leads one (a repeated array submit). */
async function resultWithGroup(store: Store, row: Job): Promise<SubmittedJob> {
  if (row.groupId === null || !row.groupLead) return resultOf(row);
  const slots = await groupSlots(store, row.groupId);
  return { ...resultOf(row), group: { id: row.groupId, size: slots.length, jobIds: slots.map((s) => s.jobId) } };
}
