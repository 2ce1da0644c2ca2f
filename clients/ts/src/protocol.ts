/**
 * The job stream as a client reads it (`/ws/jobs/:id`; the server's side and the full protocol:
 * lib/logs/protocol.ts and docs/design.md §8). Log bytes come as binary frames with a header;
 * everything else as JSON text frames, in causal order. A test checks this decoder against the
 * server's encoder and these message types against the server's.
 */
import type { AttemptStatus, JobStatus, JobSummary, TaskStatus } from './api.gen';

/** A decoded log chunk: `data` holds bytes [offset, offset + data.length) of the attempt's log (of `rank`, in a multi-node attempt). */
export interface LogChunk {
  task: number;
  attempt: number;
  offset: number;
  data: Uint8Array;
  /** The rank (node) of a multi-node attempt's log; absent or 0: rank 0. */
  rank?: number;
}

/** Binary frame header: version u8, kind u8, task u16, attempt u32, offset u64 (big-endian); kind 2 adds rank u32. */
const HEADER_BYTES = 16;
const RANK_HEADER_BYTES = 20;

/** Decodes a binary frame. @throws Error for a frame shorter than its header or of an unknown version/kind. */
export function decodeLogChunk(frame: ArrayBuffer | Uint8Array): LogChunk {
  const bytes = frame instanceof Uint8Array ? frame : new Uint8Array(frame);
  if (bytes.byteLength < HEADER_BYTES) throw new Error(`log frame too short: ${bytes.byteLength} bytes`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kind = v.getUint8(1);
  if (v.getUint8(0) !== 1 || (kind !== 1 && kind !== 2)) throw new Error(`unknown log frame version ${v.getUint8(0)} kind ${kind}`);
  const head = { task: v.getUint16(2), attempt: v.getUint32(4), offset: Number(v.getBigUint64(8)) };
  if (kind === 1) return { ...head, data: bytes.subarray(HEADER_BYTES) };
  if (bytes.byteLength < RANK_HEADER_BYTES) throw new Error(`log frame too short: ${bytes.byteLength} bytes`);
  return { ...head, rank: v.getUint32(16), data: bytes.subarray(RANK_HEADER_BYTES) };
}

/** JSON control messages, server → client (lib/api/types.ts StreamMessage). */
export type StreamMessage =
  /** First message: the job as it is now. */
  | { type: 'hello'; protocol: number; job: JobSummary }
  /** The job's status changed. `eventId`: its JobEvent id. */
  | { type: 'job'; status: JobStatus; reason: string | null; at: string; eventId?: number }
  /** A task's status changed. */
  | { type: 'task'; task: number; name: string | null; status: TaskStatus; reason: string | null; at: string; eventId?: number }
  /** An attempt started (before its first chunk) or ended (after its last, with exitCode); `restart`: restart n of max. */
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
      eventId?: number;
      /** Ranks of a multi-node attempt; absent for one node. */
      nodes?: number;
    }
  /** Line times: [end offset, unix ms] entries of an attempt's time index (of `rank`). */
  | { type: 'times'; task: number; attempt: number; rank?: number; entries: [number, number][] }
  /** Everything up to the requested point was sent and the job is terminal (or follow=0). */
  | { type: 'end'; status: JobStatus; follow: boolean }
  /** The server drops this client (code: bad_request, not_found, deleted, slow_consumer, going_away, …); `resume`: where to reconnect from. */
  | { type: 'error'; code: string; message: string; resume?: { task: number; attempt: number; offset: number; since?: number; offsets?: number[] } };

/** Where a stream (re)starts: task index, attempt number (1-based), byte offset (and each rank's, in a multi-node attempt). */
export interface Position {
  task: number;
  attempt: number;
  offset: number;
  /** Each rank's offset (rank 0's is also `offset`), when more than one rank came. */
  offsets?: number[];
}

/** WebSocket close codes of the job stream (lib/logs/protocol.ts CLOSE). */
export const CLOSE = { DONE: 1000, GOING_AWAY: 1001, BAD_REQUEST: 4400, UNAUTHORIZED: 4401, NOT_FOUND: 4404, SLOW_CONSUMER: 4408, LOGS_REMOVED: 4410 } as const;
