/**
 * The CLI's REST client: one fetch per call, `Authorization: Bearer <token>` on every request,
 * and every failure turned into a CliError with the right exit code (lib/cli/exit-codes.ts):
 * problem+json answers are shown by their `detail` (plus spec `issues` with file:line and key
 * path); connection refused → "cannot reach jobdeck at URL — is the server running?".
 */
import type { CancelResult, JobDetail, JobList, JobSummary, SubmitResult } from '../api/types';
import { CliError } from './errors';
import { EXIT } from './exit-codes';
import type { Connection } from './config';

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
  submissionId?: string;
  /** Shown in spec error messages (file:line). */
  filename?: string;
}

/** Query of GET /api/jobs. */
export interface ListParams {
  status?: string[];
  q?: string;
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

/** True when a fetch/WebSocket error means "nobody answers at that address". */
export function isUnreachable(err: unknown): boolean {
  const code = causeCode(err) ?? (err as { code?: string })?.code;
  return !!code && ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EAI_AGAIN', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'].includes(code);
}

/** Turns a non-2xx answer into a CliError (problem+json `detail` when present). */
export async function errorFromResponse(res: Response, what: string): Promise<CliError> {
  const text = await res.text().catch(() => '');
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
  const code = exitCodeForHttp(res.status);
  let message = detail ?? `${what}: HTTP ${res.status} ${res.statusText}`;
  if (code === EXIT.UNAUTHORIZED) message = `${message} (HTTP ${res.status}; set --token or JOBDECK_TOKEN)`;
  // A spec error: every issue on its own line (the detail spells out only the first few).
  if (details.length) message = `invalid job spec (${details.length} problem${details.length > 1 ? 's' : ''}):`;
  return new CliError(message, code, details);
}

/** A thin typed client of the jobdeck REST API. Every method throws CliError on failure. */
export class JobdeckClient {
  constructor(readonly conn: Connection) {}

  /** Headers every request carries. */
  authHeaders(): Record<string, string> {
    return this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {};
  }

  /** Sends a request; answers the parsed JSON body, or throws CliError. */
  async request<T>(method: string, pathname: string, opts: { body?: unknown; what?: string; query?: URLSearchParams } = {}): Promise<T> {
    return (await this.send<T>(method, pathname, opts)).body;
  }

  /** Like request() but also answers the HTTP status. */
  async send<T>(method: string, pathname: string, opts: { body?: unknown; what?: string; query?: URLSearchParams } = {}): Promise<{ status: number; body: T }> {
    const url = new URL(this.conn.url + pathname);
    if (opts.query) url.search = opts.query.toString();
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders() };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body });
    } catch (err) {
      const cause = causeCode(err) ?? (err as { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new CliError(unreachableMessage(this.conn.url, cause), EXIT.UNREACHABLE);
    }
    if (!res.ok) throw await errorFromResponse(res, opts.what ?? `${method} ${url.pathname}`);
    if (res.status === 204) return { status: 204, body: undefined as T };
    const text = await res.text();
    try {
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    } catch {
      throw new CliError(`${method} ${url.pathname}: the server answered something that is not JSON (is ${this.conn.url} a jobdeck server?)`, EXIT.INTERNAL);
    }
  }

  /** POST /api/jobs; `created` is false when a repeated submissionId answered an existing job. */
  async submit(req: SubmitRequest): Promise<SubmitResult & { created: boolean }> {
    const r = await this.send<SubmitResult>('POST', '/api/jobs', { body: req, what: 'submit' });
    return { ...r.body, created: r.status === 201 };
  }

  /** GET /api/jobs (one page). */
  list(p: ListParams = {}): Promise<JobList> {
    const q = new URLSearchParams();
    for (const s of p.status ?? []) q.append('status', s);
    if (p.q) q.set('q', p.q);
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

  /** DELETE /api/jobs/:id. */
  delete(id: number): Promise<unknown> {
    return this.request<unknown>('DELETE', `/api/jobs/${id}`, { what: `delete job ${id}` });
  }
}
