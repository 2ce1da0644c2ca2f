/**
 * A streaming filter that makes a job's log bytes safe to write to a terminal: a log must show
 * its text and colours, never drive the terminal (retitle the window, plant OSC 8 hyperlinks,
 * write the clipboard with OSC 52, move the cursor, clear the screen, switch character sets,
 * change modes, reset the terminal). Used by `jobdeck logs` / `launch` when stdout is a TTY
 * (lib/cli/follow.ts); redirected output stays byte-exact.
 *
 * What passes: text (UTF-8, also invalid UTF-8 bytes, which terminals show as U+FFFD), TAB, LF,
 * CR, and SGR sequences `ESC [ <digits ; :> m` (colours and styles — ECMA-48 §8.3.117).
 * What is removed (ECMA-48 / xterm ctlseqs):
 * - every other escape sequence: CSI sequences other than plain SGR (cursor movement, erase,
 *   scroll regions, `?` private modes, `>`-prefixed SGR-like keyboard modes…), the string
 *   sequences OSC (`ESC ]`), DCS (`ESC P`), SOS (`ESC X`), PM (`ESC ^`), APC (`ESC _`) with their
 *   payload up to BEL or ST (`ESC \`), and two-/three-byte escapes (`ESC c` reset, `ESC 7`,
 *   `ESC ( 0` charset designation, `ESC # 8` screen fill…);
 * - C1 controls U+0080–U+009F, as UTF-8 (`C2 80`…`C2 9F`, which UTF-8 terminals obey: `C2 9B` is
 *   a CSI, `C2 9D` an OSC — their sequences are removed too) and as stray raw bytes 0x80–0x9F
 *   (not part of a UTF-8 character);
 * - C0 controls other than TAB, LF and CR (BEL, BS, SO/SI charset shifts, VT, FF, NUL…).
 *
 * Streaming: a sequence may be split anywhere between chunks; the filter holds at most the bytes
 * of one unfinished CSI (≤ MAX_CSI_BYTES) or one UTF-8 lead byte, so its output is exactly the
 * output for the whole input at once. Like a terminal, CAN/SUB abort a sequence and ESC inside one
 * starts a new one. A string sequence longer than MAX_STRING_BYTES is given up (its rest shows
 * as text) so an unterminated OSC cannot swallow a whole log.
 */

/** Most bytes of one CSI sequence the filter holds; a longer one is dropped whole. */
export const MAX_CSI_BYTES = 256;
/** Most payload bytes of one string sequence (OSC/DCS/SOS/PM/APC) before it is given up. */
export const MAX_STRING_BYTES = 64 * 1024;

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;

const enum S {
  /** Text. */
  Ground,
  /** After ESC. */
  Esc,
  /** After ESC and intermediate bytes (0x20–0x2F): waiting for the final byte. */
  EscIntermediate,
  /** Inside a CSI sequence (7-bit `ESC [`, or the C1 CSI when `csiKeep` is false). */
  Csi,
  /** Inside a string sequence's payload. */
  Str,
  /** Inside a string, after ESC (`ESC \` ends it; anything else ends it and starts anew). */
  StrEsc,
  /** Inside a string, after a C2 byte (C2 9C is the C1 ST). */
  StrC2,
  /** In text, after a C2 byte: C2 80–9F is a C1 control, C2 A0–BF a character. */
  GroundC2,
}

/** The bytes of `ESC [ 0 m` (reset colours and styles). */
const SGR_RESET = Uint8Array.of(ESC, 0x5b, 0x30, 0x6d);

/**
 * Streaming terminal-safe filter (see the module comment). One instance per byte stream (one
 * attempt's log): `write()` each chunk, `end()` at the end of the stream.
 */
export class TerminalSafeFilter {
  private state: S = S.Ground;
  /** UTF-8 continuation bytes still expected in text. */
  private cont = 0;
  /** The CSI being read (including `ESC [`), while it may still be an SGR to keep. */
  private csi: number[] = [];
  /** False once the CSI being read cannot be a plain SGR (it is dropped at its end). */
  private csiKeep = false;
  private strBytes = 0;
  /** An SGR other than a plain reset was passed and no reset followed it. */
  private styled = false;

  /**
   * Filters one chunk. Answers the bytes to write now (possibly empty); bytes of an unfinished
   * sequence at the end of the chunk are held for the next call.
   */
  write(chunk: Uint8Array): Uint8Array {
    // Each input byte yields at most one output byte, plus a held CSI and a held C2 from before.
    const out = new Uint8Array(chunk.length + this.csi.length + 1);
    let n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      switch (this.state) {
        case S.Ground:
          n = this.ground(b, out, n);
          break;
        case S.GroundC2:
          this.state = S.Ground;
          if (b >= 0x80 && b <= 0x9f) this.c1(b);
          else {
            out[n++] = 0xc2;
            if (b >= 0xa0 && b <= 0xbf) out[n++] = b;
            else n = this.ground(b, out, n);
          }
          break;
        case S.Esc:
          n = this.afterEsc(b, out, n);
          break;
        case S.EscIntermediate:
          if (b >= 0x20 && b <= 0x2f) break;
          this.state = S.Ground;
          if (b >= 0x30 && b <= 0x7e) break; // the final byte: the whole sequence is dropped
          n = this.ground(b, out, n);
          break;
        case S.Csi:
          n = this.inCsi(b, out, n);
          break;
        case S.Str:
          n = this.inStr(b, out, n);
          break;
        case S.StrEsc:
          if (b === 0x5c) this.state = S.Ground; // ST
          else n = this.afterEsc(b, out, n); // the string ends; this ESC starts a new sequence
          break;
        case S.StrC2:
          this.state = S.Str;
          if (b === 0x9c) this.state = S.Ground; // C1 ST
          else if (this.strOverflow()) {
            // Given up: the held C2 and this byte are text.
            n = this.ground(0xc2, out, n);
            n = this.write1(b, out, n);
          } else n = this.inStr(b, out, n);
          break;
      }
    }
    return out.subarray(0, n);
  }

  /** Handles one byte in the current state (for a byte that follows a state change mid-step). */
  private write1(b: number, out: Uint8Array, n: number): number {
    if (this.state === S.GroundC2) {
      this.state = S.Ground;
      if (b >= 0x80 && b <= 0x9f) {
        this.c1(b);
        return n;
      }
      out[n++] = 0xc2;
      if (b >= 0xa0 && b <= 0xbf) {
        out[n++] = b;
        return n;
      }
    }
    return this.ground(b, out, n);
  }

  /**
   * End of the stream: answers what is still owed — a held lone C2 byte (shown as text), and a
   * reset (`ESC [ 0 m`) when colours or styles the log set are still on, so they do not bleed
   * into what is printed next. An unfinished escape sequence is dropped. The filter is then
   * ready for a new stream.
   */
  end(): Uint8Array {
    const tail: number[] = [];
    if (this.state === S.GroundC2) tail.push(0xc2);
    if (this.styled) tail.push(...SGR_RESET);
    this.state = S.Ground;
    this.cont = 0;
    this.csi = [];
    this.csiKeep = false;
    this.strBytes = 0;
    this.styled = false;
    return Uint8Array.from(tail);
  }

  // ─── states ────────────────────────────────────────────────────────────────────────────────

  private ground(b: number, out: Uint8Array, n: number): number {
    if (b < 0x80) {
      this.cont = 0;
      if (b === ESC) this.state = S.Esc;
      else if (b >= 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) out[n++] = b;
      // other C0 controls are dropped
      return n;
    }
    if (b <= 0xbf) {
      // A continuation byte: part of a character, or stray.
      if (this.cont > 0) {
        this.cont--;
        out[n++] = b;
      } else if (b >= 0xa0) out[n++] = b; // stray, not a control: shown as U+FFFD
      // stray 0x80–0x9F: an 8-bit C1 control to a terminal that is not in UTF-8 mode: dropped
      return n;
    }
    if (b === 0xc2) {
      this.cont = 0;
      this.state = S.GroundC2;
      return n;
    }
    this.cont = b >= 0xc3 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
    out[n++] = b;
    return n;
  }

  /** A C1 control (second byte of C2 80–9F): dropped; CSI and the string introducers start their sequence. */
  private c1(b: number): void {
    if (b === 0x9b) this.startCsi(false);
    else if (b === 0x9d || b === 0x90 || b === 0x98 || b === 0x9e || b === 0x9f) this.startStr();
  }

  /** The byte after ESC (also an ESC that ended a string). */
  private afterEsc(b: number, out: Uint8Array, n: number): number {
    this.state = S.Ground;
    if (b === 0x5b) this.startCsi(true);
    else if (b === 0x5d || b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f) this.startStr();
    else if (b >= 0x20 && b <= 0x2f) this.state = S.EscIntermediate;
    else if (b === ESC) this.state = S.Esc; // ESC ESC: the first one is dropped
    else if (b < 0x20 || b >= 0x80) return this.ground(b, out, n); // ESC dropped; the byte stands alone
    // else ESC + a final byte (0x30–0x7E) or DEL: dropped
    return n;
  }

  private startCsi(keep: boolean): void {
    this.state = S.Csi;
    this.csiKeep = keep;
    this.csi = keep ? [ESC, 0x5b] : [];
  }

  private startStr(): void {
    this.state = S.Str;
    this.strBytes = 0;
  }

  /** Counts one payload byte; true when the string is too long and is given up (back to text). */
  private strOverflow(): boolean {
    if (++this.strBytes <= MAX_STRING_BYTES) return false;
    this.state = S.Ground;
    return true;
  }

  private inStr(b: number, out: Uint8Array, n: number): number {
    if (b === BEL || b === CAN || b === SUB) this.state = S.Ground;
    else if (b === ESC) this.state = S.StrEsc;
    else if (b === 0xc2) this.state = S.StrC2;
    else if (this.strOverflow()) return this.ground(b, out, n);
    return n;
  }

  private inCsi(b: number, out: Uint8Array, n: number): number {
    if (b >= 0x40 && b <= 0x7e) {
      // The final byte.
      this.state = S.Ground;
      if (this.csiKeep && b === 0x6d) {
        const params = String.fromCharCode(...this.csi.slice(2));
        for (const c of this.csi) out[n++] = c;
        out[n++] = b;
        this.styled = !(params === '' || /^0+$/.test(params));
      }
      this.csi = [];
      return n;
    }
    if (b >= 0x20 && b <= 0x3f) {
      // Parameter (0x30–0x3F) or intermediate (0x20–0x2F) byte. SGR has digits ; : only.
      if (!(b >= 0x30 && b <= 0x39) && b !== 0x3b && b !== 0x3a) this.csiKeep = false;
      if (this.csiKeep) {
        if (this.csi.length >= MAX_CSI_BYTES) {
          this.csiKeep = false;
          this.csi = [];
        } else this.csi.push(b);
      }
      return n;
    }
    // Anything else aborts the sequence (dropped) and is handled as text.
    this.state = S.Ground;
    this.csi = [];
    if (b === CAN || b === SUB) return n;
    return this.ground(b, out, n);
  }
}

/**
 * One-shot form: the terminal-safe text of a whole byte string or string (see TerminalSafeFilter),
 * e.g. for a job name or a reason read from the server before it goes to a terminal.
 */
export function terminalSafe(input: string): string;
export function terminalSafe(input: Uint8Array): Uint8Array;
export function terminalSafe(input: string | Uint8Array): string | Uint8Array {
  const f = new TerminalSafeFilter();
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const a = f.write(bytes);
  const b = f.end();
  const all = new Uint8Array(a.length + b.length);
  all.set(a);
  all.set(b, a.length);
  return typeof input === 'string' ? new TextDecoder().decode(all) : all;
}
