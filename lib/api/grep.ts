/**
 * GET /api/logs/grep (docs/design.md "Log search"): the lines matching a pattern in the logs of
 * the jobs a list filter selects (newest `jobs` first), streamed as NDJSON while they are found —
 * `{"type":"match",jobId,task,attempt,line,text,cut}` per line, then one
 * `{"type":"end",matches,jobs,files,reason,engine,elapsedMs}` — bounded in results, time and
 * jobs; a client that disconnects stops the search (rg is killed).
 */
import { z } from 'zod';
import { grepLogs, patternProblem, type GrepSummary } from '../logs/grep';
import { badRequest } from './errors';
import { logSearchTargets, type StoreScope } from '../store';
import type { Actor } from '../jobs/roles';
import { listFilter } from './jobs';
import { listFilterInput, listFilterOf, validate, type ListFilterParams } from './request';
import { userText } from './schemas';
import { listFilterShape, rangeOrdered } from './schemas-list';

/** Most matches one search returns; the default. */
export const GREP_MAX_LIMIT = 1000;
export const GREP_DEFAULT_LIMIT = 100;
/** Most jobs one search reads; the default. */
export const GREP_MAX_JOBS = 1000;
export const GREP_DEFAULT_JOBS = 200;
/** Longest search (ms); the default. */
export const GREP_MAX_MS = 30_000;
export const GREP_DEFAULT_MS = 10_000;

const intParam = (name: string, min: number, max: number, def: number) =>
  z
    .string()
    .regex(/^[0-9]{1,9}$/, { error: (iss) => `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(String(iss.input).slice(0, 40))}` })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: `${name} must be an integer from ${min} to ${max}` })
    .optional()
    .transform((n) => n ?? def);
const flagParam = (name: string) =>
  z
    .enum(['0', '1', 'true', 'false'], { error: `${name} must be 0 or 1` })
    .optional()
    .transform((v) => v === '1' || v === 'true');

/**
 * Query of GET /api/logs/grep: the pattern, its bounds, and the list's whole filter
 * (listFilterShape: status, q, queue, submitted range, metadata, owner), read as GET /api/jobs
 * reads it.
 */
export const GrepQuerySchema = z
  .object({
    pattern: userText(1, 200).meta({ description: 'What to find: a literal string (1–200 characters) unless regex=1.' }),
    regex: flagParam('regex').meta({ description: "pattern is a regular expression (ripgrep's syntax; a JavaScript RegExp with the u flag when rg is not installed on the server). One that does not compile answers 400 naming the problem." }),
    ignoreCase: flagParam('ignoreCase').meta({ description: 'Match in any case.' }),
    limit: intParam('limit', 1, GREP_MAX_LIMIT, GREP_DEFAULT_LIMIT).meta({ description: `Most matches (default ${GREP_DEFAULT_LIMIT}, at most ${GREP_MAX_LIMIT}).` }),
    jobs: intParam('jobs', 1, GREP_MAX_JOBS, GREP_DEFAULT_JOBS).meta({ description: `Search the newest N jobs the filter selects (default ${GREP_DEFAULT_JOBS}, at most ${GREP_MAX_JOBS}).` }),
    timeoutMs: intParam('timeoutMs', 100, GREP_MAX_MS, GREP_DEFAULT_MS).meta({ description: `Stop after this long (default ${GREP_DEFAULT_MS}, at most ${GREP_MAX_MS} ms).` }),
    ...listFilterShape,
  })
  .superRefine(rangeOrdered);

/** A parsed GET /api/logs/grep query: the search and its bounds, and the list's filter. */
export interface GrepQuery {
  pattern: string;
  regex: boolean;
  ignoreCase: boolean;
  limit: number;
  jobs: number;
  timeoutMs: number;
  filter: ListFilterParams;
}

/** Parses the query of GET /api/logs/grep. @throws ApiError 400 naming the field. */
export function parseGrepQuery(url: URL): GrepQuery {
  const sp = url.searchParams;
  const bounds = Object.fromEntries(['pattern', 'regex', 'ignoreCase', 'limit', 'jobs', 'timeoutMs'].map((k) => [k, sp.get(k) ?? undefined]));
  const v = validate(GrepQuerySchema, { ...bounds, ...listFilterInput(sp) }, 'query');
  return { pattern: v.pattern, regex: v.regex, ignoreCase: v.ignoreCase, limit: v.limit, jobs: v.jobs, timeoutMs: v.timeoutMs, filter: listFilterOf(v) };
}

/**
 * The streamed NDJSON answer (see the module comment); `signal` is the request's, `actor` the
 * caller (`owner=me`); `engine` forces one (tests; default: rg when installed).
 * @throws ApiError 400 when the pattern does not compile (naming the problem) or `owner` names no
 *   user — before anything streams.
 */
export async function grepResponse(store: StoreScope, q: GrepQuery, signal: AbortSignal, actor?: Actor, engine?: 'rg' | 'node'): Promise<Response> {
  const t0 = Date.now();
  const problem = await patternProblem(q.pattern, { regex: q.regex, ignoreCase: q.ignoreCase, engine });
  if (problem !== null) throw badRequest(`pattern: not a regular expression the search can run: ${problem}`, { issues: [{ path: 'pattern', message: problem }] });
  const { jobs, targets } = await logSearchTargets(store, await listFilter(store, q.filter, actor), q.jobs);
  const files = targets.map((t) => ({ path: t.logPath, key: t }));
  const enc = new TextEncoder();
  const ac = new AbortController();
  signal.addEventListener('abort', () => ac.abort());
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // After the client went away the stream is cancelled: nothing more may be queued or closed.
      const line = (v: unknown) => {
        if (!ac.signal.aborted) controller.enqueue(enc.encode(JSON.stringify(v) + '\n'));
      };
      const close = () => {
        try {
          controller.close();
        } catch {
          // already cancelled
        }
      };
      void grepLogs(files, { pattern: q.pattern, regex: q.regex, ignoreCase: q.ignoreCase, maxResults: q.limit, maxMs: q.timeoutMs, signal: ac.signal, engine }, (m) =>
        line({ type: 'match', jobId: m.key.jobId, task: m.key.task, attempt: m.key.attempt, line: m.line, text: m.text, cut: m.cut }),
      ).then(
        (s: GrepSummary) => {
          if (s.reason !== 'aborted') line({ type: 'end', matches: s.matches, jobs, files: files.length, reason: s.reason, engine: s.engine, elapsedMs: Date.now() - t0 });
          close();
        },
        (err: unknown) => {
          line({ type: 'error', message: (err as Error).message });
          close();
        },
      );
    },
    cancel() {
      ac.abort();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } });
}
