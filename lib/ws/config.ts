import { setting, type Env } from '../config';
import { LOG_CHUNK_BYTES } from '../logs/protocol';

/**
 * Limits and timings of the WebSocket streams. Defaults suit production; each of the
 * JOBDECK_WS_* variables (their meaning, bounds and defaults: lib/config.ts, and the README's
 * table) can be set from the environment (tests shorten the stall timeout), or the limits given
 * per hub (in-process tests). The high-water mark, the shared total of the streams sending log
 * bytes at once (LogSendBudget in lib/ws/send-memory.ts), the hard cap, the stall and close
 * timeouts, the log and status poll intervals and the heartbeat; the rest are fixed.
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

/** Reads the limits from the environment. @throws ConfigError naming the variable when malformed. */
export function loadStreamLimits(env: Env = process.env): StreamLimits {
  return {
    highWater: setting('JOBDECK_WS_HIGH_WATER', env),
    totalHighWater: setting('JOBDECK_WS_TOTAL_HIGH_WATER', env),
    hardCap: setting('JOBDECK_WS_HARD_CAP', env),
    stallMs: setting('JOBDECK_WS_STALL_MS', env),
    closeGraceMs: setting('JOBDECK_WS_CLOSE_GRACE_MS', env),
    chunkBytes: LOG_CHUNK_BYTES,
    sliceBytes: 4 * 1024 * 1024,
    logPollMs: setting('JOBDECK_WS_LOG_POLL_MS', env),
    eventPollMs: setting('JOBDECK_WS_EVENT_POLL_MS', env),
    heartbeatMs: setting('JOBDECK_WS_HEARTBEAT_MS', env),
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
