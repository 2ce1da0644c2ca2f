/**
 * `JobdeckClient`: submit, watch, tail and manage jobdeck jobs from TypeScript
 * (docs/client-typescript.md). The `jobdeck` CLI talks to the server through it.
 *
 * Names follow Ray's `JobSubmissionClient` where they mean the same thing (`submissionId`,
 * `metadata`; `submit`/`status`/`info`/`list`/`cancel`/`delete`/`logs`/`tail` for
 * `submit_job`/`get_job_status`/`get_job_info`/`list_jobs`/`stop_job`/`delete_job`/
 * `get_job_logs`/`tail_job_logs`) — and the Python client's.
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OPERATIONS, type CancelRequest, type CancelResult, type JobDetail, type JobList, type JobStatus, type JobSummary, type ListJobsQuery, type PutQueueRequest, type Queue, type QueueList, type RerunRequest, type SubmitRequest, type SubmitResult, type UploadManifest } from './api.gen';
import { localTokenPath, resolveTokenSync, resolveUrl, tokenRefusedHint, type Env, type TokenSource } from './config';
import { BadRequestError, JobdeckTimeoutError, UnreachableError } from './errors';
import { Http, type HttpOptions, type RequestOptions } from './http';
import { LogCursor } from './cursor';
import { Tail, type LogTail } from './tail';
import { packFile, packFolder, uploadCap } from './pack';
import { localFileMounts, readSpecFile, relativeWorkdirFolder, resolveTaskFile } from './spec-files';
import { DEFAULT_FOLLOW_RECONNECT_MS, followStream, type FollowEnd, type FollowStreamOptions, type StreamConsumer } from './stream';

/** Options of JobdeckClient. */
export interface ClientOptions extends HttpOptions {
  /** The server (default `JOBDECK_URL`, else the local server: config.ts). */
  url?: string;
  /** The API token (default `JOBDECK_TOKEN`, else the local token file); null: none, look nowhere. */
  token?: string | null;
  /** Where `token` came from, for the message of a refused token (default: worked out here). */
  tokenSource?: TokenSource;
  /** The environment read for defaults (default process.env). */
  env?: Env;
  /** What submits (the job page shows it): `api` (default) or `cli`. */
  origin?: 'api' | 'cli';
  /** How long a tail keeps reconnecting to a lost server (ms; default 5 min). */
  reconnectTimeoutMs?: number;
}

/**
 * The job to submit: a YAML file (or a folder holding task.yaml), YAML text, a spec object, or one
 * command. YAML text with a `base` (the folder its file was in) has its relative workdir and local
 * file_mounts uploaded like a file's; `filename` names it in spec errors (`job.yaml:8 …`).
 */
export type JobSource = { file: string } | { yaml: string; filename?: string; base?: string } | { spec: Record<string, unknown> } | { cmd: string };

/** Options of submit(). */
export interface SubmitOptions {
  name?: string;
  envs?: Record<string, string>;
  /** Secret values (never shown back). */
  secrets?: Record<string, string>;
  /** 0–1000; wins over the spec's. */
  priority?: number;
  queue?: string;
  /** Arbitrary client metadata (Ray's), stored with the job. */
  metadata?: Record<string, unknown>;
  /** Idempotency key (Ray's `submission_id`); default a fresh one, so a retried submit never makes two jobs. */
  submissionId?: string;
  /** An array: this many jobs per parameter combination, as one group (SkyPilot's `--num-jobs`). */
  numJobs?: number;
  /** A sweep: each parameter's values; one job per combination, as one group. */
  params?: Record<string, string[]>;
  /** Jobs (ids or names) this one waits for, and on which outcome (Slurm's `--dependency=afterok`). */
  dependsOn?: SubmitRequest['dependsOn'];
  /** A local folder uploaded as the job's working folder (Ray's `runtime_env.working_dir`); each attempt runs in a fresh copy. */
  workdir?: string;
  /** Where a relative `file` (and `workdir`) is resolved from (default process.cwd()). */
  cwd?: string;
  /** Told after each folder or file was uploaded. */
  onUpload?(u: { label: string; source: string; manifest: UploadManifest }): void;
}

/** Filters of list() (the query of GET /api/jobs, as generated from the document). */
export type ListFilter = Partial<Pick<ListJobsQuery, 'q' | 'queue' | 'owner' | 'sort' | 'submittedAfter' | 'submittedBefore' | 'metadata' | 'label' | 'group' | 'schedule' | 'fold'>> & { status?: string[] };

/** What a re-run changes of the job's submission (RerunRequest without `origin`; each absent: as submitted). */
export type RerunChanges = Omit<RerunRequest, 'origin'>;

/** A queue's settings (PUT /api/queues/:name; a field left out is no limit, no default). */
export type QueueSettings = PutQueueRequest;
/** One page's query of GET /api/jobs. */
export type ListParams = ListFilter & Partial<Pick<ListJobsQuery, 'limit' | 'cursor'>>;

/** Options of tail() and logs(). */
export interface TailOptions {
  /** Only this task (0-based). */
  task?: number;
  /** Only this attempt (1-based) of `task` (task 0 when none is given). */
  attempt?: number;
  /** Only this rank of multi-node attempts. */
  rank?: number;
  /** Yield control messages too (`kind: 'event'`). */
  events?: boolean;
  /** false: what exists now, then the end (default true: follow to the end). */
  follow?: boolean;
  /** Stops the tail (the job keeps running). */
  signal?: AbortSignal;
}

const TERMINAL = new Set(['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);

/** `/api/jobs/{id}` with the parameters filled in. */
function pathOf(op: keyof typeof OPERATIONS, params: Record<string, string | number> = {}): string {
  return OPERATIONS[op].path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(String(params[k])));
}

/** A query string of a params object (arrays repeat the name; undefined left out). */
function queryOf(p: Record<string, unknown>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined || v === null || v === '') continue;
    for (const x of Array.isArray(v) ? v : [v]) q.append(k, String(x));
  }
  return q;
}

/** A client of one jobdeck server. See the module comment. */
export class JobdeckClient {
  readonly url: string;
  readonly token: string | undefined;
  readonly tokenSource: TokenSource;
  /** The HTTP transport (its `send` is the escape hatch for routes without a method here). */
  readonly http: Http;

  /** @throws BadRequestError when `url` (or JOBDECK_URL) is not an http(s) URL. */
  constructor(private readonly opts: ClientOptions = {}) {
    const env = opts.env ?? process.env;
    this.url = resolveUrl(opts.url, env);
    const t = opts.token === null ? { token: undefined, source: { from: 'none', path: localTokenPath(env) } as const } : resolveTokenSync(opts.token, env);
    this.token = t.token;
    this.tokenSource = opts.tokenSource ?? t.source;
    this.http = new Http(this.url, this.token, tokenRefusedHint(this.tokenSource, 'the token option'), opts);
  }

  /** Sends a request to any route; answers the parsed JSON body. @throws like Http.send */
  async request<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.http.send<T>(method, pathname, opts)).body;
  }

  /**
   * POST /api/jobs with the API's JSON body as is (no file read, no upload); `created` is false
   * when a repeated submissionId answered an existing job. With a submissionId it is idempotent,
   * so a dropped connection is retried.
   */
  async submitRequest(req: SubmitRequest): Promise<SubmitResult & { created: boolean }> {
    const { method, path: p } = OPERATIONS.submitJob;
    const r = await this.http.send<SubmitResult>(method, p, { body: { origin: this.opts.origin ?? 'api', ...req }, what: 'submit', idempotent: !!req.submissionId });
    return { ...r.body, created: r.status === 201 };
  }

  /**
   * Submits a job (Ray's `submit_job`). A `file`'s relative `workdir` and local `file_mounts`
   * sources are packed and uploaded first, as `jobdeck launch` does (docs/spec.md "workdir");
   * `workdir` uploads a folder for any job.
   * @throws SpecError (issues with file:line and key path), BadRequestError (a file that cannot be
   *   read or packed, a bad field), UnauthorizedError, ForbiddenError, QuotaExceededError, UnreachableError.
   */
  async submit(job: JobSource, o: SubmitOptions = {}): Promise<SubmitResult & { created: boolean }> {
    const cwd = o.cwd ?? process.cwd();
    const req: SubmitRequest = { submissionId: o.submissionId ?? `jobdeck-ts-${randomUUID()}` };
    let base: string | null = null;
    if ('file' in job) {
      const taskFile = await resolveTaskFile(job.file, cwd);
      req.yaml = await readSpecFile(taskFile, cwd);
      req.filename = taskFile;
      base = path.dirname(path.resolve(cwd, taskFile));
    } else if ('yaml' in job) {
      Object.assign(req, { yaml: job.yaml }, job.filename ? { filename: job.filename } : {});
      if (job.base !== undefined) base = path.resolve(cwd, job.base);
    }
    else if ('spec' in job) req.spec = job.spec;
    else req.cmd = job.cmd;
    for (const k of ['name', 'envs', 'secrets', 'priority', 'queue', 'metadata', 'numJobs', 'params', 'dependsOn'] as const) if (o[k] !== undefined) Object.assign(req, { [k]: o[k] });
    const env = this.opts.env ?? process.env;
    if (o.workdir !== undefined) req.workdirUpload = await this.uploadFolder(path.resolve(cwd, o.workdir), `workdir ${o.workdir}`, o);
    else if (base !== null && req.yaml !== undefined) {
      const wd = relativeWorkdirFolder(req.yaml, base);
      if (wd) req.workdirUpload = await this.uploadFolder(wd.dir, `workdir ${wd.written}`, o);
    }
    if (base !== null && req.yaml !== undefined) {
      const mounts: NonNullable<SubmitRequest['fileMountUploads']> = {};
      for (const [target, source] of localFileMounts(req.yaml, base, env.HOME || os.homedir())) {
        const label = `file_mounts ${target}`;
        const st = await stat(source).catch(() => null);
        if (!st) throw new BadRequestError(`${label}: the source ${source} does not exist`, 'upload');
        const kind = st.isDirectory() ? 'dir' : 'file';
        const packed = kind === 'dir' ? await packFolder(source, uploadCap(env), label) : await packFile(source, uploadCap(env), label);
        const m = await this.upload(packed.bytes, label);
        o.onUpload?.({ label, source, manifest: m });
        mounts[target] = { hash: m.hash, kind };
      }
      if (Object.keys(mounts).length) req.fileMountUploads = mounts;
    }
    return this.submitRequest(req);
  }

  private async uploadFolder(dir: string, label: string, o: SubmitOptions): Promise<string> {
    const packed = await packFolder(dir, uploadCap(this.opts.env ?? process.env), label);
    const m = await this.upload(packed.bytes, label);
    o.onUpload?.({ label, source: dir, manifest: m });
    return m.hash;
  }

  /**
   * POST /api/uploads: a gzip'd tar of a folder (pack.ts), stored by the server once per content
   * hash; answers its manifest (`hash` is what a submit names). Not retried.
   */
  upload(bytes: Uint8Array<ArrayBuffer>, what: string): Promise<UploadManifest> {
    return this.http.postBytes<UploadManifest>(OPERATIONS.uploadFolder.path, bytes, 'application/gzip', `upload of ${what}`);
  }

  /** GET /api/jobs/:id: the job with its tasks, attempts and events (Ray's `get_job_info`). @throws NotFoundError */
  info(id: number): Promise<JobDetail> {
    return this.request<JobDetail>(OPERATIONS.getJob.method, pathOf('getJob', { id }), { what: `job ${id}` });
  }

  /** The job's status (Ray's `get_job_status`). @throws NotFoundError */
  async status(id: number): Promise<JobStatus> {
    return (await this.info(id)).status;
  }

  /** GET /api/jobs: one page (newest first unless `sort`); pass `nextCursor` back as `cursor`. */
  listPage(p: ListParams = {}): Promise<JobList> {
    return this.request<JobList>(OPERATIONS.listJobs.method, OPERATIONS.listJobs.path, { query: queryOf(p), what: 'list jobs' });
  }

  /** Every job a filter selects, page by page over the API's cursor (Ray's `list_jobs`, as an async iterator). */
  async *list(filter: ListFilter = {}, pageSize = 200): AsyncGenerator<JobSummary> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listPage({ ...filter, limit: pageSize, cursor });
      yield* page.jobs;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /** Pages through GET /api/jobs until `max` jobs or the end: the jobs and whether more exist beyond `max`. */
  async listAll(filter: ListFilter, max: number): Promise<{ jobs: JobSummary[]; more: boolean }> {
    const jobs: JobSummary[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listPage({ ...filter, cursor, limit: Math.min(200, Math.max(1, max - jobs.length)) });
      jobs.push(...page.jobs);
      if (!page.nextCursor) return { jobs, more: false };
      if (jobs.length >= max) return { jobs: jobs.slice(0, max), more: true };
      cursor = page.nextCursor;
    }
  }

  /** POST /api/jobs/:id/cancel (Ray's `stop_job`). @throws RefusedError (it already ended), NotFoundError, ForbiddenError */
  cancel(id: number): Promise<CancelResult> {
    return this.request<CancelResult>(OPERATIONS.cancelJob.method, pathOf('cancelJob', { id }), { what: `cancel job ${id}` });
  }

  /** POST /api/jobs/cancel with ids or a filter; answers what happened to each job. */
  cancelMany(body: CancelRequest): Promise<CancelResult> {
    return this.request<CancelResult>(OPERATIONS.cancelJobs.method, OPERATIONS.cancelJobs.path, { body, what: 'cancel' });
  }

  /** PATCH /api/jobs/:id: a PENDING job's priority; answers its summary. @throws RefusedError once it started */
  setPriority(id: number, priority: number): Promise<JobSummary> {
    return this.request<JobSummary>(OPERATIONS.patchJob.method, pathOf('patchJob', { id }), { body: { priority }, what: `job ${id}` });
  }

  /** DELETE /api/jobs/:id: a finished job with its logs (Ray's `delete_job`). @throws RefusedError (not finished) */
  async delete(id: number): Promise<void> {
    await this.request<unknown>(OPERATIONS.deleteJob.method, pathOf('deleteJob', { id }), { what: `delete job ${id}` });
  }

  /**
   * POST /api/jobs/:id/rerun: the job submitted again as it was submitted — with `changes` (a new
   * name, envs merged over its own, a priority) — answering the new job. Not retried (a second
   * try could make a second job).
   */
  rerun(id: number, changes: RerunChanges = {}): Promise<SubmitResult> {
    return this.request<SubmitResult>(OPERATIONS.rerunJob.method, pathOf('rerunJob', { id }), { body: { origin: this.opts.origin ?? 'api', ...changes }, what: `re-run job ${id}` });
  }

  /** GET /api/queues. */
  queues(): Promise<QueueList> {
    return this.request<QueueList>(OPERATIONS.listQueues.method, OPERATIONS.listQueues.path, { what: 'queues' });
  }

  /** PUT /api/queues/:name (a field left out is no limit). */
  putQueue(name: string, body: QueueSettings): Promise<Queue> {
    return this.request<Queue>(OPERATIONS.putQueue.method, pathOf('putQueue', { name }), { body, what: `queue ${name}` });
  }

  /** DELETE /api/queues/:name. @throws RefusedError while unfinished jobs are in it */
  async deleteQueue(name: string): Promise<void> {
    await this.request<unknown>(OPERATIONS.deleteQueue.method, pathOf('deleteQueue', { name }), { what: `delete queue ${name}` });
  }

  /**
   * Waits until the job is in a terminal status; answers it. Reads the job with a growing pause
   * (50 ms doubling to `pollMs`).
   * @throws JobdeckTimeoutError after `timeoutMs` (the job goes on).
   */
  async wait(id: number, o: { timeoutMs?: number; pollMs?: number } = {}): Promise<JobStatus> {
    const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
    for (let delay = 50; ; delay = Math.min(o.pollMs ?? 1000, delay * 2)) {
      const st = await this.status(id);
      if (TERMINAL.has(st)) return st;
      if (Date.now() + delay > deadline) throw new JobdeckTimeoutError(`job ${id} is still ${st} after ${o.timeoutMs} ms`, `job ${id}`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /**
   * Follows job `id` over its stream into `consumer` (stream.ts; the CLI's follow). Options other
   * than the connection's are followStream's.
   */
  follow(id: number, consumer: StreamConsumer, o: Omit<FollowStreamOptions, 'url' | 'token' | 'tokenHint' | 'jobId'> & { tokenHint?: string }): Promise<FollowEnd> {
    return followStream({ url: this.url, token: this.token, tokenHint: o.tokenHint ?? this.http.tokenHint, jobId: id, reconnectTimeoutMs: this.opts.reconnectTimeoutMs, ...o }, consumer);
  }

  /**
   * The job's logs, followed (Ray's `tail_job_logs`): each byte of each attempt's log once, task by
   * task and attempt by attempt, in order (and with `events`, the control messages); ends when the
   * job ends (or the task / attempt asked for). Survives dropped connections and server restarts.
   * @throws (while iterated) NotFoundError, UnauthorizedError, UnreachableError (never connected, or
   *   the server stayed away past `reconnectTimeoutMs`).
   */
  tail(id: number, o: TailOptions = {}): LogTail {
    const task = o.task ?? (o.attempt !== undefined ? 0 : undefined);
    const cursor = new LogCursor({ scope: task === undefined ? undefined : { task, attempt: o.attempt }, rank: o.rank, events: o.events });
    return new Tail(cursor, (consumer, signal) => this.follow(id, consumer, { follow: o.follow ?? true, rank: o.rank, signal }), o.signal, (end) => new UnreachableError(`lost the connection to jobdeck at ${this.url} for ${Math.round(end.timeoutMs / 1000)} s (${end.reason}); the job goes on`, `job ${id}`, this.url, 'gave-up', end.reason, end.timeoutMs));
  }

  /** The job's logs as they are now, exactly as written: every task and attempt in order (or the one asked for), without following (Ray's `get_job_logs`, as bytes). */
  async logs(id: number, o: Omit<TailOptions, 'follow' | 'events'> = {}): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const item of this.tail(id, { ...o, follow: false })) if (item.kind === 'log') parts.push(item.data);
    return Buffer.concat(parts);
  }

  /** A download of `pathname` streamed into `out` (the CLI's `logs --all`, `logs --grep`). */
  download(pathname: string, out: { write(chunk: Uint8Array): boolean; once(event: 'drain', cb: () => void): unknown }): Promise<void> {
    return this.http.download(pathname, out);
  }
}

/** The default reconnect limit of a tail (ms). */
export const DEFAULT_TAIL_RECONNECT_MS = DEFAULT_FOLLOW_RECONNECT_MS;
