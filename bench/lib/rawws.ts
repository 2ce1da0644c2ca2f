/**
 * A minimal WebSocket client for the log-throughput measure: a plain TCP socket, the HTTP
 * upgrade by hand, and a streaming frame parser that never copies a log payload — it reads each
 * binary frame's 16-byte log header (to check offsets are contiguous) and counts the rest. So the
 * bench's own CPU stays small next to the server's on a 2-core machine, and the rate measured is
 * the server's. (The `ws` client costs about as much CPU as the server sends with; the measure
 * reports it too, for comparison.) JSON text frames are parsed as usual.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { LOG_HEADER_BYTES } from '../../lib/logs/protocol';
import type { StreamMessage } from '../../lib/api/types';
import type { BenchServer } from './server';
import { nowMs } from './util';

/** What a raw stream received. */
export interface RawStreamResult {
  logBytes: number;
  frames: number;
  /** Wall ms of the `end` message (0 if none). */
  endAt: number;
  closeCode: number | null;
  problems: string[];
  messages: number;
}

/**
 * Opens `/ws/jobs/:id?<query>`, reads until the server closes, and resolves with the counts.
 * @throws never: failures are in `problems`.
 */
export function rawJobStream(s: Pick<BenchServer, 'url' | 'token'>, jobId: number, query: string, onMessage?: (m: StreamMessage, t: number) => void): Promise<RawStreamResult> {
  const url = new URL(s.url);
  const res: RawStreamResult = { logBytes: 0, frames: 0, endAt: 0, closeCode: null, problems: [], messages: 0 };
  return new Promise((resolve) => {
    const sock = net.connect({ host: url.hostname, port: Number(url.port) });
    sock.setNoDelay(true);
    const key = randomBytes(16).toString('base64');
    sock.on('connect', () => {
      sock.write(
        `GET /ws/jobs/${jobId}${query ? `?${query}` : ''} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${s.token}\r\n\r\n`,
      );
    });
    let handshake = true;
    let head = Buffer.alloc(0);
    // Frame parser state.
    let pending: Buffer | null = null; // bytes of an incomplete frame header
    let remaining = 0; // payload bytes left in the current frame
    let opcode = 0;
    let curFin = true;
    let hdrNeed = 0; // log header bytes still to collect (binary frames)
    let hdr = Buffer.alloc(LOG_HEADER_BYTES);
    let textParts: Buffer[] = [];
    let textOpcode = 0;
    const next = new Map<string, number>();
    let curKey = '';
    let curOffset = 0;

    const finishText = () => {
      const text = Buffer.concat(textParts).toString('utf8');
      textParts = [];
      if (textOpcode === 8) {
        res.closeCode = text.length >= 2 ? Buffer.from(text, 'utf8').readUInt16BE(0) : 1005;
        sock.destroy();
        return;
      }
      if (textOpcode !== 1) return;
      try {
        const m = JSON.parse(text) as StreamMessage;
        res.messages++;
        const t = nowMs();
        if (m.type === 'end') res.endAt = t;
        onMessage?.(m, t);
      } catch {
        if (res.problems.length < 10) res.problems.push(`not JSON: ${text.slice(0, 80)}`);
      }
    };

    const onHeaderDone = () => {
      const task = hdr.readUInt16BE(2);
      const attempt = hdr.readUInt32BE(4);
      const offset = Number(hdr.readBigUInt64BE(8));
      curKey = `${task}/${attempt}`;
      curOffset = offset;
      const want = next.get(curKey);
      if (want !== undefined && want !== offset && res.problems.length < 10) res.problems.push(`task ${task} attempt ${attempt}: expected offset ${want}, got ${offset}`);
    };

    const parse = (buf: Buffer) => {
      let i = 0;
      while (i < buf.length) {
        if (remaining === 0 && hdrNeed === 0) {
          // A frame header: 2 bytes + extended length (0, 2 or 8 bytes); server frames are unmasked.
          let b = buf.subarray(i);
          if (pending) b = Buffer.concat([pending, b]);
          if (b.length < 2) {
            pending = Buffer.from(b);
            return;
          }
          const fin = (b[0] & 0x80) !== 0;
          const op = b[0] & 0x0f;
          let len = b[1] & 0x7f;
          let h = 2;
          if (len === 126) {
            if (b.length < 4) return void (pending = Buffer.from(b));
            len = b.readUInt16BE(2);
            h = 4;
          } else if (len === 127) {
            if (b.length < 10) return void (pending = Buffer.from(b));
            len = Number(b.readBigUInt64BE(2));
            h = 10;
          }
          const consumedFromBuf = h - (pending ? pending.length : 0);
          pending = null;
          i += consumedFromBuf;
          if (op !== 0) opcode = op;
          res.frames++;
          if (opcode === 2) {
            if (op === 2) {
              hdrNeed = LOG_HEADER_BYTES;
              hdr = Buffer.alloc(LOG_HEADER_BYTES);
              remaining = len;
            } else remaining = len; // continuation of a binary frame: just bytes
          } else {
            textOpcode = opcode;
            remaining = len;
          }
          curFin = fin;
          if (remaining === 0 && opcode !== 2) {
            if (fin) finishText();
            continue;
          }
          continue;
        }
        const take = Math.min(remaining, buf.length - i);
        if (opcode === 2) {
          let t = take;
          if (hdrNeed > 0) {
            const h = Math.min(hdrNeed, t);
            buf.copy(hdr, LOG_HEADER_BYTES - hdrNeed, i, i + h);
            hdrNeed -= h;
            t -= h;
            if (hdrNeed === 0) onHeaderDone();
          }
          res.logBytes += t;
          curOffset += t;
          if (curKey) next.set(curKey, curOffset);
        } else {
          textParts.push(buf.subarray(i, i + take));
        }
        i += take;
        remaining -= take;
        if (remaining === 0 && opcode !== 2 && curFin) finishText();
      }
    };

    sock.on('data', (d: Buffer) => {
      if (handshake) {
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = head.subarray(0, head.indexOf('\r\n')).toString();
        if (!/^HTTP\/1\.1 101/.test(status)) {
          res.problems.push(`upgrade refused: ${status}`);
          sock.destroy();
          return;
        }
        handshake = false;
        const rest = head.subarray(end + 4);
        head = Buffer.alloc(0);
        if (rest.length) parse(rest);
        return;
      }
      parse(d);
    });
    sock.on('error', (err) => res.problems.length < 10 && res.problems.push(err.message));
    sock.on('close', () => resolve(res));
  });
}
