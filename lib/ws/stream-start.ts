/**
 * The query of `/ws/jobs/:id`: where a job stream starts and whether it follows. Parsed before
 * the socket is handed to a JobStream, so a bad parameter is refused with a message that names it
 * (docs/design.md, "Logs and streams": resuming from task/attempt/offset and since).
 */
import { MAX_PG_INT } from '../api/schemas';

/** Where and how a job stream starts (query of `/ws/jobs/:id`). */
export interface StreamStart {
  /** 0-based task index. */
  task: number;
  /** 1-based attempt number. */
  attempt: number;
  /** Byte offset in that attempt's log. */
  offset: number;
  follow: boolean;
  /** Last status eventId the client received (status messages up to it are not re-sent). */
  since: number | null;
  /** Only this rank's log of each attempt (multi-node attempts); null: every rank's. */
  rank: number | null;
  /** Start offset of each rank (by rank) of the start attempt, instead of `offset`; null when not given. */
  offsets: number[] | null;
}

/** Most entries `offsets` may have (SPEC_LIMITS.maxNumNodes). */
const MAX_OFFSETS = 1024;

/** A query error: the text says which parameter and why. */
export class StreamQueryError extends Error {}

/** `name=N`: an integer from `min` to `max` (default: the largest safe integer, for byte offsets). */
function intParam(q: URLSearchParams, name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  if (!/^[0-9]{1,15}$/.test(raw)) throw new StreamQueryError(`${name}: expected an integer ≥ ${min}, got "${raw.slice(0, 100)}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new StreamQueryError(`${name}: expected an integer from ${min} to ${max}, got ${n}`);
  return n;
}

/** `offsets=O0,O1,…`: non-negative integers, one per rank. */
function offsetsParam(q: URLSearchParams): number[] | null {
  const raw = q.get('offsets');
  if (raw === null || raw === '') return null;
  const parts = raw.split(',');
  if (parts.length > MAX_OFFSETS || !parts.every((p) => /^[0-9]{1,15}$/.test(p))) {
    throw new StreamQueryError(`offsets: expected at most ${MAX_OFFSETS} byte offsets (integers ≥ 0) separated by commas, got "${raw.slice(0, 100)}"`);
  }
  return parts.map(Number);
}

/**
 * Parses `?task=&attempt=&offset=&follow=&since=&rank=&offsets=` (defaults: 0, 1, 0, follow on,
 * none, every rank, none). With `offsets`, `offset` (rank 0's) must be absent or agree.
 * @throws StreamQueryError naming the bad parameter.
 */
export function parseStreamStart(q: URLSearchParams): StreamStart {
  const f = q.get('follow');
  let follow = true;
  if (f !== null && f !== '') {
    if (['1', 'true', 'yes'].includes(f)) follow = true;
    else if (['0', 'false', 'no'].includes(f)) follow = false;
    else throw new StreamQueryError(`follow: expected 1/0 or true/false, got "${f}"`);
  }
  const sinceRaw = q.get('since');
  const rankRaw = q.get('rank');
  const rank = rankRaw === null || rankRaw === '' ? null : intParam(q, 'rank', 0, 0, MAX_PG_INT);
  const offsets = offsetsParam(q);
  let offset = intParam(q, 'offset', 0, 0);
  if (offsets) {
    const first = offsets[rank ?? 0] ?? 0;
    if (q.get('offset') && offset !== first) throw new StreamQueryError(`offset: ${offset} disagrees with offsets (rank ${rank ?? 0}: ${first}); give one of them`);
    offset = first;
  }
  return {
    task: intParam(q, 'task', 0, 0, MAX_PG_INT),
    attempt: intParam(q, 'attempt', 1, 1, MAX_PG_INT),
    offset,
    follow,
    since: sinceRaw === null || sinceRaw === '' ? null : intParam(q, 'since', 0, 0, MAX_PG_INT),
    rank,
    offsets,
  };
}
