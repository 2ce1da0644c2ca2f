/**
 * Request parsing for the job routes: content types, JSON with its error position, zod
 * validation into problem+json answers, path ids, list queries. Route handlers call these, then
 * lib/api/jobs.ts, then answer — every "bad input" answer of the job API comes from here.
 */
import type { z } from 'zod';
import type { RerunOverrides, SpecSource, SubmitInput } from '../control';
import type { JobStatus } from '../jobs/status';
import type { JobFilter } from '../store';
import { readBody } from './body';
import type { ListSort } from '../store';
import { decodeCursor, decodeNameCursor } from './cursor';
import { ApiError, badRequest } from './errors';
import type { SubmitOrigin } from '../jobs/origin';
import { PutQueueSchema, QueueNameSchema } from './queue-schemas';
import { CancelRequestSchema, JobIdSchema, PatchJobSchema, RerunRequestSchema, SubmitJsonSchema, SubmitQuerySchema, ValidateJsonSchema, YAML_CONTENT_TYPES } from './schemas';
import { CountsQuerySchema, ListQuerySchema } from './schemas-list';

/** A problem in a request field: `path` like `ids[2]` ("" for the whole body). */
export interface RequestIssue {
  path: string;
  message: string;
}

/** `['ids', 2, 'x']` → `ids[2].x`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/**
 * Validates `value` with a zod schema.
 * @param where what is being validated, for the message ("request body", "query").
 * @throws ApiError 400 whose detail lists each problem with its path, and `issues` [{path, message}].
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues: RequestIssue[] = r.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
  const lines = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  throw badRequest(`${where}: ${lines.join('; ')}`, { issues });
}

/** The media type of a request, lower-case, without parameters ('' when absent). */
export function mediaType(req: Request): string {
  return (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

/** What a body holds, from its Content-Type. */
export type BodyKind = 'yaml' | 'json';

/**
 * Which kind of body a request carries.
 * @param accept the kinds this route accepts.
 * @throws ApiError 415 naming the accepted types when the Content-Type is missing or other.
 */
export function bodyKind(req: Request, accept: readonly BodyKind[] = ['yaml', 'json']): BodyKind {
  const t = mediaType(req);
  if (accept.includes('json') && (t === 'application/json' || /^application\/[\w.+-]+\+json$/.test(t))) return 'json';
  if (accept.includes('yaml') && (YAML_CONTENT_TYPES as readonly string[]).includes(t)) return 'yaml';
  const wanted = [...(accept.includes('yaml') ? ['application/yaml (the YAML text)', 'text/yaml', 'text/plain'] : []), ...(accept.includes('json') ? ['application/json'] : [])];
  throw new ApiError(415, 'Unsupported Media Type', `Content-Type ${t ? `"${t}"` : 'is missing and'} is not accepted here; send ${wanted.join(', ')}`, {
    accepted: [...(accept.includes('yaml') ? YAML_CONTENT_TYPES : []), ...(accept.includes('json') ? ['application/json'] : [])],
  });
}

/** 1-based line and column of a character offset in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * Offset of the first syntax error in JSON text (a small recursive-descent scan, run only after
 * JSON.parse failed: V8 does not always say where, e.g. "Unexpected token '}'").
 * Returns text.length for truncated input.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const lit = (word: string) => {
    for (const ch of word) if (text[i++] !== ch) (i--, fail());
  };
  const str = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 34) return void i++;
      if (c < 32) fail();
      if (c === 92) {
        i++;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) ((i += k), fail());
          i += 5;
        } else if ('"\\/bfnrt'.includes(text[i] ?? 'x')) i++;
        else fail();
      } else i++;
    }
  };
  const num = () => {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail();
      }
    } else if (c === '"') str();
    else if (c === 't') lit('true');
    else if (c === 'f') lit('false');
    else if (c === 'n') lit('null');
    else if (c === '-' || (c >= '0' && c <= '9')) num();
    else fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return text.length;
  } catch (at) {
    if (typeof at === 'number') return Math.min(at, text.length);
    throw at;
  }
}

/**
 * Parses JSON text.
 * @throws ApiError 400 "invalid JSON in the request body at line L, column C (position P): …"
 *   with `line`, `column`, `position` members.
 */
export function parseJson(text: string, where = 'request body'): unknown {
  if (text.trim() === '') throw badRequest(`${where} is empty; expected a JSON object`);
  try {
    return JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const m = /at position (\d+)/.exec(msg);
    const pos = m ? Number(m[1]) : jsonErrorOffset(text);
    const { line, column } = lineColumn(text, pos);
    const reason = msg.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+.*$/, '').replace(/, ".*" is not valid JSON$/s, '');
    throw badRequest(`invalid JSON in the ${where} at line ${line}, column ${column} (position ${pos}): ${reason}`, { line, column, position: pos });
  }
}

/**
 * Reads the body as JSON (Content-Type application/json required).
 * @throws ApiError 415 for another Content-Type, 413 when too large, 400 when invalid JSON.
 */
export async function readJson(req: Request): Promise<unknown> {
  bodyKind(req, ['json']);
  return parseJson(await readBody(req));
}

/**
 * The job id of a path like /api/jobs/{id}.
 * @throws ApiError 400 "job id must be a positive integer, got "abc"".
 */
export function parseJobId(raw: string | undefined): number {
  const r = JobIdSchema.safeParse(raw ?? '');
  if (r.success) return r.data;
  throw badRequest(r.error.issues[0]?.message ?? `bad job id "${raw}"`);
}

/**
 * The list's filter as a query gives it (GET /api/jobs, and the log search GET /api/logs/grep):
 * lib/api/jobs.ts listFilter() turns it into the store's JobFilter.
 */
export interface ListFilterParams {
  status?: JobStatus[];
  q?: string;
  /** Only the jobs of this operator queue. */
  queue?: string;
  /** Submitted at or after / before (lib/store JobFilter). */
  submittedAfter?: Date;
  submittedBefore?: Date;
  /** Metadata pairs all of which a job's metadata holds (lib/store JobFilter). */
  metadata?: Array<[string, string]>;
  /** Label pairs all of which the job's tasks' `resources.labels` hold (lib/store JobFilter `labels`). */
  label?: Array<[string, string]>;
  /** Only the jobs of this submitter: "me" or a user name. */
  owner?: string;
  /** Only the jobs of this group. */
  group?: number;
  /** Only the jobs this schedule submitted. */
  schedule?: number;
}

/** A parsed GET /api/jobs query. */
export interface ListParams extends ListFilterParams {
  limit: number;
  sort: ListSort;
  /** The decoded cursor: the last job of the previous page — its id, and its name when sorted by name. */
  beforeId: number | null;
  afterName: string | null;
  /** A group is one row (its first job): `fold=groups`. */
  foldGroups?: boolean;
}

/** Collects a repeatable, comma-separable parameter (`status=A&status=B,C`). */
function multi(sp: URLSearchParams, name: string, upper = false): string[] | undefined {
  const values = sp
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => (upper ? v.trim().toUpperCase() : v.trim()))
    .filter(Boolean);
  return values.length ? values : undefined;
}

const single = (sp: URLSearchParams, name: string): string | undefined => {
  const v = sp.get(name);
  return v === null || v.trim() === '' ? undefined : v;
};

/**
 * Parses the query of GET /api/jobs.
 * @throws ApiError 400 for an unknown status (listing the valid ones), an unknown sort, a limit
 *   outside 1–200, or a cursor that is not one this server made for that sort.
 */
export function parseListQuery(url: URL): ListParams {
  const sp = url.searchParams;
  const parsed = validate(ListQuerySchema, { ...listFilterInput(sp), sort: single(sp, 'sort'), limit: single(sp, 'limit'), cursor: single(sp, 'cursor'), fold: single(sp, 'fold') }, 'query');
  const sort = parsed.sort ?? 'newest';
  let beforeId: number | null = null;
  let afterName: string | null = null;
  if (parsed.cursor !== undefined) {
    const named = sort === 'name' ? decodeNameCursor(parsed.cursor) : null;
    beforeId = sort === 'name' ? (named?.id ?? null) : decodeCursor(parsed.cursor);
    afterName = named?.name ?? null;
    if (beforeId === null) throw badRequest(`cursor "${parsed.cursor.slice(0, 64)}" is malformed for sort=${sort}: pass back the nextCursor of the previous page (of the same sort) unchanged`, { issues: [{ path: 'cursor', message: 'malformed cursor' }] });
  }
  return { ...listFilterOf(parsed), limit: parsed.limit, sort, beforeId, afterName, foldGroups: parsed.fold === 'groups' };
}

/**
 * The list filter's parameters of a query as given (`status` repeatable or comma-separated,
 * `metadata` repeatable), for a schema built on listFilterShape (lib/api/schemas-list.ts) to
 * validate: GET /api/jobs and GET /api/logs/grep read their filter through this one function.
 */
export function listFilterInput(sp: URLSearchParams): Record<keyof ListFilterParams, string | string[] | undefined> {
  return { status: multi(sp, 'status', true), ...searchParams(sp), owner: single(sp, 'owner'), group: single(sp, 'group'), schedule: single(sp, 'schedule') };
}

/** The filter fields of a query validated by a listFilterShape schema, as ListFilterParams (q trimmed; blank: none). */
export function listFilterOf(v: ListFilterParams): ListFilterParams {
  return { status: v.status, q: v.q?.trim() || undefined, queue: v.queue, submittedAfter: v.submittedAfter, submittedBefore: v.submittedBefore, metadata: v.metadata, label: v.label, owner: v.owner, group: v.group, schedule: v.schedule };
}

/** The search parameters the list and the counts share, as given (validated by their schema). */
function searchParams(sp: URLSearchParams) {
  const metadata = sp.getAll('metadata');
  const label = sp.getAll('label');
  return { q: single(sp, 'q'), queue: single(sp, 'queue'), submittedAfter: single(sp, 'submittedAfter'), submittedBefore: single(sp, 'submittedBefore'), metadata: metadata.length ? metadata : undefined, label: label.length ? label : undefined };
}

/**
 * Parses the query of GET /api/jobs/counts (`q`, `queue`, `submittedAfter`, `submittedBefore`, `metadata`, `label`), as the store's filter.
 * @throws ApiError 400 for a q over 200 characters, a malformed queue name or time, or an empty time range.
 */
export function parseCountsQuery(url: URL): Omit<JobFilter, 'status' | 'userId'> {
  const parsed = validate(CountsQuerySchema, searchParams(url.searchParams), 'query');
  return { q: parsed.q?.trim() || undefined, queue: parsed.queue, submittedAfter: parsed.submittedAfter, submittedBefore: parsed.submittedBefore, metadata: parsed.metadata, labels: parsed.label };
}

/** Parses the query of POST /api/jobs (overrides that go with a raw YAML body). */
export function parseSubmitQuery(url: URL): z.output<typeof SubmitQuerySchema> {
  const sp = url.searchParams;
  return validate(SubmitQuerySchema, { name: single(sp, 'name'), submissionId: single(sp, 'submissionId'), filename: single(sp, 'filename'), origin: single(sp, 'origin'), priority: single(sp, 'priority'), queue: single(sp, 'queue') }, 'query');
}

/**
 * Parses a POST /api/jobs request: a raw YAML body (overrides in the query: name,
 * submissionId, filename) or a JSON body (SubmitJsonSchema).
 * @throws ApiError 415 (content type), 413 (over 1 MiB), 400 (invalid JSON or fields).
 */
export async function parseSubmitRequest(req: Request): Promise<SubmitInput> {
  const kind = bodyKind(req);
  const url = new URL(req.url);
  if (kind === 'yaml') {
    const q = parseSubmitQuery(url);
    const text = await readBody(req);
    return { source: { kind: 'yaml', text, filename: q.filename }, name: q.name, submissionId: q.submissionId ?? null, origin: q.origin, priority: q.priority, queue: q.queue };
  }
  const body = validate(SubmitJsonSchema, parseJson(await readBody(req)), 'request body');
  const source: SpecSource =
    body.yaml !== undefined
      ? { kind: 'yaml', text: body.yaml, filename: body.filename }
      : body.cmd !== undefined
        ? { kind: 'cmd', cmd: body.cmd }
        : { kind: 'spec', value: body.spec, filename: body.filename };
  return { source, name: body.name, envs: body.envs, secrets: body.secrets, workdirUpload: body.workdirUpload, fileMountUploads: body.fileMountUploads, submissionId: body.submissionId ?? null, metadata: body.metadata ?? null, origin: body.origin, priority: body.priority, queue: body.queue,
    ...(body.numJobs !== undefined || body.params !== undefined ? { array: { numJobs: body.numJobs, params: body.params } } : {}),
    ...(body.dependsOn ? { dependsOn: { jobs: body.dependsOn.jobs, after: body.dependsOn.after ?? 'ok' } } : {}) };
}

/**
 * Parses a POST /api/jobs/{id}/rerun body: none, or JSON `{ origin?, name?, envs?, priority? }`
 * (RerunRequestSchema): the overrides of lib/control/rerun.ts.
 * @throws ApiError 415 for a body that is not JSON, 413, 400 (invalid JSON or fields).
 */
export async function parseRerunRequest(req: Request): Promise<{ origin: SubmitOrigin; overrides: RerunOverrides }> {
  const text = await readBody(req);
  if (text.trim() === '') return { origin: 'api', overrides: {} };
  bodyKind(req, ['json']);
  const body = validate(RerunRequestSchema, parseJson(text), 'request body');
  const overrides: RerunOverrides = {};
  if (body.name !== undefined) overrides.name = body.name;
  if (body.envs !== undefined) overrides.envs = body.envs;
  if (body.priority !== undefined) overrides.priority = body.priority;
  return { origin: body.origin ?? 'api', overrides };
}

/**
 * Parses a POST /api/validate request: raw YAML, or JSON `{ yaml, filename? }`.
 * @throws ApiError 415, 413, 400 like parseSubmitRequest().
 */
export async function parseValidateRequest(req: Request): Promise<{ text: string; filename?: string }> {
  const kind = bodyKind(req);
  if (kind === 'yaml') {
    const filename = single(new URL(req.url).searchParams, 'filename');
    return { text: await readBody(req), filename };
  }
  const body = validate(ValidateJsonSchema, parseJson(await readBody(req)), 'request body');
  return { text: body.yaml, filename: body.filename };
}

/**
 * Parses a PATCH /api/jobs/{id} body: `{ priority }`.
 * @throws ApiError 415, 413, 400 (invalid JSON, unknown field, a priority out of 0–1000).
 */
export async function parsePatchRequest(req: Request): Promise<{ priority: number }> {
  return validate(PatchJobSchema, await readJson(req), 'request body');
}

/**
 * The queue name of a path like /api/queues/{name}.
 * @throws ApiError 400 naming the rule.
 */
export function parseQueueName(raw: string | undefined): string {
  const r = QueueNameSchema.safeParse(raw ?? '');
  if (r.success) return r.data;
  throw badRequest(r.error.issues[0]?.message ?? 'bad queue name', { issues: [{ path: 'name', message: r.error.issues[0]?.message ?? 'bad queue name' }] });
}

/**
 * Parses a PUT /api/queues/{name} body.
 * @throws ApiError 415, 413, 400 (invalid JSON, unknown field, a limit out of range).
 */
export async function parsePutQueueRequest(req: Request): Promise<{ maxRunning?: number | null; maxCpus?: number | null; maxGpus?: number | null; startTimeoutMs?: number | null; defaultPriority?: number | null }> {
  return validate(PutQueueSchema, await readJson(req), 'request body');
}

/**
 * Parses a POST /api/jobs/cancel body into ids or a filter.
 * @throws ApiError 400 "refusing to cancel every job without an explicit filter" for `{}`.
 */
export async function parseCancelRequest(req: Request): Promise<{ ids: number[] } | { filter: JobFilter }> {
  const body = validate(CancelRequestSchema, await readJson(req), 'request body');
  if (body.ids) return { ids: [...new Set(body.ids)] };
  if (!body.status && !body.q && !body.all) {
    throw badRequest('refusing to cancel every job without an explicit filter: give ids, status, q, or all: true');
  }
  return { filter: { status: body.status, q: body.q } };
}
