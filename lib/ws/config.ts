import { LOG_CHUNK_BYTES } from '../logs/protocol';

/**
 * Limits and timings of the WebSocket streams. Defaults suit production; each can be set from
 * the environment (tests shorten the stall timeout) or per hub (in-process tests).
 *
 * - `JOBDECK_WS_HIGH_WATER` (bytes, default 1 MiB): stop reading a log while a socket holds more
 *   than this unsent; resume as it drains.
 * - `JOBDECK_WS_TOTAL_HIGH_WATER` (bytes, default 16 MiB): the job streams sending log bytes at
 *   the same moment share this: each stops at this ÷ their number when that is lower than
 *   JOBDECK_WS_HIGH_WATER (never below one frame), so 50 clients replaying a log hold about as
 *   much server memory as 16 (LogSendBudget in lib/ws/send-memory.ts).
 * - `JOBDECK_WS_HARD_CAP` (bytes, default 16 MiB): a socket holding more is cut at once.
 * - `JOBDECK_WS_STALL_MS` (default 30 000): a socket above the high-water mark that makes no
 *   progress this long is cut (error `slow_consumer` with a resume position, close 4408).
 * - `JOBDECK_WS_CLOSE_GRACE_MS` (default 10 000): how long a closing socket may take to flush
 *   and answer the close before it is destroyed.
 * - `JOBDECK_WS_LOG_POLL_MS` (default 250): log poll interval when fs.watch is silent.
 * - `JOBDECK_WS_EVENT_POLL_MS` (default 2 000): status poll interval when the store bus is
 *   silent (a safety net; the bus wakes streams at once).
 * - `JOBDECK_WS_HEARTBEAT_MS` (default 30 000): ping interval; a peer that missed a pong is dropped.
 */
export interface StreamLimits {
  highWater: number;
  /** Shared by the job streams sending log bytes at once (bytes); see the list above. */
  totalHighWater: number;
  hardCap: number;
  stallMs: number;
  closeGraceMs: number;
  /** Log bytes per binary frame (≤ LOG_CHUNK_BYTES). */
  chunkBytes: number;
  /** Log bytes a stream sends before it looks at status changes again. */
  sliceBytes: number;
  logPollMs: number;
  eventPollMs: number;
  heartbeatMs: number;
  /** List stream: at most one message per job per this many ms. */
  listCoalesceMs: number;
  /** List stream: a client holding more than this unsent is closed with 4408. */
  listCap: number;
  /** Late-committed JobEvents are still picked up when at most this old (ms). */
  eventLagMs: number;
}

function num(env: NodeJS.ProcessEnv, name: string, def: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name}: expected a number ≥ ${min}, got "${raw}"`);
  return n;
}

/** Reads the limits from the environment. @throws Error naming the variable when malformed. */
export function loadStreamLimits(env: NodeJS.ProcessEnv = process.env): StreamLimits {
  return {
    highWater: num(env, 'JOBDECK_WS_HIGH_WATER', 1024 * 1024, 1),
    totalHighWater: num(env, 'JOBDECK_WS_TOTAL_HIGH_WATER', 16 * 1024 * 1024, 1),
    hardCap: num(env, 'JOBDECK_WS_HARD_CAP', 16 * 1024 * 1024, 1),
    stallMs: num(env, 'JOBDECK_WS_STALL_MS', 30_000, 1),
    closeGraceMs: num(env, 'JOBDECK_WS_CLOSE_GRACE_MS', 10_000, 1),
    chunkBytes: LOG_CHUNK_BYTES,
    sliceBytes: 4 * 1024 * 1024,
    logPollMs: num(env, 'JOBDECK_WS_LOG_POLL_MS', 250, 1),
    eventPollMs: num(env, 'JOBDECK_WS_EVENT_POLL_MS', 2_000, 1),
    heartbeatMs: num(env, 'JOBDECK_WS_HEARTBEAT_MS', 30_000, 10),
    listCoalesceMs: 100,
    listCap: 4 * 1024 * 1024,
    eventLagMs: 10_000,
  };
}

/**
 * True when a client frame is the one message clients may send on jobdeck's sockets:
 * the text frame `{"type":"ping"}` (answered with a pong). Anything else is a bad request.
 */
export function isPingMessage(data: unknown, isBinary: boolean): boolean {
  if (isBinary) return false;
  let msg: unknown;
  try {
    msg = JSON.parse(String(data));
  } catch {
    return false;
  }
  return !!msg && typeof msg === 'object' && (msg as { type?: unknown }).type === 'ping' && Object.keys(msg).length === 1;
}
