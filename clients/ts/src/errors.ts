/**
 * The errors of the jobdeck client, one class per kind of answer the API gives (docs/client-typescript.md).
 *
 * Every API error is `application/problem+json` (RFC 9457: `title`, `status`, `detail`; a spec
 * error adds `issues` with file, line, column and key path). Each HTTP status maps to one class,
 * so a caller catches what it means (`err instanceof NotFoundError`) instead of reading codes.
 * They mirror the CLI's exit codes (docs/cli.md): not found (4), cannot reach (6), token refused
 * (7), refused (10), bad input or spec (2) — and the Python client's exceptions.
 */

import type { SpecIssue } from './api.gen';

/** `file:line key.path: message` (lib/jobs/spec formatSpecIssue); null for an entry without a file (a request issue). */
export function formatIssue(i: Partial<SpecIssue>): string | null {
  if (typeof i.file !== 'string') return null;
  const where = i.line != null ? `${i.file}:${i.line}` : i.file;
  return `${where}${i.path ? ` ${i.path}` : ''}: ${i.message ?? 'invalid'}`;
}

/** What an error answer carried: the status, the raw body and its problem fields. */
export interface Answer {
  status: number;
  statusText: string;
  /** The body as text (what was read of it). */
  text: string;
  /** The problem's `detail` (else `title`, else the text, ≤ 500 characters). */
  detail?: string;
  /** The problem's `issues`, when it has them. */
  issues?: unknown[];
}

/** Base of every error the client throws. `what` names the request ("submit", "job 7"). */
export class JobdeckError extends Error {
  constructor(
    message: string,
    readonly what: string,
    /** The error answer, when the server gave one. */
    readonly answer?: Answer,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** The HTTP status of the answer (undefined when none came). */
  get status(): number | undefined {
    return this.answer?.status;
  }
}

/**
 * Nobody answers at the URL, or the connection was lost. `phase` says when: `refused` (the
 * first try found nobody), `gave-up` (retries of an idempotent request ran out after
 * `elapsedMs`), `lost` (a request that is not retried lost its answer: the server may or may not
 * have applied it), `cut` (a streamed body was cut off: the output is incomplete).
 */
export class UnreachableError extends JobdeckError {
  constructor(
    message: string,
    what: string,
    readonly url: string,
    readonly phase: 'refused' | 'gave-up' | 'lost' | 'cut',
    /** The system error code or message ("ECONNREFUSED", "terminated", "HTTP 503"). */
    readonly reason: string | undefined,
    readonly elapsedMs = 0,
    answer?: Answer,
  ) {
    super(message, what, answer);
  }
}

/** The server refused the token (401): missing, wrong, revoked or expired. `said` is what it answered. */
export class UnauthorizedError extends JobdeckError {
  constructor(
    message: string,
    what: string,
    readonly said: string,
    answer?: Answer,
  ) {
    super(message, what, answer);
  }
}

/** The token is valid but may not do this (403): a viewer submitting, a member cancelling another's job. */
export class ForbiddenError extends JobdeckError {}

/** No such job, task, attempt or queue (404), or a job deleted while it was followed. */
export class NotFoundError extends JobdeckError {}

/** The retention policy removed the job's logs (docs/design.md "Retention"). */
export class LogsRemovedError extends NotFoundError {}

/** Refused for the job as it is (409): cancel of a finished job, delete of a running one, a submission id reused with another spec. */
export class RefusedError extends JobdeckError {}

/** The caller's pending-jobs quota is reached (429). */
export class QuotaExceededError extends RefusedError {}

/** Bad input (400, 413, 415, 422, or a local file that cannot be read or packed): the message says what and where. */
export class BadRequestError extends JobdeckError {}

/** An invalid job spec: `issues` holds every problem with its file, line and key path. */
export class SpecError extends BadRequestError {
  constructor(
    message: string,
    what: string,
    readonly issues: Array<Partial<SpecIssue>>,
    answer?: Answer,
  ) {
    super(message, what, answer);
  }

  /** Each issue as `file:line key.path: message`. */
  get lines(): string[] {
    return this.issues.map(formatIssue).filter((l): l is string => l !== null);
  }
}

/** The server failed (5xx), answered something that is not jobdeck's API, or the job stream sent what this client cannot read. */
export class ServerError extends JobdeckError {}

/** `wait()` ran out of time; the job goes on. */
export class JobdeckTimeoutError extends JobdeckError {}

/** Parses an error answer's problem fields. */
export function readAnswer(status: number, statusText: string, text: string): Answer {
  const a: Answer = { status, statusText, text };
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown; issues?: unknown };
    if (typeof body.detail === 'string') a.detail = body.detail;
    else if (typeof body.title === 'string') a.detail = body.title;
    if (Array.isArray(body.issues)) a.issues = body.issues;
  } catch {
    a.detail = text.trim().slice(0, 500) || undefined;
  }
  return a;
}

/**
 * The error for a non-2xx answer, its class from the status. `tokenHint` says where the token
 * came from (config.ts tokenRefusedHint), for a 401.
 */
export function errorForAnswer(a: Answer, what: string, tokenHint: string): JobdeckError {
  const said = `HTTP ${a.status}${a.detail ? `: ${a.detail}` : ''}`;
  const detail = a.detail ?? `${what}: HTTP ${a.status} ${a.statusText}`;
  const issues = (a.issues ?? []).filter((i): i is Partial<SpecIssue> => !!i && typeof i === 'object' && typeof (i as Partial<SpecIssue>).file === 'string');
  switch (a.status) {
    case 400:
    case 413:
    case 415:
    case 422:
      if (issues.length) return new SpecError(`invalid job spec (${issues.length} problem${issues.length > 1 ? 's' : ''}): ${issues.map(formatIssue).join('; ')}`, what, issues, a);
      return new BadRequestError(detail, what, a);
    case 401:
      return new UnauthorizedError(`${tokenHint} — the server answered ${said}`, what, said, a);
    case 403:
      return new ForbiddenError(`${what}: ${detail}`, what, a);
    case 404:
      return new NotFoundError(detail, what, a);
    case 409:
      return new RefusedError(detail, what, a);
    case 429:
      return new QuotaExceededError(detail, what, a);
    default:
      return new ServerError(detail, what, a);
  }
}
