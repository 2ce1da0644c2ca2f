/**
 * The job stream protocol, spoken on `/ws/jobs/:id` by the server, the CLI and the dashboard
 * (browser-safe: no Node imports; docs/design.md §8). Log bytes travel as BINARY frames with a
 * small header, never encoded into JSON; everything else is a JSON TEXT frame, on
 * the same socket, in causal order: an attempt's `attempt` start message, then its log chunks,
 * then its end message (sent only after the log was read to the end the attempt left).
 *
 * Connect: `/ws/jobs/:id?task=T&attempt=A&offset=O&follow=1&since=E[&rank=K][&offsets=O0,O1,…]`
 * - task/attempt/offset: where to start (default task 0, attempt 1, offset 0); a client that
 *   dropped resumes with the last position it received + bytes — nothing lost, nothing twice.
 * - Multi-node attempts (a task's `num_nodes` > 1) have one log per rank (node), streamed
 *   interleaved, each in order; a rank-0 chunk is the frame it always was, a rank-K chunk a frame
 *   of kind FRAME_RANK_LOG that names K. `rank=K`: only rank K's log of each attempt (one-node
 *   attempts have rank 0 only); `offset` is then rank K's. `offsets=O0,O1,…`: the start offset of
 *   each rank of the start attempt (instead of `offset`, which is rank 0's); the `attempt` start
 *   message tells how many ranks an attempt has (`nodes`, present when > 1).
 * - follow=0: send what exists now and `end` at once (even for a task that has not started).
 * - tasks/attempts before the start position are skipped; later ones are streamed in order.
 *   The start attempt's `attempt` start message is always sent (also on a resume), so a client
 *   that resumes mid-attempt sees one start message for that attempt again (offset > 0 tells).
 * - since=E (optional): the `eventId` of the last status message the client received; status
 *   messages with `eventId <= E` are not sent again. Without it, a stream that starts past the
 *   beginning skips job status messages older than the first status change at/after the start
 *   position (`hello` carries the current status), and may repeat a few status messages on a
 *   resume. Log bytes are exact either way.
 * - Defaults: follow=1. Bad values (not a non-negative integer, attempt < 1, offset past the
 *   end of a finished log) → `error` code `bad_request` + close 4400; unknown job or task →
 *   `error` code `not_found` + close 4404; the job deleted while streaming → `error` code
 *   `deleted` + close 4404.
 *
 * Order on the socket: `hello`; then, in the order they happened (JobEvent id order): `job` and
 * `task` status messages, and for each attempt from the start position `attempt` start → binary
 * log chunks (≤ 256 KiB each, contiguous offsets) → `attempt` end (only once the log was read to
 * the size the finished attempt left); finally `end` and close 1000. A client sends nothing,
 * except optionally `{"type":"ping"}` (answered with PongMessage `{"type":"pong"}`); anything else closes the
 * socket with 4400. Frames larger than 4 KiB from a client close it with 1009.
 *
 * Positions: after a log chunk, the client's position is (task, attempt, offset + data.length)
 * — per rank, in a multi-node attempt (resume with `offsets`); after an `attempt` end message it
 * is (task, attempt + 1, 0) for every rank — a later task's attempts come after any position in
 * an earlier task.
 *
 * Line times: a `times` message carries entries of an attempt's time index (per rank), each
 * [end, ms]: the log's bytes before `end` — after the previous entry's end — were first written at
 * unix time `ms` (ms resolution, ~100 ms granularity; docs/design.md §8 "Line times"). A line's
 * time is that of the entry covering its first byte (timeAt). Entries come in order, before the
 * chunks they cover or — while the log grows — shortly after them; a resume from an offset gets
 * the entries from there. An attempt without an index (older than indexes) gets none: its lines
 * have no time. Clients ignore message types they do not know, so older clients are unaffected.
 *
 * Backpressure: the server stops reading a log while the socket holds more than its high-water
 * mark unsent (1 MiB, less while many streams send at once: lib/ws/config.ts); a client that
 * makes no progress for 30 s (or holds more than 16 MiB) gets `error` code
 * `slow_consumer` with `resume` and close 4408. The list endpoint `/ws/jobs` closes a slow
 * client with 4408 too (it refetches the list and reconnects).
 *
 * The JSON messages' shapes (StreamMessage, ListMessage, ClientMessage, PongMessage) are in
 * lib/api/types.ts, beside the job summaries they carry.
 */

/** Binary log frame header: version u8, kind u8, task u16, attempt u32, offset u64 (big-endian). */
export const LOG_HEADER_BYTES = 16;
/** Header of a FRAME_RANK_LOG frame: the 16 bytes above, then rank u32 (big-endian). */
export const LOG_RANK_HEADER_BYTES = 20;
export const PROTOCOL_VERSION = 1;
/** Kind byte of a log chunk frame (rank 0: every one-node attempt, the head of a multi-node one). */
export const FRAME_LOG = 1;
/** Kind byte of a log chunk frame of rank K ≥ 1 of a multi-node attempt. */
export const FRAME_RANK_LOG = 2;
/**
 * Most bytes one binary frame carries, header included, is this plus LOG_HEADER_BYTES: a rank-0
 * frame carries up to LOG_CHUNK_BYTES of log, a rank-K frame 4 bytes less (its longer header), so
 * every full frame is the same size (the server reuses its buffers).
 */
export const LOG_CHUNK_BYTES = 256 * 1024;

/** A decoded log chunk: `data` holds bytes [offset, offset + data.length) of the attempt's log. */
export interface LogChunk {
  task: number;
  attempt: number;
  offset: number;
  data: Uint8Array;
  /** The rank (node) whose log this is, in a multi-node attempt; absent or 0: rank 0. */
  rank?: number;
}

/** The header size of a chunk of `rank` (LOG_HEADER_BYTES for rank 0, else LOG_RANK_HEADER_BYTES). */
export function logHeaderBytes(rank = 0): number {
  return rank > 0 ? LOG_RANK_HEADER_BYTES : LOG_HEADER_BYTES;
}

/**
 * Writes a log frame header into the first logHeaderBytes(rank) bytes of `target` (the server
 * reads file bytes right after it, so a chunk is sent without a copy).
 */
export function writeLogHeader(target: Uint8Array, task: number, attempt: number, offset: number, rank = 0): void {
  const v = new DataView(target.buffer, target.byteOffset, logHeaderBytes(rank));
  v.setUint8(0, PROTOCOL_VERSION);
  v.setUint8(1, rank > 0 ? FRAME_RANK_LOG : FRAME_LOG);
  v.setUint16(2, task);
  v.setUint32(4, attempt);
  v.setBigUint64(8, BigInt(offset));
  if (rank > 0) v.setUint32(16, rank);
}

/** Encodes a log chunk as one binary frame (header + bytes). */
export function encodeLogChunk(c: LogChunk): Uint8Array {
  const hdr = logHeaderBytes(c.rank);
  const out = new Uint8Array(hdr + c.data.length);
  writeLogHeader(out, c.task, c.attempt, c.offset, c.rank);
  out.set(c.data, hdr);
  return out;
}

/** Writes only the header for a chunk (the server sends header + file bytes together). */
export function encodeLogHeader(task: number, attempt: number, offset: number, rank = 0): Uint8Array {
  return encodeLogChunk({ task, attempt, offset, data: new Uint8Array(0), rank });
}

/**
 * Decodes a binary frame (`rank` is set only for a FRAME_RANK_LOG frame). @throws Error when the
 * frame is shorter than its header, or of an unknown version/kind.
 */
export function decodeLogChunk(frame: ArrayBuffer | Uint8Array): LogChunk {
  const bytes = frame instanceof Uint8Array ? frame : new Uint8Array(frame);
  if (bytes.byteLength < LOG_HEADER_BYTES) throw new Error(`log frame too short: ${bytes.byteLength} bytes`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kind = v.getUint8(1);
  if (v.getUint8(0) !== PROTOCOL_VERSION || (kind !== FRAME_LOG && kind !== FRAME_RANK_LOG)) throw new Error(`unknown log frame version ${v.getUint8(0)} kind ${kind}`);
  const head = { task: v.getUint16(2), attempt: v.getUint32(4), offset: Number(v.getBigUint64(8)) };
  if (kind === FRAME_LOG) return { ...head, data: bytes.subarray(LOG_HEADER_BYTES) };
  if (bytes.byteLength < LOG_RANK_HEADER_BYTES) throw new Error(`log frame too short: ${bytes.byteLength} bytes`);
  return { ...head, rank: v.getUint32(16), data: bytes.subarray(LOG_RANK_HEADER_BYTES) };
}

/**
 * `code` values of `error` messages: bad_request (4400), not_found (4404), deleted (the job was
 * deleted while streaming; 4404), slow_consumer (4408, with `resume`), going_away (server
 * stopping; 1001, with `resume`), log_truncated (an attempt's log shrank under the reader; 1011),
 * logs_removed (the retention policy removed the job's logs, before or while streaming; 4410,
 * the message is {@link logsRemovedText}), internal (1011).
 */
export const STREAM_ERROR_CODES = ['bad_request', 'not_found', 'deleted', 'slow_consumer', 'going_away', 'log_truncated', 'internal', 'logs_removed'] as const;
export type StreamErrorCode = (typeof STREAM_ERROR_CODES)[number];

/** WebSocket close codes used by jobdeck (4000–4999 are application codes). */
export const CLOSE = {
  /** Job stream finished normally (after `end`). */
  DONE: 1000,
  /** Bad request: malformed query or message. */
  BAD_REQUEST: 4400,
  UNAUTHORIZED: 4401,
  NOT_FOUND: 4404,
  /** The client did not keep up; it was told where to resume. */
  SLOW_CONSUMER: 4408,
  /** Server shutting down. */
  GOING_AWAY: 1001,
  /** A client frame over the size limit (sent by the ws library). */
  TOO_BIG: 1009,
  /** The server failed (e.g. a log shrank under the reader); see the `error` message. */
  INTERNAL_ERROR: 1011,
  /** The retention policy removed the job's logs (error `logs_removed`): nothing more to stream. */
  LOGS_REMOVED: 4410,
} as const;

/**
 * What the dashboard, the CLI and the API say in place of a log the retention policy removed
 * (docs/design.md "Retention"): `logs removed on 2026-12-02 15:47 UTC by the retention policy`.
 */
export function logsRemovedText(at: Date | string): string {
  const iso = new Date(at).toISOString();
  return `logs removed on ${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC by the retention policy`;
}

/** One time index entry: [end offset (bytes), unix time (ms)] (see "Line times" above). */
export type TimeEntry = [number, number];

/**
 * The time of the byte at `offset` of a log whose index is `entries` (ordered by end): the ms of
 * the first entry whose end is past `offset`, or null when no entry covers it (yet, or ever).
 */
export function timeAt(entries: readonly TimeEntry[], offset: number): number | null {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid][0] > offset) hi = mid;
    else lo = mid + 1;
  }
  return lo < entries.length ? entries[lo][1] : null;
}
