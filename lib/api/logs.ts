import { Readable } from 'node:stream';
import { z } from 'zod';
import type { Attempt, Task } from '../generated/prisma/client';
import { findLogAttempt, jobLogsRemovedAt, type LogTarget, type StoreScope } from '../store';
import type { LogRange } from './types';
import { ApiError, notFound } from './errors';
import { validate } from './request';
import { MAX_PG_INT } from './schemas';
import { rankLogPath } from '../jobs/paths';
import { isTerminal } from '../jobs/status';
import { OffsetPastEndError, readLogRange } from '../logs/reader';
import { openLog } from '../logs/source';
import { logsRemovedText } from '../logs/protocol';

/**
 * The REST side of attempt logs:
 * - `GET /api/jobs/:id/logs?task=&attempt=&rank=&offset=&limit=` → LogRange (one bounded byte range);
 * - `GET /api/jobs/:id/logs/download?task=&attempt=&rank=` → the whole file, streamed.
 * Defaults: task = the job's current task, attempt = that task's latest; rank 0 (a multi-node
 * attempt has one log per rank: lib/jobs/paths.ts rankLogPath); offset 0; limit 256 KiB (at most
 * 1 MiB). Neither loads a whole log in memory. Both read plain and compressed logs alike
 * (lib/logs/source.ts); offsets and sizes are log bytes.
 */

/** Default bytes of one range read. */
export const LOG_RANGE_DEFAULT_LIMIT = 256 * 1024;
/** Most bytes one range read returns. */
export const LOG_RANGE_MAX_LIMIT = 1024 * 1024;

const uint = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^[0-9]{1,15}$/, { error: (iss) => `expected an integer ≥ ${min}, got "${String(iss.input)}"` })
    .transform((s) => Number(s))
    .refine((n) => n >= min && n <= max, { error: `${name} must be between ${min} and ${max}` });

/** Query of GET /api/jobs/:id/logs (strings in, numbers out; for validation and OpenAPI). */
export const LogRangeQuerySchema = z.object({
  task: uint('task', 0, MAX_PG_INT).optional().meta({ description: '0-based task index (default: the current task).' }),
  attempt: uint('attempt', 1, MAX_PG_INT).optional().meta({ description: '1-based attempt number (default: the latest attempt of the task).' }),
  rank: uint('rank', 0, MAX_PG_INT).optional().meta({ description: "The rank (node, 0-based) of a multi-node attempt whose log to read (default 0, the head's)." }),
  offset: uint('offset', 0).optional().meta({ description: 'Byte offset of the first byte (default 0).' }),
  limit: uint('limit', 1, LOG_RANGE_MAX_LIMIT).optional().meta({ description: `Most bytes to return (default ${LOG_RANGE_DEFAULT_LIMIT}, at most ${LOG_RANGE_MAX_LIMIT}).` }),
});

/** Query of GET /api/jobs/:id/logs/download. */
export const LogDownloadQuerySchema = LogRangeQuerySchema.pick({ task: true, attempt: true, rank: true });

export type { LogTarget } from '../store';

/** A logs request's attempt and, for a multi-node attempt, the rank (default 0). */
export type RankTarget = LogTarget & { rank?: number };

/** Parses a logs query. @throws ApiError 400 naming the parameter. */
export function parseLogRangeQuery(url: URL): RankTarget & { offset: number; limit: number } {
  const q = validate(LogRangeQuerySchema, Object.fromEntries(url.searchParams), 'query');
  return { task: q.task, attempt: q.attempt, ...(q.rank !== undefined ? { rank: q.rank } : {}), offset: q.offset ?? 0, limit: q.limit ?? LOG_RANGE_DEFAULT_LIMIT };
}

/** Parses a download query. @throws ApiError 400 naming the parameter. */
export function parseLogDownloadQuery(url: URL): RankTarget {
  return validate(LogDownloadQuerySchema, Object.fromEntries(url.searchParams), 'query');
}

/**
 * The log file of `rank` of an attempt (its Attempt.logPath for rank 0).
 * @throws ApiError 404 when the task has no such rank.
 */
function rankFile(jobId: number, task: Task, attempt: Attempt, rank: number | undefined): string | null {
  if (!rank) return attempt.logPath;
  const n = Number((task.spec as { numNodes?: unknown } | null)?.numNodes);
  const nodes = Number.isInteger(n) && n > 1 ? n : 1;
  if (rank >= nodes) throw notFound(`job ${jobId} task ${task.index} runs on ${nodes} node${nodes === 1 ? '' : 's'} (ranks 0–${nodes - 1}): no rank ${rank}`);
  return attempt.logPath ? rankLogPath(attempt.logPath, rank) : null;
}

/**
 * Finds the attempt a logs request is about.
 * @throws ApiError 404 saying which of job, task or attempt does not exist (or that the task has
 *   not started yet when no attempt was named).
 */
export async function resolveLogAttempt(store: StoreScope, jobId: number, target: LogTarget): Promise<{ task: Task; attempt: Attempt }> {
  const r = await findLogAttempt(store, jobId, target);
  if (r.found) return { task: r.task, attempt: r.attempt };
  if (r.missing === 'job') throw notFound(`job ${jobId} does not exist`);
  if (r.missing === 'task') throw notFound(`job ${jobId} has ${r.taskCount} task${r.taskCount === 1 ? '' : 's'} (0–${r.taskCount - 1}): no task ${r.index}`);
  if (r.asked === undefined) throw notFound(`job ${jobId} task ${r.index} has not started: no attempt yet`);
  const n = r.attempts;
  throw notFound(`job ${jobId} task ${r.index} has ${n === 0 ? 'no attempt yet' : `${n} attempt${n === 1 ? '' : 's'} (1–${n})`}: no attempt ${r.asked}`);
}

/**
 * Refuses a read of the logs of a job whose logs the retention policy removed (docs/design.md
 * "Retention"): 410 Gone with `logs removed on <date> by the retention policy` and `logsRemovedAt`.
 * An unknown job passes (the caller's own read answers 404).
 */
export async function assertLogsKept(store: StoreScope, jobId: number): Promise<void> {
  const removedAt = await jobLogsRemovedAt(store, jobId);
  if (removedAt) throw new ApiError(410, 'Gone', `job ${jobId}: ${logsRemovedText(removedAt)}`, { logsRemovedAt: removedAt.toISOString() });
}

/**
 * One bounded byte range of an attempt's log (see LogRange). An offset equal to the size
 * answers an empty range (poll again later).
 * @throws ApiError 404 (unknown job/task/attempt), 416 when offset is past the end (with `size`),
 *   410 when the retention policy removed the job's logs.
 */
export async function getLogRange(store: StoreScope, jobId: number, q: RankTarget & { offset: number; limit: number }): Promise<LogRange> {
  const { task, attempt } = await resolveLogAttempt(store, jobId, q);
  await assertLogsKept(store, jobId);
  const ended = isTerminal('attempt', attempt.status);
  const file = rankFile(jobId, task, attempt, q.rank);
  try {
    const r = await readLogRange(file, q.offset, q.limit, { complete: ended });
    return {
      task: task.index,
      attempt: attempt.number,
      offset: r.offset,
      nextOffset: r.nextOffset,
      size: r.size,
      complete: ended && r.nextOffset >= r.size,
      data: r.data.toString('utf8'),
      ...(q.rank !== undefined ? { rank: q.rank } : {}),
    };
  } catch (err) {
    if (err instanceof OffsetPastEndError) {
      throw new ApiError(416, 'Range Not Satisfiable', `offset ${q.offset} is past the end of the log of job ${jobId} task ${task.index} attempt ${attempt.number}: its size is ${err.size} bytes`, {
        size: err.size,
      });
    }
    throw err;
  }
}

/** The download file name of an attempt's log (`-rank-K` for rank K > 0 of a multi-node attempt). */
export function logFileName(jobId: number, task: number, attempt: number, rank = 0): string {
  return `job-${jobId}-task-${task}-attempt-${attempt}${rank > 0 ? `-rank-${rank}` : ''}.log`;
}

/**
 * True when an `Accept-Encoding` header accepts gzip (RFC 9110 §12.5.3): `gzip` (or `x-gzip`), or
 * `*` without gzip itself refused, with a q-value above 0.
 */
export function acceptsGzip(header: string | null | undefined): boolean {
  let star: boolean | null = null;
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const ok = q === undefined || Number(q) > 0;
    if (name.trim() === 'gzip' || name.trim() === 'x-gzip') return ok;
    if (name.trim() === '*') star = ok;
  }
  return star === true;
}

/**
 * The whole log of an attempt as a streamed response (the bytes that exist when asked; a
 * missing file is an empty log), read in 256 KiB pieces as the client takes them, never buffered
 * whole. A compressed log (docs/design.md §8 "Compressed logs") goes as it is on disk with
 * `Content-Encoding: gzip` when `acceptEncoding` accepts gzip, else inflated on the way; either
 * way the client gets the log's bytes exactly. `Vary: Accept-Encoding` always.
 * @throws ApiError 404 for an unknown job, task or attempt; 410 when the retention policy
 *   removed the job's logs.
 */
export async function logDownloadResponse(store: StoreScope, jobId: number, target: RankTarget, opts: { acceptEncoding?: string | null } = {}): Promise<Response> {
  const { task, attempt } = await resolveLogAttempt(store, jobId, target);
  await assertLogsKept(store, jobId);
  const file = rankFile(jobId, task, attempt, target.rank);
  const src = await openLog(file, { sequential: true });
  // A fixed range: a log still growing is sent up to the size it had, matching Content-Length.
  const size = src ? await src.size() : 0;
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(size),
    'content-disposition': `attachment; filename="${logFileName(jobId, task.index, attempt.number, target.rank)}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    vary: 'Accept-Encoding',
  };
  if (!src || size === 0) {
    await src?.close();
    return new Response(null, { status: 200, headers: { ...headers, 'content-length': '0' } });
  }
  const gz = acceptsGzip(opts.acceptEncoding) ? src.gzipFile() : null;
  if (gz) return new Response(Readable.toWeb(gz.stream) as ReadableStream<Uint8Array>, { status: 200, headers: { ...headers, 'content-encoding': 'gzip', 'content-length': String(gz.bytes) } });
  return new Response(Readable.toWeb(src.stream(size)) as ReadableStream<Uint8Array>, { status: 200, headers });
}
