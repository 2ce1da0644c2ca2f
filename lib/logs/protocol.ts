/**
 * The job stream protocol, spoken on `/ws/jobs/:id` by the server, the CLI and the dashboard
 * (browser-safe: no Node imports). DESIGN.md §6: log bytes travel as BINARY frames with a small
 * header (measured 6× faster than JSON text frames); everything else is a JSON TEXT frame, on
 * the same socket, in causal order: an attempt's `attempt` start message, then its log chunks,
 * then its end message (sent only after the log was read to the end the attempt left).
 *
 * Connect: `/ws/jobs/:id?task=T&attempt=A&offset=O&follow=1`
 * - task/attempt/offset: where to start (default task 0, attempt 1, offset 0); a client that
 *   dropped resumes with the last position it received + bytes — nothing lost, nothing twice.
 * - follow=0: send what exists now and `end` at once (even for a task that has not started).
 * - tasks/attempts before the start position are skipped; later ones are streamed in order.
 */
import type { AttemptStatus, JobStatus, TaskStatus } from '../jobs/status';
import type { JobSummary } from '../api/types';

/** Binary log frame header: version u8, kind u8, task u16, attempt u32, offset u64 (big-endian). */
export const LOG_HEADER_BYTES = 16;
export const PROTOCOL_VERSION = 1;
/** Kind byte of a log chunk frame. */
export const FRAME_LOG = 1;

/** A decoded log chunk: `data` holds bytes [offset, offset + data.length) of the attempt's log. */
export interface LogChunk {
  task: number;
  attempt: number;
  offset: number;
  data: Uint8Array;
}

/** Encodes a log chunk as one binary frame (header + bytes). */
export function encodeLogChunk(c: LogChunk): Uint8Array {
  const out = new Uint8Array(LOG_HEADER_BYTES + c.data.length);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint8(0, PROTOCOL_VERSION);
  v.setUint8(1, FRAME_LOG);
  v.setUint16(2, c.task);
  v.setUint32(4, c.attempt);
  v.setBigUint64(8, BigInt(c.offset));
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

/** JSON control messages, server → client. */
export type StreamMessage =
  /** First message: the job as it is now. */
  | { type: 'hello'; protocol: number; job: JobSummary }
  /** The job's status changed. */
  | { type: 'job'; status: JobStatus; reason: string | null; at: string }
  /** A task's status changed (e.g. STARTING, SUCCEEDED, CANCELLED). */
  | { type: 'task'; task: number; name: string | null; status: TaskStatus; reason: string | null; at: string }
  /**
   * An attempt started (`phase: 'start'`, before its first log chunk) or ended (`phase: 'end'`,
   * after its last log chunk, with exitCode). `restart` is present on the start of a restart:
   * `{ n, max }` = restart n of max allowed ("restarting (attempt 2 of 2)").
   */
  | {
      type: 'attempt';
      phase: 'start' | 'end';
      task: number;
      attempt: number;
      status: AttemptStatus;
      cause: 'first' | 'restart' | 'recovery';
      exitCode: number | null;
      reason: string | null;
      at: string;
      restart?: { n: number; max: number };
    }
  /** Everything up to the requested point was sent and the job is terminal (or follow=0). */
  | { type: 'end'; status: JobStatus; follow: boolean }
  /** The server is dropping this client (too slow, shutting down); resume from `resume`. */
  | { type: 'error'; code: string; message: string; resume?: { task: number; attempt: number; offset: number } };

/** Messages on the list endpoint `/ws/jobs` (dashboard jobs page). */
export type ListMessage =
  | { type: 'created'; job: JobSummary }
  | { type: 'updated'; job: JobSummary }
  | { type: 'deleted'; jobId: number };

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
} as const;
