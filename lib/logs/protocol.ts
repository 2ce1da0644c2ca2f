/**
 * The job stream protocol, spoken on `/ws/jobs/:id` by the server, the CLI and the dashboard
 * (browser-safe: no Node imports; docs/design.md §8). Log bytes travel as BINARY frames with a
 * small header, never encoded into JSON; everything else is a JSON TEXT frame, on
 * the same socket, in causal order: an attempt's `attempt` start message, then its log chunks,
 * then its end message (sent only after the log was read to the end the attempt left).
 *
 * Connect: `/ws/jobs/:id?task=T&attempt=A&offset=O&follow=1&since=E`
 * - task/attempt/offset: where to start (default task 0, attempt 1, offset 0); a client that
 *   dropped resumes with the last position it received + bytes — nothing lost, nothing twice.
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
 * Positions: after a log chunk, the client's position is (task, attempt, offset + data.length);
 * after an `attempt` end message it is (task, attempt + 1, 0) — a later task's attempts come
 * after any position in an earlier task.
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
export const PROTOCOL_VERSION = 1;
/** Kind byte of a log chunk frame. */
export const FRAME_LOG = 1;
/** Most log bytes one binary frame carries (the header comes on top). */
export const LOG_CHUNK_BYTES = 256 * 1024;

/** A decoded log chunk: `data` holds bytes [offset, offset + data.length) of the attempt's log. */
export interface LogChunk {
  task: number;
  attempt: number;
  offset: number;
  data: Uint8Array;
}

/**
 * Writes a log frame header into the first LOG_HEADER_BYTES bytes of `target` (the server
 * reads file bytes right after it, so a chunk is sent without a copy).
 */
export function writeLogHeader(target: Uint8Array, task: number, attempt: number, offset: number): void {
  const v = new DataView(target.buffer, target.byteOffset, LOG_HEADER_BYTES);
  v.setUint8(0, PROTOCOL_VERSION);
  v.setUint8(1, FRAME_LOG);
  v.setUint16(2, task);
  v.setUint32(4, attempt);
  v.setBigUint64(8, BigInt(offset));
}

/** Encodes a log chunk as one binary frame (header + bytes). */
export function encodeLogChunk(c: LogChunk): Uint8Array {
  const out = new Uint8Array(LOG_HEADER_BYTES + c.data.length);
  writeLogHeader(out, c.task, c.attempt, c.offset);
  out.set(c.data, LOG_HEADER_BYTES);
  return out;
}

/** Writes only the 16-byte header for a chunk (the server sends header + file bytes together). */
export function encodeLogHeader(task: number, attempt: number, offset: number): Uint8Array {
  return encodeLogChunk({ task, attempt, offset, data: new Uint8Array(0) });
}

/**
 * Decodes a binary frame. @throws Error when the frame is shorter than the header, or of an
 * unknown version/kind.
 */
export function decodeLogChunk(frame: ArrayBuffer | Uint8Array): LogChunk {
  const bytes = frame instanceof Uint8Array ? frame : new Uint8Array(frame);
  if (bytes.byteLength < LOG_HEADER_BYTES) throw new Error(`log frame too short: ${bytes.byteLength} bytes`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint8(0) !== PROTOCOL_VERSION || v.getUint8(1) !== FRAME_LOG) throw new Error(`unknown log frame version ${v.getUint8(0)} kind ${v.getUint8(1)}`);
  return { task: v.getUint16(2), attempt: v.getUint32(4), offset: Number(v.getBigUint64(8)), data: bytes.subarray(LOG_HEADER_BYTES) };
}

/**
 * `code` values of `error` messages: bad_request (4400), not_found (4404), deleted (the job was
 * deleted while streaming; 4404), slow_consumer (4408, with `resume`), going_away (server
 * stopping; 1001, with `resume`), log_truncated (an attempt's log shrank under the reader; 1011),
 * internal (1011).
 */
export const STREAM_ERROR_CODES = ['bad_request', 'not_found', 'deleted', 'slow_consumer', 'going_away', 'log_truncated', 'internal'] as const;
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
} as const;
