/**
 * The CLI's REST client: the client library's JobdeckClient (clients/ts, docs/client-typescript.md)
 * with every failure turned into a CliError with the right exit code (lib/cli/exit-codes.ts):
 * problem+json answers are shown by their `detail` (plus spec `issues` with file:line and key
 * path); connection refused → "cannot reach jobdeck at URL — is the server running?" (exit 6).
 *
 * The library owns the transport and its retry rules (clients/ts/src/http.ts): a dropped
 * connection of an idempotent request (GET; a submit with a submissionId) is retried with the
 * follower's backoff (250 ms doubling to 5 s) until `retryTimeoutMs`, as is a 502, 503 or 504;
 * other requests are never sent twice (the error says the server may or may not have applied
 * it); a refusal on the very first try fails at once.
 */
import {
  failureCause,
  formatIssue,
  isUnreachable,
  JobdeckClient as Client,
  JobdeckError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  BadRequestError,
  UnreachableError,
  type CancelRequest,
  type HttpOptions,
  type JobSource,
  type SubmitOptions,
  type QueueSettings,
  type RequestOptions,
  type RerunChanges,
} from '../../clients/ts/src';
import type { CancelResult, GroupDetail, JobDetail, JobList, JobSummary, QueueList, QueueView, ScheduleView, SubmitResult, UploadManifestView } from '../api/types';
import { CliError } from './errors';
import { EXIT } from './exit-codes';
import { tokenRefusedHint, type Connection } from './config';

export { failureCause, isUnreachable, type RequestOptions };

/** One problem in a job spec, as the API reports it (lib/api/schemas.ts SpecIssue). */
export interface SpecIssue {
  file?: string;
  line?: number | null;
  column?: number | null;
  path?: string;
  message?: string;
}

/** Body of POST /api/jobs (JSON form). Exactly one of yaml, spec, cmd. */
export interface SubmitRequest {
  yaml?: string;
  cmd?: string;
  name?: string;
  envs?: Record<string, string>;
  /** Secret values (never printed; the server never shows them back). */
  secrets?: Record<string, string>;
  submissionId?: string;
  /** Shown in spec error messages (file:line). */
  filename?: string;
  /** Admission priority, 0–1000 (wins over the spec's `priority`). */
  priority?: number;
  /** The operator queue (wins over the spec's `queue`). */
  queue?: string;
  /** The hash of the folder uploaded for a relative workdir (POST /api/uploads). */
  workdirUpload?: string;
  /** The uploaded content of local file_mounts sources, by target. */
  fileMountUploads?: Record<string, { hash: string; kind: 'file' | 'dir' }>;
  /** An array: jobs per parameter combination (`--num-jobs`). */
  numJobs?: number;
  /** A sweep: each parameter's values (`--param NAME=v1,v2`). */
  params?: Record<string, string[]>;
  /** Jobs this one waits for (`--depends-on`, `--after`). */
  dependsOn?: { jobs: Array<number | string>; after?: 'ok' | 'failed' | 'any' };
}

/** The body of POST /api/schedules (PATCH: any field but the name). */
export interface ScheduleRequest {
  name?: string;
  cron?: string;
  timezone?: string;
  yaml?: string;
  filename?: string;
  jobId?: number;
  overlap?: 'skip' | 'allow' | 'cancel_previous';
  catchUp?: 'last' | 'none';
  paused?: boolean;
}

/** Query of GET /api/jobs. */
export interface ListParams {
  status?: string[];
  q?: string;
  /** ISO-8601 times or dates, as GET /api/jobs takes them (the server validates them). */
  submittedAfter?: string;
  submittedBefore?: string;
  /** `key:value` pairs the job's metadata must all hold. */
  metadata?: string[];
  /** `key=value` pairs the job's tasks' `resources.labels` must all hold. */
  label?: string[];
  /** Only this submitter's jobs: "me" or a user name. */
  owner?: string;
  limit?: number;
  cursor?: string;
}

/** Message shown when the server cannot be reached at all. */
export function unreachableMessage(url: string, cause?: string): string {
  return `cannot reach jobdeck at ${url}${cause ? ` (${cause})` : ''} — is the server running? (jobdeck server / npm start)`;
}

/** The exit code for an HTTP error status. */
export function exitCodeForHttp(status: number): number {
  if (status === 400 || status === 413 || status === 422) return EXIT.USAGE;
  if (status === 401) return EXIT.UNAUTHORIZED;
  if (status === 403) return EXIT.FORBIDDEN;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 409) return EXIT.REFUSED;
  return EXIT.INTERNAL;
}

/**
 * Formats spec issues like the server does (lib/jobs/spec.ts formatSpecIssue):
 * `file:line key.path: message`. Entries without a `file` (request issues) are skipped.
 */
export function formatIssues(issues: unknown): string[] {
  if (!Array.isArray(issues)) return [];
  return issues.map((raw) => formatIssue((raw ?? {}) as SpecIssue)).filter((l): l is string => l !== null);
}

/** Turns a non-2xx answer into a CliError (problem+json `detail` when present). */
export async function errorFromResponse(res: Response, what: string): Promise<CliError> {
  return errorFromAnswer(res.status, res.statusText, await res.text().catch(() => ''), what);
}

/**
 * Like errorFromResponse, from an answer whose body was already read. `tokenHint` says where
 * the token came from (config.ts tokenRefusedHint), for a 401; a 403 is "forbidden" (the token
 * was accepted; its user may not do this).
 */
export function errorFromAnswer(status: number, statusText: string, text: string, what: string, tokenHint?: string): CliError {
  let detail: string | undefined;
  let details: string[] = [];
  let field: unknown;
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown; issues?: unknown; field?: unknown };
    if (typeof body.detail === 'string') detail = body.detail;
    else if (typeof body.title === 'string') detail = body.title;
    details = formatIssues(body.issues);
    field = body.field;
  } catch {
    detail = text.trim().slice(0, 500) || undefined;
  }
  // A 403 naming a field refuses a value the caller gave (a priority above its cap), not its token.
  const code = status === 403 && typeof field === 'string' ? EXIT.REFUSED : exitCodeForHttp(status);
  let message = detail ?? `${what}: HTTP ${status} ${statusText}`;
  if (code === EXIT.UNAUTHORIZED) message = `${tokenHint ?? tokenRefusedHint(undefined)} — the server answered HTTP ${status}${detail ? `: ${detail}` : ''}`;
  if (code === EXIT.FORBIDDEN) message = `forbidden: ${detail ?? `${what} is not allowed to this token's user`}`;
  // A spec error: every issue on its own line (the detail spells out only the first few).
  if (details.length) message = `invalid job spec (${details.length} problem${details.length > 1 ? 's' : ''}):`;
  return new CliError(message, code, details);
}

/**
 * The CliError for an error of the client library: an error answer as errorFromAnswer shows it;
 * a lost server in the CLI's words; a local problem (a file that cannot be packed) as bad input.
 */
export function cliErrorOf(err: unknown, conn: Connection): unknown {
  if (!(err instanceof JobdeckError)) return err;
  if (err.answer) return errorFromAnswer(err.answer.status, err.answer.statusText, err.answer.text, err.what, tokenRefusedHint(conn.tokenSource));
  if (err instanceof UnreachableError) {
    if (err.phase === 'lost') return new CliError(`lost the connection to jobdeck at ${err.url} before its answer to ${err.what} (${err.reason}); the server may or may not have done it — check with \`jobdeck queue\``, EXIT.UNREACHABLE);
    if (err.phase === 'gave-up') return new CliError(`${unreachableMessage(err.url, err.reason)} — gave up after ${Math.round(err.elapsedMs / 1000)} s of retries`, EXIT.UNREACHABLE);
    if (err.phase === 'cut') return new CliError(err.message, EXIT.UNREACHABLE);
    return new CliError(unreachableMessage(err.url, err.reason), EXIT.UNREACHABLE);
  }
  if (err instanceof UnauthorizedError) return new CliError(err.message, EXIT.UNAUTHORIZED);
  if (err instanceof ForbiddenError) return new CliError(err.message, EXIT.FORBIDDEN);
  if (err instanceof NotFoundError) return new CliError(err.message, EXIT.NOT_FOUND);
  if (err instanceof BadRequestError) return new CliError(err.message, EXIT.USAGE);
  return new CliError(err.message, EXIT.INTERNAL);
}

/** Options of JobdeckClient: the library's transport options, and the environment a submit reads (JOBDECK_UPLOAD_MAX_BYTES, HOME). */
export type ClientOptions = HttpOptions & { env?: NodeJS.ProcessEnv };

/**
 * The CLI's client: the library's, each method's failure a CliError (see the module comment).
 */
export class JobdeckClient {
  /** The library client (for what the CLI does beyond these methods: following a job). */
  readonly lib: Client;

  constructor(
    readonly conn: Connection,
    opts: ClientOptions = {},
  ) {
    // The connection is resolved already (lib/cli/config.ts): the library looks for no token of its own.
    this.lib = new Client({ ...opts, url: conn.url, token: conn.token ?? null, tokenSource: conn.tokenSource, origin: 'cli', env: opts.env ?? process.env });
  }

  /** Runs a library call; its failure as a CliError. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw cliErrorOf(err, this.conn);
    }
  }

  /** Headers every request carries. */
  authHeaders(): Record<string, string> {
    return this.lib.http.authHeaders();
  }

  /** Sends a request; answers the parsed JSON body, or throws CliError. */
  request<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<T> {
    return this.call(() => this.lib.request<T>(method, pathname, opts));
  }

  /**
   * Like request() but also answers the HTTP status.
   * @throws CliError UNREACHABLE (refused, or dropped and not retried / retries spent), the HTTP
   *   status's code (exitCodeForHttp), INTERNAL for an answer that is not JSON.
   */
  send<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<{ status: number; body: T }> {
    return this.call(() => this.lib.http.send<T>(method, pathname, opts));
  }

  /**
   * GETs `pathname` and writes its body to `out` as it arrives, never holding it whole: a log
   * download. Not retried (bytes may have been written).
   * @throws CliError UNREACHABLE when the server cannot be reached or the body is cut off, the
   *   HTTP status's code for an error answer.
   */
  download(pathname: string, out: { write(chunk: Uint8Array): boolean; once(event: 'drain', cb: () => void): unknown }): Promise<void> {
    return this.call(() => this.lib.download(pathname, out));
  }

  /**
   * POST /api/jobs; `created` is false when a repeated submissionId answered an existing job.
   * With a submissionId the submit is idempotent, so a dropped connection is retried.
   */
  submit(req: SubmitRequest): Promise<SubmitResult & { created: boolean }> {
    return this.call(() => this.lib.submitRequest(req));
  }

  /**
   * The library's submit (clients/ts/src/client.ts): YAML text with `base` has its relative
   * workdir and local file_mounts packed and uploaded first; each upload is told to `onUpload`.
   * @throws CliError USAGE for a folder that cannot be packed, UNREACHABLE while uploading, …
   */
  submitJob(job: JobSource, o: SubmitOptions): Promise<SubmitResult & { created: boolean }> {
    return this.uploading(() => this.lib.submit(job, o));
  }

  /** Like call(), a lost server during an upload said as such. */
  private async uploading<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof UnreachableError && err.what.startsWith('upload of ')) throw new CliError(`${unreachableMessage(this.conn.url, err.reason)} (while uploading ${err.what.slice('upload of '.length)})`, EXIT.UNREACHABLE);
      throw cliErrorOf(err, this.conn);
    }
  }

  /**
   * POST /api/uploads: a gzip'd tar of a folder, stored by the server once per content hash.
   * Not retried (a dropped connection is reported; launching again sends it again).
   * @throws CliError UNREACHABLE, or the HTTP status's code (413 over the server's limit).
   */
  async upload(bytes: Uint8Array<ArrayBuffer>, what: string): Promise<UploadManifestView> {
    return this.uploading(() => this.lib.upload(bytes, what));
  }

  /**
   * POST /api/jobs/:id/rerun: job `id` submitted again, as it was submitted, as a new job, with
   * `changes` (name, envs merged over the launch's, priority). Not retried on a dropped
   * connection (a second try could make a second job).
   */
  rerun(id: number, changes: RerunChanges = {}): Promise<SubmitResult> {
    return this.call(() => this.lib.rerun(id, changes));
  }

  /** GET /api/jobs (one page). */
  list(p: ListParams = {}): Promise<JobList> {
    return this.call(() => this.lib.listPage(p));
  }

  /**
   * Pages through GET /api/jobs until `max` jobs or the end. Answers the jobs (newest first) and
   * whether more exist beyond `max`.
   */
  listAll(p: Omit<ListParams, 'cursor' | 'limit'>, max: number): Promise<{ jobs: JobSummary[]; more: boolean }> {
    return this.call(() => this.lib.listAll(p, max));
  }

  /** GET /api/jobs/:id. */
  get(id: number): Promise<JobDetail> {
    return this.call(() => this.lib.info(id));
  }

  /** POST /api/jobs/cancel with ids or a filter. */
  cancel(body: { ids: number[] } | { all: true } | { status: string[] }): Promise<CancelResult> {
    return this.call(() => this.lib.cancelMany(body as CancelRequest));
  }

  /** PATCH /api/jobs/:id (a PENDING job's priority); answers the job's summary. */
  patch(id: number, body: { priority: number }): Promise<JobSummary> {
    return this.call(() => this.lib.setPriority(id, body.priority));
  }

  /** GET /api/queues. */
  queues(): Promise<QueueList> {
    return this.call(() => this.lib.queues());
  }

  /** PUT /api/queues/:name (a field left out is no limit). */
  putQueue(name: string, body: QueueSettings): Promise<QueueView> {
    return this.call(() => this.lib.putQueue(name, body));
  }

  /** DELETE /api/queues/:name. */
  deleteQueue(name: string): Promise<unknown> {
    return this.call(() => this.lib.deleteQueue(name));
  }

  /** DELETE /api/jobs/:id. */
  delete(id: number): Promise<unknown> {
    return this.call(() => this.lib.delete(id));
  }

  /** GET /api/groups/:id. */
  group(id: number): Promise<GroupDetail> {
    return this.request<GroupDetail>('GET', `/api/groups/${id}`, { what: `group ${id}` });
  }

  /** POST /api/groups/:id/cancel, /rerun-failed; DELETE /api/groups/:id. */
  groupAction<T>(id: number, action: 'cancel' | 'rerun-failed' | 'delete'): Promise<T> {
    if (action === 'delete') return this.request<T>('DELETE', `/api/groups/${id}`, { what: `delete group ${id}` });
    return this.request<T>('POST', `/api/groups/${id}/${action}`, { body: action === 'rerun-failed' ? { origin: 'cli' } : {}, what: `${action} group ${id}` });
  }

  /** GET /api/schedules (`mine`: the caller's). */
  schedules(mine = false): Promise<{ schedules: ScheduleView[] }> {
    return this.request<{ schedules: ScheduleView[] }>('GET', '/api/schedules', { query: mine ? new URLSearchParams({ mine: '1' }) : undefined, what: 'schedules' });
  }

  /** GET /api/schedules/:name. */
  schedule(name: string): Promise<ScheduleView> {
    return this.request<ScheduleView>('GET', `/api/schedules/${encodeURIComponent(name)}`, { what: `schedule ${name}` });
  }

  /** POST /api/schedules, or PATCH /api/schedules/:name when `name` is given apart. */
  putSchedule(body: ScheduleRequest, patchName?: string): Promise<ScheduleView> {
    if (patchName !== undefined) return this.request<ScheduleView>('PATCH', `/api/schedules/${encodeURIComponent(patchName)}`, { body, what: `schedule ${patchName}` });
    return this.request<ScheduleView>('POST', '/api/schedules', { body, what: `create schedule ${body.name}` });
  }

  /** POST /api/schedules/:name/(pause|resume|run); DELETE /api/schedules/:name. */
  scheduleAction<T>(name: string, action: 'pause' | 'resume' | 'run' | 'delete'): Promise<T> {
    const at = `/api/schedules/${encodeURIComponent(name)}`;
    if (action === 'delete') return this.request<T>('DELETE', at, { what: `delete schedule ${name}` });
    return this.request<T>('POST', `${at}/${action}`, { body: {}, what: `${action} schedule ${name}` });
  }
}
