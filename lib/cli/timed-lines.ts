/**
 * `jobdeck logs --timestamps`: each log line prefixed with the time its first byte was written
 * (`2026-12-02T07:01:02.345Z `, ISO 8601 UTC with ms), from the log's time index the job stream
 * sends (`times` messages; lib/logs/protocol.ts "Line times"). While a log grows, its index may
 * arrive just after the bytes it covers: a line whose start is not covered yet waits (its bytes
 * are held) until the index covers it, the attempt ends, or it waited HOLD_MS (expire(), from the
 * follow's one-second watchdog) — then it gets a dash instead of a time, as do lines of attempts
 * without an index. Pure; one instance per log (an attempt, or one rank of it).
 */
import { timeAt, type TimeEntry } from '../logs/protocol';

const NL = 0x0a;
/** How long a line waits for its time before it goes out with a dash (ms). */
export const HOLD_MS = 3000;
/** Most bytes held for a time before they go out with a dash (a flood outruns no memory). */
export const HOLD_BYTES = 1 << 20;
/** The prefix of a line with no time: as wide as an ISO time. */
export const NO_TIME = `${'-'.padEnd(24, ' ')} `;

/** The prefix of a line written at unix time `ms` (0 or null: unknown). */
export function timePrefix(ms: number | null): string {
  return ms ? `${new Date(ms).toISOString()} ` : NO_TIME;
}

/** One log's lines with their times (see the module comment). */
export class TimedLines {
  private readonly times: TimeEntry[] = [];
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  /** Offset of the first held byte (or of the next byte, when nothing is held). */
  private offset: number;
  private lineStart = true;
  private heldSince = 0;

  /** `offset`: where the first byte this gets sits in the log (a resume starts mid-log). */
  constructor(offset = 0, startsLine = true) {
    this.offset = offset;
    this.lineStart = startsLine;
  }

  /** Takes the log's next bytes (contiguous with the last); answers what may go out now. */
  write(data: Uint8Array, now: number): Uint8Array {
    if (data.length === 0) return data;
    if (this.heldBytes === 0) this.heldSince = now;
    this.held.push(data.slice());
    this.heldBytes += data.length;
    return this.release(this.heldBytes > HOLD_BYTES);
  }

  /** Takes index entries (in order; repeats ignored); answers the lines they release. */
  addTimes(entries: readonly TimeEntry[]): Uint8Array {
    for (const e of entries) {
      const last = this.times.at(-1);
      if (!last || e[0] > last[0]) this.times.push(e);
    }
    return this.release(false);
  }

  /** Lines held longer than HOLD_MS go out with what is known (a dash for the uncovered). */
  expire(now: number): Uint8Array {
    return this.heldBytes > 0 && now - this.heldSince >= HOLD_MS ? this.release(true) : new Uint8Array(0);
  }

  /** The log ended: everything held goes out. */
  end(): Uint8Array {
    return this.release(true);
  }

  private covered(offset: number): boolean {
    const last = this.times.at(-1);
    return last !== undefined && last[0] > offset;
  }

  private release(force: boolean): Uint8Array {
    if (this.heldBytes === 0) return new Uint8Array(0);
    const data = this.held.length === 1 ? this.held[0] : concat(this.held);
    const out: Uint8Array[] = [];
    const enc = new TextEncoder();
    let i = 0;
    while (i < data.length) {
      if (this.lineStart) {
        if (!force && !this.covered(this.offset + i)) break;
        out.push(enc.encode(timePrefix(timeAt(this.times, this.offset + i))));
        this.lineStart = false;
      }
      const nl = data.indexOf(NL, i);
      const end = nl === -1 ? data.length : nl + 1;
      out.push(data.subarray(i, end));
      i = end;
      if (nl !== -1) this.lineStart = true;
    }
    this.offset += i;
    this.held = i < data.length ? [data.subarray(i)] : [];
    this.heldBytes = data.length - i;
    return concat(out);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
