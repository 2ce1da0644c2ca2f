import type { LogFollower } from '../logs/reader';
import { LOG_HEADER_BYTES, logHeaderBytes, writeLogHeader } from '../logs/protocol';
import type { StreamLimits } from './config';
import type { FramePool, LogSendBudget } from './send-memory';
import type { StreamSocket } from './stream-socket';

/**
 * Sending one slice of an attempt's log as binary frames: sized reads into pooled frame
 * buffers, a bounded read-ahead, and backpressure before every frame. The state machine
 * (JobStream) decides which attempt and when; this decides how the bytes travel, so the memory
 * rule of a stream (one frame, plus one read-ahead for a lone sender, over the high-water mark)
 * is visible in one function (docs/design.md, "Logs and streams").
 */

/** The attempt whose log is sent: its task and number (frame header) and where reading stops. */
export interface PumpAttempt {
  task: number;
  number: number;
  /** Stop reading at this offset (bytes; follow=0: the size when opened), else Infinity. */
  limit: number;
  /** The rank of a multi-node attempt whose log this is (frame kind FRAME_RANK_LOG); absent: 0. */
  rank?: number;
}

/** What pumpLog sends through and with. */
export interface PumpIo {
  socket: StreamSocket;
  limits: Pick<StreamLimits, 'chunkBytes' | 'sliceBytes'>;
  frames: FramePool;
  budget?: LogSendBudget;
}

type Chunk = { buf: Buffer; at: number; want: number; n: number };

/**
 * Sends `f`'s log from its offset: up to limits.sliceBytes, or to the end of the file (or
 * `o.limit`). `pos.offset` is advanced past every frame queued on the socket (the resume point).
 * @returns 'eof' at the end, 'more' when the slice was used up, 'closed' when the socket closed.
 */
export async function pumpLog(f: LogFollower, o: PumpAttempt, pos: { offset: number }, io: PumpIo): Promise<'eof' | 'more' | 'closed'> {
  const { socket, frames, budget } = io;
  const { sliceBytes } = io.limits;
  // A rank-K frame's header is longer: it carries that much less log, so every full frame has
  // the pool's size (lib/logs/protocol.ts LOG_CHUNK_BYTES).
  const hdr = logHeaderBytes(o.rank);
  const chunkBytes = io.limits.chunkBytes - (hdr - LOG_HEADER_BYTES);
  // Bounded read-ahead: the next chunk's disk read is started before the current chunk is handed
  // to the socket, so reading overlaps sending (measured: one awaited read per frame left the
  // server half idle). At most ONE chunk (chunkBytes) is read ahead — it is started only when
  // this slice will send it, and only while this stream is the one sending — and every frame
  // still waits for backpressure() first, so the high-water mark and hard cap hold as before,
  // plus one chunk of memory for that lone stream.
  const read = async (want: number): Promise<Chunk> => {
    const buf = frames.take(hdr + want);
    const at = f.offset;
    const n = await f.readInto(buf, hdr, want);
    return { buf, at, want, n };
  };
  let ahead: Promise<Chunk> | null = null;
  let sent = 0;
  let avail = 0;
  budget?.enter();
  try {
    while (sent < sliceBytes) {
      if (!(await socket.backpressure())) return 'closed';
      let cur: Chunk;
      if (ahead) {
        cur = await ahead;
        ahead = null;
      } else {
        if (avail <= 0) {
          // Sized reads: a buffer is only as big as the bytes there are (idle followers stay small).
          avail = Math.min(await f.available(), o.limit - f.offset);
          if (socket.closed) return 'closed';
          if (avail <= 0) return 'eof';
        }
        cur = await read(Math.min(chunkBytes, avail));
      }
      if (socket.closed) return 'closed';
      const { buf, at, want, n } = cur;
      if (n === 0) return 'eof';
      avail -= n;
      sent += n;
      // Start the next read (only when this slice will send it) before this frame goes out.
      // Only while this is the one stream sending: with several, their reads and sends overlap
      // each other already, and a read-ahead each would hold one more frame per client.
      if (sent < sliceBytes && avail > 0 && (budget?.senders ?? 1) <= 1) ahead = read(Math.min(chunkBytes, avail));
      writeLogHeader(buf, o.task, o.number, at, o.rank);
      // Once written out (or the socket failed) nothing refers to the buffer any more.
      socket.sendFrame(n === want ? buf : buf.subarray(0, hdr + n), () => frames.give(buf));
      pos.offset = at + n;
    }
  } finally {
    budget?.leave();
    // A read-ahead never sent (the stream closed or failed): its result or error goes nowhere.
    (ahead as Promise<Chunk> | null)?.catch(() => undefined);
  }
  return 'more';
}
