/**
 * The CLI's REST client: `Authorization: Bearer <token>` on every request, and every failure
 * turned into a CliError with the right exit code (lib/cli/exit-codes.ts): problem+json answers
 * are shown by their `detail` (plus spec `issues` with file:line and key path); connection
 * refused → "cannot reach jobdeck at URL — is the server running?" (exit 6).
 *
 * A connection that drops — before the answer, or while its body is read (undici's
 * `TypeError: terminated`) — is a connection failure like a refused one. An idempotent request
 * (GET; a submit with a submissionId, Ray's idempotency key) is then sent again with the
 * follower's backoff (lib/cli/backoff.ts: 250 ms doubling to 5 s) until `retryTimeoutMs`; a 502,
 * 503 or 504 (a proxy, a server stopping) is retried the same way. Other requests are never
 * sent twice: the error says the server may or may not have applied it. Only a refusal on the
 * very first try fails at once (nobody listens there).
 */
import type { CancelResult, JobDetail, JobList, JobSummary, QueueList, QueueView, SubmitResult, UploadManifestView } from '../api/types';
import { backoffDelay } from './backoff';
import { CliError } from './errors';
import { EXIT } from './exit-codes';
import { tokenRefusedHint, type Connection } from './config';

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
  if (status === 401 || status === 403) return EXIT.UNAUTHORIZED;
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
  const out: string[] = [];
  for (const raw of issues) {
    const i = (raw ?? {}) as SpecIssue;
    if (typeof i.file !== 'string') continue;
    const where = i.line != null ? `${i.file}:${i.line}` : i.file;
    out.push(`${where}${i.path ? ` ${i.path}` : ''}: ${i.message ?? 'invalid'}`);
  }
  return out;
}

function causeCode(err: unknown): string | undefined {
  const c = (err as { cause?: { code?: string; errors?: { code?: string }[] } })?.cause;
  return c?.code ?? c?.errors?.[0]?.code;
}

/** Error codes that mean "nobody answers at that address" (not a connection that dropped). */
const REFUSED_CODES = ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'];

/**
 * True when a fetch/WebSocket error means "nobody answers at that address" (refused, no such
 * host, no route) — as opposed to a connection that was reset or cut, which is worth retrying.
 */
export function isUnreachable(err: unknown): boolean {
  const code = causeCode(err) ?? (err as { code?: string })?.code;
  return !!code && REFUSED_CODES.includes(code);
}

/** A short "why" for a failed fetch or body read: the system code, else the message. */
export function failureCause(err: unknown): string {
  return causeCode(err) ?? (err as { code?: string })?.code ?? (err as { cause?: Error }).cause?.message ?? (err as Error)?.message ?? String(err);
}

/** Turns a non-2xx answer into a CliError (problem+json `detail` when present). */
export async function errorFromResponse(res: Response, what: string): Promise<CliError> {
  return errorFromAnswer(res.status, res.statusText, await res.text().catch(() => ''), what);
}

/**
 * Like errorFromResponse, from an answer whose body was already read. `tokenHint` says where
 * the token came from (config.ts tokenRefusedHint), for a 401/403.
 */
export function errorFromAnswer(status: number, statusText: string, text: string, what: string, tokenHint?: string): CliError {
  let detail: string | undefined;
  let details: string[] = [];
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown; issues?: unknown };
    if (typeof body.detail === 'string') detail = body.detail;
    else if (typeof body.title === 'string') detail = body.title;
    details = formatIssues(body.issues);
  } catch {
    detail = text.trim().slice(0, 500) || undefined;
  }
  const code = exitCodeForHttp(status);
  let message = detail ?? `${what}: HTTP ${status} ${statusText}`;
  if (code === EXIT.UNAUTHORIZED) message = `${tokenHint ?? tokenRefusedHint(undefined)} — the server answered HTTP ${status}${detail ? `: ${detail}` : ''}`;
  // A spec error: every issue on its own line (the detail spells out only the first few).
  if (details.length) message = `invalid job spec (${details.length} problem${details.length > 1 ? 's' : ''}):`;
  return new CliError(message, code, details);
}

/** Options of JobdeckClient. */
export interface ClientOptions {
  /** Keep retrying an idempotent request this long after its first failure (ms; default 60 000). */
  retryTimeoutMs?: number;
  /** Waits between retries (ms); tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
  /** Told before each retry (the CLI prints a notice on stderr). */
  onRetry?: (r: { what: string; attempt: number; delayMs: number; cause: string }) => void;
  /** The clock (ms) for the retry budget; tests pass a fake. */
  now?: () => number;
}

/** Options of one request. */
export interface RequestOptions {
  body?: unknown;
  /** Names the request in errors ("submit", "job 7"). */
  what?: string;
  query?: URLSearchParams;
  /** Safe to send again when the connection drops (default: GET only). */
  idempotent?: boolean;
}

/** HTTP statuses an idempotent request is retried on (a proxy or a stopping server answers them). */
const RETRY_STATUSES = new Set([502, 503, 504]);

type Failure = { kind: 'refused' | 'dropped'; cause: string; answer?: { status: number; statusText: string; text: string } };

/**
 * A thin typed client of the jobdeck REST API. Every method throws CliError on failure; see the
 * module comment for what is retried.
 */
export class JobdeckClient {
  constructor(
    readonly conn: Connection,
    private readonly opts: ClientOptions = {},
  ) {}

  /** Headers every request carries. */
  authHeaders(): Record<string, string> {
    return this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {};
  }

  /** Sends a request; answers the parsed JSON body, or throws CliError. */
  async request<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.send<T>(method, pathname, opts)).body;
  }

  /**
   * Like request() but also answers the HTTP status. Retries an idempotent request whose
   * connection dropped (see the module comment).
   * @throws CliError UNREACHABLE (refused, or dropped and not retried / retries spent), the HTTP
   *   status's code (exitCodeForHttp), INTERNAL for an answer that is not JSON.
   */
  async send<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<{ status: number; body: T }> {
    const url = new URL(this.conn.url + pathname);
    if (opts.query) url.search = opts.query.toString();
    const what = opts.what ?? `${method} ${url.pathname}`;
    const idempotent = opts.idempotent ?? method === 'GET';
    const timeout = this.opts.retryTimeoutMs ?? 60_000;
    const now = this.opts.now ?? Date.now;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    let firstFailure: number | null = null;
    for (let attempt = 1; ; attempt++) {
      const r = await this.once(method, url, opts.body, what);
      if (!('kind' in r)) return this.parse<T>(method, url, r);
      // A refusal at the first try: nobody listens there. Later (a server restarting), keep trying.
      if (r.kind === 'refused' && attempt === 1) throw new CliError(unreachableMessage(this.conn.url, r.cause), EXIT.UNREACHABLE);
      if (!idempotent) {
        if (r.answer) throw errorFromAnswer(r.answer.status, r.answer.statusText, r.answer.text, what, tokenRefusedHint(this.conn.tokenSource));
        throw new CliError(
          `lost the connection to jobdeck at ${this.conn.url} before its answer to ${what} (${r.cause}); the server may or may not have done it — check with \`jobdeck queue\``,
          EXIT.UNREACHABLE,
        );
      }
      firstFailure ??= now();
      const delayMs = backoffDelay(attempt);
      if (now() + delayMs - firstFailure > timeout) {
        if (r.answer) throw errorFromAnswer(r.answer.status, r.answer.statusText, r.answer.text, what, tokenRefusedHint(this.conn.tokenSource));
        throw new CliError(`${unreachableMessage(this.conn.url, r.cause)} — gave up after ${Math.round((now() - firstFailure) / 1000)} s of retries`, EXIT.UNREACHABLE);
      }
      this.opts.onRetry?.({ what, attempt, delayMs, cause: r.cause });
      await sleep(delayMs);
    }
  }

  /** One try: the answer with its whole body read, or how the connection failed. */
  private async once(method: string, url: URL, payload: unknown, what: string): Promise<{ status: number; text: string } | Failure> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders() };
    let body: string | undefined;
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(payload);
    }
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body });
    } catch (err) {
      return { kind: isUnreachable(err) ? 'refused' : 'dropped', cause: failureCause(err) };
    }
    // The body is part of the answer: a connection cut while it is read is a dropped connection.
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      return { kind: 'dropped', cause: failureCause(err) };
    }
    if (RETRY_STATUSES.has(res.status)) return { kind: 'dropped', cause: `HTTP ${res.status}`, answer: { status: res.status, statusText: res.statusText, text } };
    if (!res.ok) throw errorFromAnswer(res.status, res.statusText, text, what, tokenRefusedHint(this.conn.tokenSource));
    return { status: res.status, text };
  }

  /**
   * GETs `pathname` and writes its body to `out` as it arrives (waiting for 'drain' when `out` is
   * full), never holding it whole: a log download. Not retried (bytes may have been written).
   * @throws CliError UNREACHABLE when the server cannot be reached or the body is cut off, the
   *   HTTP status's code for an error answer.
   */
  async download(pathname: string, out: { write(chunk: Uint8Array): boolean; once(event: 'drain', cb: () => void): unknown }): Promise<void> {
    const url = new URL(this.conn.url + pathname);
    const what = `GET ${url.pathname}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: this.authHeaders() });
    } catch (err) {
      throw new CliError(unreachableMessage(this.conn.url, failureCause(err)), EXIT.UNREACHABLE);
    }
    if (!res.ok || !res.body) throw errorFromAnswer(res.status, res.statusText, await res.text().catch(() => ''), what, tokenRefusedHint(this.conn.tokenSource));
    try {
      for await (const chunk of res.body) {
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', r));
      }
    } catch (err) {
      throw new CliError(`lost the connection to jobdeck at ${this.conn.url} during ${what} (${failureCause(err)}); the output is incomplete`, EXIT.UNREACHABLE);
    }
  }

  private parse<T>(method: string, url: URL, r: { status: number; text: string }): { status: number; body: T } {
    if (r.status === 204) return { status: 204, body: undefined as T };
    try {
      return { status: r.status, body: (r.text ? JSON.parse(r.text) : undefined) as T };
    } catch {
      throw new CliError(`${method} ${url.pathname}: the server answered something that is not JSON (is ${this.conn.url} a jobdeck server?)`, EXIT.INTERNAL);
    }
  }

  /**
   * POST /api/jobs; `created` is false when a repeated submissionId answered an existing job.
   * With a submissionId the submit is idempotent, so a dropped connection is retried.
   */
  async submit(req: SubmitRequest): Promise<SubmitResult & { created: boolean }> {
    const r = await this.send<SubmitResult>('POST', '/api/jobs', { body: { ...req, origin: 'cli' }, what: 'submit', idempotent: !!req.submissionId });
    return { ...r.body, created: r.status === 201 };
  }

  /**
   * POST /api/uploads: a gzip'd tar of a folder, stored by the server once per content hash.
   * Not retried (a dropped connection is reported; launching again sends it again).
   * @throws CliError UNREACHABLE, or the HTTP status's code (413 over the server's limit).
   */
  async upload(bytes: Uint8Array<ArrayBuffer>, what: string): Promise<UploadManifestView> {
    const url = new URL(this.conn.url + '/api/uploads');
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/gzip', ...this.authHeaders() }, body: bytes });
    } catch (err) {
      throw new CliError(`${unreachableMessage(this.conn.url, failureCause(err))} (while uploading ${what})`, EXIT.UNREACHABLE);
    }
    const text = await res.text();
    if (!res.ok) throw errorFromAnswer(res.status, res.statusText, text, `upload of ${what}`, tokenRefusedHint(this.conn.tokenSource));
    return this.parse<UploadManifestView>('POST', url, { status: res.status, text }).body;
  }

  /**
   * POST /api/jobs/:id/rerun: job `id` submitted again, as it was submitted, as a new job. Not
   * retried on a dropped connection (a second try could make a second job).
   */
  async rerun(id: number): Promise<SubmitResult> {
    return this.request<SubmitResult>('POST', `/api/jobs/${id}/rerun`, { body: { origin: 'cli' }, what: `re-run job ${id}` });
  }

  /** GET /api/jobs (one page). */
  list(p: ListParams = {}): Promise<JobList> {
    const q = new URLSearchParams();
    for (const s of p.status ?? []) q.append('status', s);
    if (p.q) q.set('q', p.q);
    if (p.submittedAfter) q.set('submittedAfter', p.submittedAfter);
    if (p.submittedBefore) q.set('submittedBefore', p.submittedBefore);
    for (const m of p.metadata ?? []) q.append('metadata', m);
    if (p.owner) q.set('owner', p.owner);
    if (p.limit) q.set('limit', String(p.limit));
    if (p.cursor) q.set('cursor', p.cursor);
    return this.request<JobList>('GET', '/api/jobs', { query: q, what: 'list jobs' });
  }

  /**
   * Pages through GET /api/jobs until `max` jobs or the end. Answers the jobs (newest first) and
   * whether more exist beyond `max`.
   */
  async listAll(p: Omit<ListParams, 'cursor' | 'limit'>, max: number): Promise<{ jobs: JobSummary[]; more: boolean }> {
    const jobs: JobSummary[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.list({ ...p, cursor, limit: Math.min(200, Math.max(1, max - jobs.length)) });
      jobs.push(...page.jobs);
      if (!page.nextCursor) return { jobs, more: false };
      if (jobs.length >= max) return { jobs: jobs.slice(0, max), more: true };
      cursor = page.nextCursor;
    }
  }

  /** GET /api/jobs/:id. */
  get(id: number): Promise<JobDetail> {
    return this.request<JobDetail>('GET', `/api/jobs/${id}`, { what: `job ${id}` });
  }

  /** POST /api/jobs/cancel with ids or a filter. */
  cancel(body: { ids: number[] } | { all: true } | { status: string[] }): Promise<CancelResult> {
    return this.request<CancelResult>('POST', '/api/jobs/cancel', { body, what: 'cancel' });
  }

  /** PATCH /api/jobs/:id (a PENDING job's priority); answers the job's summary. */
  patch(id: number, body: { priority: number }): Promise<JobSummary> {
    return this.request<JobSummary>('PATCH', `/api/jobs/${id}`, { body, what: `job ${id}` });
  }

  /** GET /api/queues. */
  queues(): Promise<QueueList> {
    return this.request<QueueList>('GET', '/api/queues', { what: 'queues' });
  }

  /** PUT /api/queues/:name (a field left out is no limit). */
  putQueue(name: string, body: { maxRunning?: number; maxCpus?: number; defaultPriority?: number }): Promise<QueueView> {
    return this.request<QueueView>('PUT', `/api/queues/${encodeURIComponent(name)}`, { body, what: `queue ${name}` });
  }

  /** DELETE /api/queues/:name. */
  deleteQueue(name: string): Promise<unknown> {
    return this.request<unknown>('DELETE', `/api/queues/${encodeURIComponent(name)}`, { what: `delete queue ${name}` });
  }

  /** DELETE /api/jobs/:id. */
  delete(id: number): Promise<unknown> {
    return this.request<unknown>('DELETE', `/api/jobs/${id}`, { what: `delete job ${id}` });
  }
}
