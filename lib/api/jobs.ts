/**
 * The job API's operations, between the route handlers (which parse with lib/api/request.ts,
 * take the store and the executors from the server's services, and answer) and lib/control (the
 * verbs) / lib/store (the reads): each one calls them and turns their domain outcomes into the
 * HTTP answers of the contract — ApiErrors (problem+json) for "not found", "already terminal",
 * "invalid spec", "different spec for this submissionId".
 */
import { assertMayChange, changePriority, defaultExecutorOrNone, ForbiddenJobError, PendingQuotaError, PriorityCapError, localGpusOrNone, containersOn, deleteJobs, JobNotFoundError, requestCancel, rerunJob, type RerunOverrides, storeUpload, SubmissionConflictError, submitJobSpec, UnknownUploadError, UploadError, type UploadManifest, type DeleteOptions, type SubmitInput, type SubmitOutcome } from '../control';
import type { SubmitOrigin } from '../jobs/origin';
import type { Actor } from '../jobs/roles';
import { checkJobSpec, formatSpecIssue, SpecError, type SpecIssue } from '../jobs/spec';
import { activeJobIds, jobStatusCounts, listQueueRows, QueueGoneError, recordUploadOwner, userRow, type JobFilter, type Store, type StoreScope } from '../store';
import { badRequest, ApiError, conflict, forbidden, notFound, payloadTooLarge } from './errors';
import { record } from './audit';
import { readBytes } from './body';
import type { ListFilterParams, ListParams } from './request';
import type { CancelResult, JobCounts, JobDetail, JobList, JobSummary } from './types';
import { getJobDetail, getJobSummary, listJobs } from './views';

/** How many spec issues the `detail` text of a spec problem spells out (all are in `issues`). */
const DETAIL_ISSUES = 5;

/**
 * The problem for an invalid spec: 400 "Invalid job spec", `detail` = the first issues as
 * `file:line path: message` lines, `issues` = every issue with file, line, column and key path.
 */
export function specProblem(issues: SpecIssue[]): ApiError {
  const lines = issues.slice(0, DETAIL_ISSUES).map(formatSpecIssue);
  if (issues.length > DETAIL_ISSUES) lines.push(`(and ${issues.length - DETAIL_ISSUES} more)`);
  return new ApiError(400, 'Invalid job spec', lines.join('\n') || 'the job spec is invalid', { issues });
}

/**
 * Submits a job (lib/control/submit.ts).
 * @throws ApiError 400 with `issues` for an invalid spec; 409 when the submissionId belongs to
 *   a job with a different spec (`jobId` names it), or when the job's queue was deleted under the
 *   submit twice over (`queue` names it).
 */
export async function submit(store: Store, input: SubmitInput): Promise<SubmitOutcome> {
  try {
    const out = await submitJobSpec(store, input);
    if (out.created) await record(store, input.actor ?? null, 'job.submit', `job:${out.result.id}`);
    return out;
  } catch (err) {
    if (err instanceof SpecError) throw specProblem(err.issues);
    if (err instanceof UnknownUploadError) throw badRequest(err.message, { field: err.field });
    if (err instanceof SubmissionConflictError) throw conflict(err.message, { jobId: err.jobId, submissionId: err.submissionId });
    if (err instanceof QueueGoneError) throw conflict(err.message, { queue: err.queue });
    throw quotaProblem(err);
  }
}

/**
 * A PendingQuotaError as 429 with the numbers; a PriorityCapError as 403 naming the field, the
 * cap and where it comes from (`capSource` role or queue); any other error as it is.
 */
function quotaProblem(err: unknown): unknown {
  if (err instanceof PriorityCapError) return forbidden(err.message, { field: 'priority', priority: err.priority, maxPriority: err.cap.value, capSource: err.cap.source, ...(err.cap.queue ? { queue: err.cap.queue } : {}) });
  if (!(err instanceof PendingQuotaError)) return err;
  return new ApiError(429, 'Too Many Requests', err.message, { pending: err.pending, maxPendingJobs: err.maxPendingJobs, quotaSource: err.roleDefault ? 'role' : 'user' });
}

/**
 * Re-runs a job: what it was submitted with, submitted again as a new job, with `overrides`
 * (name, envs, priority) changed (lib/control/rerun.ts).
 * @throws ApiError 404 "job 12 not found"; 400 with `issues` when its spec no longer validates
 *   (or an override breaks a rule).
 */
export async function rerun(store: Store, id: number, origin: SubmitOrigin, actor?: Actor, overrides: RerunOverrides = {}): Promise<SubmitOutcome> {
  try {
    await assertMayChange(store, actor, id);
    const out = await rerunJob(store, id, origin, actor, overrides);
    await record(store, actor ?? null, 'job.rerun', `job:${id}`, { newJobId: out.result.id, ...(Object.keys(overrides).length ? { changed: Object.keys(overrides).sort() } : {}) });
    return out;
  } catch (err) {
    if (err instanceof ForbiddenJobError) throw forbidden(err.message, { jobId: id });
    if (err instanceof JobNotFoundError) throw notFound(err.message);
    if (err instanceof SpecError) throw specProblem(err.issues);
    throw quotaProblem(err);
  }
}

/**
 * Validates YAML for the editor: `{ ok, issues }` (never throws for a bad spec). With `queues`
 * (the server's queue names), a `queue` naming none of them is an issue, as at submit.
 */
export function validateSpec(text: string, filename?: string, queues?: readonly string[]): ValidateResult {
  const { issues, warnings, required } = checkJobSpec(text, { filename, defaultExecutor: defaultExecutorOrNone(), queues, localGpus: localGpusOrNone(), containers: containersOn() });
  // Values required at launch are not errors of the text (SkyPilot's rule): listed apart.
  const errors = issues.filter((i) => !required.includes(i));
  return { ok: errors.length === 0, issues: errors, warnings, required };
}

/** POST /api/validate's answer: `warnings` are keys accepted and not acted on (docs/spec.md "SkyPilot keys"). */
export interface ValidateResult {
  ok: boolean;
  issues: SpecIssue[];
  warnings: SpecIssue[];
  /** Envs and secrets without a value: required at launch (a submit without them is refused, naming them). */
  required: SpecIssue[];
}

/** POST /api/validate: validateSpec() with the server's queues. */
export async function validate(store: Store, text: string, filename?: string): Promise<ValidateResult> {
  const queues = (await listQueueRows(store)).map((q) => q.name);
  return validateSpec(text, filename, queues);
}

/** Content types POST /api/uploads takes (a gzip'd tar). */
const UPLOAD_CONTENT_TYPES = ['application/gzip', 'application/x-gzip', 'application/octet-stream'];

/**
 * POST /api/uploads: stores a gzip'd tar of a task's folder (lib/uploads/upload.ts) once per
 * content hash and answers its manifest — `hash` is what a submit names as `workdirUpload` — and
 * records that `actor` sent it: a submit may name only uploads its user sent.
 * `max` is the route's body limit (lib/api/body-limits.ts: JOBDECK_UPLOAD_MAX_BYTES, bytes).
 * @throws ApiError 413 over it (the message names the variable); 415 for another Content-Type; 400 when the body is
 *   not a gzip'd tar or an entry breaks a rule (absolute or `..` paths, links out of the folder,
 *   devices…), naming the entry.
 */
export async function upload(store: Store, req: Request, max: number, actor?: Actor): Promise<UploadManifest> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!UPLOAD_CONTENT_TYPES.includes(type)) {
    throw new ApiError(415, 'Unsupported Media Type', `Content-Type ${type ? JSON.stringify(type) : 'is missing and'} is not accepted here; send application/gzip (a gzip'd tar)`, { accepted: UPLOAD_CONTENT_TYPES });
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBytes(req, max);
  } catch (err) {
    if (err instanceof ApiError && err.status === 413) throw payloadTooLarge(`${err.detail} (JOBDECK_UPLOAD_MAX_BYTES)`);
    throw err;
  }
  let manifest: UploadManifest;
  try {
    manifest = await storeUpload(bytes, undefined, max);
  } catch (err) {
    if (err instanceof UploadError) throw badRequest(err.message);
    throw err;
  }
  // Sent by this user: its submits may name it (docs/design.md §16).
  if (actor) await recordUploadOwner(store, manifest.hash, actor.userId);
  return manifest;
}

/**
 * The store's JobFilter of a list filter (GET /api/jobs, GET /api/logs/grep): `owner` "me" is the
 * caller, another name that user's jobs.
 * @throws ApiError 400 when `owner` names no user.
 */
export async function listFilter(store: StoreScope, p: ListFilterParams, actor?: Actor): Promise<JobFilter> {
  let userId: number | undefined;
  if (p.owner === 'me' && actor) userId = actor.userId;
  else if (p.owner) {
    const u = await userRow(store, { name: p.owner });
    if (!u) throw badRequest(`owner: no user is named "${p.owner}"`, { issues: [{ path: 'owner', message: 'no such user' }] });
    userId = u.id;
  }
  return { status: p.status, q: p.q, queue: p.queue, submittedAfter: p.submittedAfter, submittedBefore: p.submittedBefore, metadata: p.metadata, labels: p.label, userId, groupId: p.group, scheduleId: p.schedule };
}

/**
 * A page of jobs (lib/api/views.ts listJobs) of the list filter (listFilter()).
 * @throws ApiError 400 when `owner` names no user.
 */
export async function list(store: Store, p: ListParams, actor?: Actor): Promise<JobList> {
  return listJobs(store, { ...(await listFilter(store, p, actor)), limit: p.limit, sort: p.sort, beforeId: p.beforeId, afterName: p.afterName, foldGroups: p.foldGroups });
}

/** Jobs per status among those a search finds (lib/store jobStatusCounts). */
export function counts(store: Store, p: Omit<JobFilter, 'status'>): Promise<JobCounts> {
  return jobStatusCounts(store, { q: p.q, queue: p.queue, submittedAfter: p.submittedAfter, submittedBefore: p.submittedBefore, metadata: p.metadata, labels: p.labels });
}

/**
 * One job with tasks, attempts and events. The hash of its uploaded folder only for a caller who
 * may use it — who may re-run the job (its submitter, an admin: lib/jobs/roles.ts mayChangeJob);
 * `actor` absent: the server's own read, all of it.
 * @throws ApiError 404 "job 123 not found".
 */
export async function detail(store: Store, id: number, actor?: Actor): Promise<JobDetail> {
  const job = await getJobDetail(store, id, new Date(), actor);
  if (!job) throw notFound(`job ${id} not found`);
  return job;
}

/**
 * Changes a PENDING job's priority (lib/control/priority.ts) and answers its summary.
 * @throws ApiError 404 "job 12 not found"; 409 "job 12 is RUNNING: only a PENDING job's priority
 *   can change"; 403 when a member asks for more than its cap (the cap named).
 */
export async function patchOne(store: Store, id: number, patch: { priority: number }, actor?: Actor): Promise<JobSummary> {
  await mayChange(store, actor, id);
  let r: Awaited<ReturnType<typeof changePriority>>;
  try {
    r = await changePriority(store, id, patch.priority, actor);
  } catch (err) {
    throw quotaProblem(err);
  }
  if (r.kind === 'notFound') throw notFound(`job ${id} not found`);
  if (r.kind === 'notPending') throw conflict(`job ${id} is ${r.status}: only a PENDING job's priority can change`, { jobId: id, jobStatus: r.status });
  await record(store, actor ?? null, 'job.priority', `job:${id}`, { priority: patch.priority });
  const job = await getJobSummary(store, id);
  if (!job) throw notFound(`job ${id} not found`);
  return job;
}

/**
 * Cancels one job (lib/control/cancel.ts requestCancel): PENDING → CANCELLED at once, a running
 * job → CANCELLING (the monitor stops it).
 * @throws ApiError 404 "job 12 not found"; 409 "job 12 is already SUCCEEDED".
 */
export async function cancelOne(store: Store, id: number, actor?: Actor): Promise<CancelResult> {
  await mayChange(store, actor, id);
  const r = await requestCancel(store, [id], actor);
  if (r.notFound.includes(id)) throw notFound(`job ${id} not found`);
  const ended = r.alreadyTerminal.find((x) => x.id === id);
  if (ended) throw conflict(`job ${id} is already ${ended.status}`, { jobId: id, jobStatus: ended.status });
  await record(store, actor ?? null, 'job.cancel', `job:${id}`);
  return r;
}

/**
 * Cancels the jobs named by `ids`, or the jobs a filter selects that are not terminal yet.
 * Each id lands in exactly one list of the CancelResult. An empty selection cancels nothing.
 * A member's filter selects only its own jobs; another's named ids land in `forbidden`.
 */
export async function cancelMany(store: Store, sel: { ids: number[] } | { filter: JobFilter }, actor?: Actor): Promise<CancelResult> {
  if (actor && actor.role !== 'admin' && 'filter' in sel) sel = { filter: { ...sel.filter, userId: actor.userId } };
  const ids = 'ids' in sel ? sel.ids : await activeJobIds(store, sel.filter);
  if (ids.length === 0) return { cancelled: [], cancelling: [], alreadyTerminal: [], notFound: [] };
  const r = await requestCancel(store, ids, actor);
  const done = [...r.cancelled, ...r.cancelling];
  // One row for the one request, naming the jobs it stopped (at most the first 1000).
  if (done.length) await record(store, actor ?? null, 'job.cancel', null, { jobs: done.length, ids: done.slice(0, 1000), ...('filter' in sel ? { filter: sel.filter } : {}) } as Record<string, unknown>);
  return r;
}

/** @throws ApiError 403 when `actor` may not change job `id` (lib/control/ownership.ts). */
async function mayChange(store: Store, actor: Actor | undefined, id: number): Promise<void> {
  try {
    await assertMayChange(store, actor, id);
  } catch (err) {
    if (err instanceof ForbiddenJobError) throw forbidden(err.message, { jobId: id });
    throw err;
  }
}

/** What deleteOne() needs besides the database (it removes the job's folder and stops leftovers). */
export interface DeleteDeps {
  /** The data folder holding `jobs/<id>` (the server's JOBDECK_HOME). */
  home: string;
  /** The server's executors by name (lib/executors ExecutorRegistry.get). */
  executor: DeleteOptions['executor'];
  /** SIGTERM → SIGKILL grace for those leftovers (ms; the monitor's leftoverGraceMs). */
  leftoverGraceMs: number;
}

/**
 * Deletes a terminal job: rows and its folder (attempt logs) — lib/control/delete.ts deleteJobs.
 * @throws ApiError 404 "job 12 not found"; 409 "job 12 is RUNNING: cancel it first".
 */
export async function deleteOne(store: Store, id: number, deps: DeleteDeps, actor?: Actor): Promise<void> {
  await mayChange(store, actor, id);
  const r = await deleteJobs(store, [id], { home: deps.home, executor: deps.executor, leftoverGraceMs: deps.leftoverGraceMs });
  if (r.deleted.includes(id)) return record(store, actor ?? null, 'job.delete', `job:${id}`);
  const refused = r.refused.find((x) => x.id === id);
  if (!refused || refused.status === null) throw notFound(`job ${id} not found`);
  const advice = refused.status === 'CANCELLING' ? 'it is being cancelled; delete it once it is CANCELLED' : 'cancel it first';
  throw conflict(`job ${id} is ${refused.status}: ${advice} (only a terminal job can be deleted)`, { jobId: id, jobStatus: refused.status });
}
