import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_CSI_BYTES, MAX_STRING_BYTES, TerminalSafeFilter, terminalSafe } from '../../lib/cli/terminal-safe';

const enc = new TextEncoder();
const dec = new TextDecoder();
const E = '\u001b';
const bytes = (s: string) => enc.encode(s);
/** Raw bytes from a latin-1 string (each char one byte: for invalid UTF-8 and raw C1 bytes). */
const raw = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const safe = (s: string) => terminalSafe(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Feeds `input` in pieces cut at `cuts` (sorted offsets) and answers the joined output. */
function piecewise(input: Uint8Array, cuts: number[]): Uint8Array {
  const f = new TerminalSafeFilter();
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const c of [...cuts, input.length]) {
    parts.push(f.write(input.subarray(at, c)));
    at = c;
  }
  parts.push(f.end());
  return Buffer.concat(parts);
}

/** Whole-input output (one write). */
function whole(input: Uint8Array): Uint8Array {
  const f = new TerminalSafeFilter();
  return Buffer.concat([f.write(input), f.end()]);
}

/** What a safe output may contain: no ESC but in `ESC [ digits;: m`, no C0 but TAB LF CR, no C1 (C2 80–9F, raw 80–9F after no lead). */
function assertSafe(out: Uint8Array): void {
  const s = Buffer.from(out).toString('latin1');
  const noSgr = s.replace(/\u001b\[[0-9;:]*m/g, '');
  expect(noSgr, JSON.stringify(s)).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
  expect(s.includes('\u00c2\u009b') || /\u00c2[\u0080-\u009f]/.test(s), JSON.stringify(s)).toBe(false);
}

describe('terminalSafe — what passes', () => {
  it('text, UTF-8 (also characters whose bytes are 0x80–0x9F), TAB, LF, CR', () => {
    const text = 'plain “quoted” — café 日本語 🚀 Ā €\tcol\r\nnext line\rover\n';
    expect(safe(text)).toBe(text);
    // U+201C “ is E2 80 9C, U+20AC € is E2 82 AC, U+0100 Ā is C4 80: continuation bytes in 0x80–0x9F.
    expect(hex(whole(bytes('“€Ā')))).toBe(hex(bytes('“€Ā')));
  });

  it('SGR colours and styles, in every form', () => {
    for (const sgr of [`${E}[31m`, `${E}[0m`, `${E}[m`, `${E}[1;4;38;5;196m`, `${E}[38;2;255;0;0m`, `${E}[38:2::255:0:0m`, `${E}[0;1m`]) {
      expect(safe(`a${sgr}b`)).toBe(`a${sgr}b${sgr === `${E}[0m` || sgr === `${E}[m` ? '' : `${E}[0m`}`);
    }
  });

  it('end() resets colours a log left on, and only then', () => {
    expect(safe(`${E}[31mred`)).toBe(`${E}[31mred${E}[0m`);
    expect(safe(`${E}[31mred${E}[0m`)).toBe(`${E}[31mred${E}[0m`);
    expect(safe('plain')).toBe('plain');
  });

  it('invalid UTF-8 that is not a control passes (the terminal shows U+FFFD)', () => {
    expect(hex(whole(raw('a\u00ffb\u00c0c\u00a0d')))).toBe(hex(raw('a\u00ffb\u00c0c\u00a0d')));
    // A lone C2 at the very end is not a control: it is given back by end().
    expect(hex(whole(raw('x\u00c2')))).toBe(hex(raw('x\u00c2')));
    expect(hex(whole(raw('x\u00c2y')))).toBe(hex(raw('x\u00c2y')));
  });
});

describe('terminalSafe — what is removed', () => {
  it('OSC: window title (BEL or ST), hyperlinks (the link text stays), clipboard, colour palette', () => {
    expect(safe(`a${E}]0;pwned${'\u0007'}b`)).toBe('ab');
    expect(safe(`a${E}]2;pwned${E}\\b`)).toBe('ab');
    expect(safe(`${E}]8;;http://example.invalid${E}\\link${E}]8;;${E}\\`)).toBe('link');
    expect(safe(`${E}]52;c;cm0gLXJmIH4=\u0007after`)).toBe('after');
    expect(safe(`${E}]4;1;rgb:ff/00/00${E}\\x`)).toBe('x');
  });

  it('CSI other than plain SGR: cursor, erase, scroll, modes, reports, keyboard modes, cursor style', () => {
    for (const seq of ['[2J', '[H', '[10;20H', '[1A', '[2K', '[3S', '[?1049h', '[?25l', '[?2004h', '[6n', '[c', '[>4;2m', '[?1m', '[0 q', '[1;2r', '[4h', '[18t', "[!p"]) {
      expect(safe(`a${E}${seq}b`), seq).toBe('ab');
    }
  });

  it('DCS, SOS, PM, APC strings, ended by ST, BEL, CAN or SUB', () => {
    expect(safe(`a${E}P1$r0m${E}\\b`)).toBe('ab');
    expect(safe(`a${E}Xsos${E}\\b`)).toBe('ab');
    expect(safe(`a${E}^pm${E}\\b`)).toBe('ab');
    expect(safe(`a${E}_Gf=100;AAAA${E}\\b`)).toBe('ab'); // kitty graphics
    expect(safe(`a${E}]0;t\u0018b`)).toBe('ab');
    expect(safe(`a${E}]0;t\u001ab`)).toBe('ab');
  });

  it('two- and three-byte escapes: reset, save/restore cursor, charsets, screen fill, keypad, index', () => {
    for (const seq of ['c', '7', '8', '(0', ')B', '#8', '=', '>', 'M', 'D', 'E', 'N', 'O', ' F', '%G']) {
      expect(safe(`a${E}${seq}b`), JSON.stringify(seq)).toBe('ab');
    }
  });

  it('C1 controls as UTF-8 (C2 80–9F), with their sequences, and stray raw 0x80–0x9F', () => {
    // C1 CSI + "2J", C1 OSC + title + BEL, C1 DCS + payload + C1 ST, NEL, IND, lone ST.
    expect(hex(whole(raw('a\u00c2\u009b2Jb')))).toBe(hex(raw('ab')));
    expect(hex(whole(raw('a\u00c2\u009b31mb')))).toBe(hex(raw('ab'))); // 8-bit SGR is not kept either
    expect(hex(whole(raw('a\u00c2\u009d0;t\u0007b')))).toBe(hex(raw('ab')));
    expect(hex(whole(raw('a\u00c2\u0090x\u00c2\u009cb')))).toBe(hex(raw('ab')));
    expect(hex(whole(raw('a\u00c2\u0085b\u00c2\u0084c\u00c2\u009cd')))).toBe(hex(raw('abcd')));
    expect(hex(whole(raw('a\u009b2Jb\u0085c')))).toBe(hex(raw('a2Jbc')));
    // An OSC ended by the 7-bit ST, the C1 ST, or the text's own characters inside it.
    expect(hex(whole(raw(`${E}]0;\u00e2\u0080\u009ct\u00c2\u009cok`)))).toBe(hex(raw('ok')));
  });

  it('C0 controls other than TAB, LF, CR: BEL, BS, SO/SI, VT, FF, NUL', () => {
    expect(safe('a\u0007b\u0008c\u000ed\u000fe\u000bf\u000cg\u0000h')).toBe('abcdefgh');
  });

  it('CAN/SUB abort a CSI; ESC inside a sequence starts a new one; controls inside a CSI abort it', () => {
    expect(safe(`a${E}[2\u0018J`)).toBe('aJ');
    expect(safe(`a${E}[2${E}[31mx`)).toBe(`a${E}[31mx${E}[0m`);
    expect(safe(`a${E}]0;title${E}[32mx`)).toBe(`a${E}[32mx${E}[0m`);
    expect(safe(`a${E}[2\nJ`)).toBe('a\nJ');
    expect(safe(`a${E}${E}[1Ab`)).toBe('ab');
  });

  it('an unterminated string is given up after MAX_STRING_BYTES (its rest shows as text); a huge CSI is dropped whole', () => {
    // "0;" + the x's are MAX_STRING_BYTES of payload: swallowed; the next byte gives the string up.
    expect(safe(`${E}]0;${'x'.repeat(MAX_STRING_BYTES - 2)}TAIL\n`)).toBe('TAIL\n');
    expect(safe(`${E}]0;${'x'.repeat(MAX_STRING_BYTES - 2)}\u0007after`)).toBe('after');
    const long = `${E}[${'1;'.repeat(MAX_CSI_BYTES)}2J`;
    expect(safe(`a${long}b`)).toBe('ab');
    const longSgr = `${E}[${'1;'.repeat(MAX_CSI_BYTES)}m`;
    expect(safe(`a${longSgr}b`)).toBe('ab');
  });

  it('examples/hostile-output.yaml: every byte its run writes, made safe', () => {
    // The bytes the example's `run` prints (printf/echo as bash runs them).
    const out =
      '<script>document.title="pwned"</script><img src=x onerror=alert(1)>\n' +
      `${E}]0;title-change\u0007${E}]8;;http://example.invalid${E}\\link${E}]8;;${E}\\\n` +
      `${E}[31mred${E}[0m ${E}[1mbold${E}[0m \r carriage-return overwrite\n` +
      'no newline at the end';
    expect(readFileSync('examples/hostile-output.yaml', 'utf8')).toContain("printf '\\033]0;title-change\\007");
    expect(safe(out)).toBe(
      '<script>document.title="pwned"</script><img src=x onerror=alert(1)>\n' +
        'link\n' +
        `${E}[31mred${E}[0m ${E}[1mbold${E}[0m \r carriage-return overwrite\n` +
        'no newline at the end',
    );
  });
});

describe('TerminalSafeFilter — streaming', () => {
  const corpus: Uint8Array[] = [
    bytes(`${E}]0;title-change\u0007${E}]8;;http://example.invalid${E}\\link${E}]8;;${E}\\\n`),
    bytes(`a${E}[1;38;5;196mRED${E}[0m${E}[2J${E}[?1049h“q”${E}P1$r${E}\\z`),
    raw(`x\u00c2\u009b2Jy\u00c2\u009d0;t\u00c2\u009cz\u00e2\u0080\u009c\u00c3\u00a9${E}(0${E}#8w\u009b`),
    bytes(`é${E}[2\u0018J${E}]0;a${E}[32mg${E}${E}c🚀\r\n`),
    bytes(readFileSync('examples/hostile-output.yaml', 'utf8')),
  ];

  it('a sequence split at every byte boundary (one cut, and every pair of cuts) gives the one-shot output', () => {
    for (const input of corpus) {
      const expected = hex(whole(input));
      for (let i = 0; i <= input.length; i++) expect(hex(piecewise(input, [i])), `cut at ${i}`).toBe(expected);
      if (input.length <= 120) {
        for (let i = 0; i <= input.length; i++) for (let j = i; j <= input.length; j++) expect(hex(piecewise(input, [i, j])), `cuts ${i},${j}`).toBe(expected);
      }
      expect(hex(piecewise(input, Array.from({ length: input.length }, (_, k) => k)))).toBe(expected);
    }
  });

  it('fuzz: random bytes from an escape-heavy alphabet are always made safe, split anywhere or not', () => {
    // A small deterministic PRNG (mulberry32), so a failure replays.
    let seed = 0x5eed;
    const rnd = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const alphabet = [0x1b, 0x5b, 0x5d, 0x50, 0x5f, 0x5c, 0x07, 0x18, 0x3b, 0x3f, 0x30, 0x31, 0x6d, 0x4a, 0x48, 0x0a, 0x0d, 0x09, 0x08, 0x00, 0xc2, 0x9b, 0x9c, 0x9d, 0x85, 0xe2, 0x80, 0x61, 0x20, 0x28, 0x23, 0xff];
    for (let k = 0; k < 3000; k++) {
      const len = 1 + Math.floor(rnd() * 40);
      const input = Uint8Array.from({ length: len }, () => alphabet[Math.floor(rnd() * alphabet.length)]);
      const out = whole(input);
      assertSafe(out);
      const cut = Math.floor(rnd() * (len + 1));
      expect(hex(piecewise(input, [cut])), hex(input)).toBe(hex(out));
    }
  });

  it('end() drops an unfinished sequence and makes the filter ready for the next stream', () => {
    const f = new TerminalSafeFilter();
    expect(dec.decode(f.write(bytes(`ok${E}]0;unfinished`)))).toBe('ok');
    expect(f.end().length).toBe(0);
    expect(dec.decode(f.write(bytes('next')))).toBe('next');
    expect(dec.decode(f.write(bytes(`${E}[3`)))).toBe('');
    expect(dec.decode(f.write(bytes('1mred')))).toBe(`${E}[31mred`);
    expect(dec.decode(f.end())).toBe(`${E}[0m`);
  });
});
