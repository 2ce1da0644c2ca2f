/**
 * Log text → coloured spans, safely. Log bytes are whatever a job printed: they may hold HTML,
 * ANSI colour codes (SGR), and escape sequences a terminal would act on (OSC window titles and
 * hyperlinks, cursor movement, DCS…). The dashboard renders the result as React text nodes
 * inside spans — NEVER as HTML — so nothing printed by a job becomes markup or runs.
 *
 * SGR colour codes are parsed by `anser` (JSON mode, class names); every other escape sequence
 * and control character is removed first (shown as nothing, never executed). Browser-safe.
 *
 * Contrast: the 16 colours as text are themed to read on the log background (app/globals.css
 * `--ansi-*`); a span with a background gets `ansi-on-bg`, which draws it with a terminal's
 * palette (`--ansi-term-*`), and text without its own colour in the colour that reads on that
 * background — computed here for a 256-colour or true-colour background (WCAG contrast).
 */
import Anser from 'anser';

/** One run of text with one style. `text` is plain text (never HTML). */
export interface AnsiSpan {
  text: string;
  /** Space-separated CSS classes (`ansi-red-fg`, `ansi-bold`…); absent when unstyled. */
  className?: string;
  /** Inline colours for 256-colour and true-colour codes, as `rgb(r, g, b)`. */
  style?: { color?: string; backgroundColor?: string };
}

/**
 * Escape sequences and control characters that are NOT SGR colour codes:
 * - OSC `ESC ] … (BEL | ESC \)` (window titles, hyperlinks), also unterminated up to the end;
 * - DCS / SOS / PM / APC `ESC P|X|^|_ … ESC \`, also unterminated;
 * - charset designations `ESC ( B` and other two/three-byte escapes (`ESC 7`, `ESC c`, `ESC =`);
 * - 8-bit C1 controls U+0080–U+009F (U+009B is an 8-bit CSI, U+009D an 8-bit OSC);
 * - C0 controls except TAB and ESC (ESC that starts a CSI is left for anser).
 */
const OSC_LIKE = /\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\|$)/g;
const C1_STRING = /[\x90\x98\x9d\x9e\x9f][\s\S]*?(?:\x07|\x9c|\x1b\\|$)/g;
const C1_CSI = /\x9b[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g;
const ESC_OTHER = /\x1b(?:[ #%()*+\-./][\x20-\x7e]?|[^[])/g;
const LONE_ESC = /\x1b(?!\[)|\x1b$/g;
const CONTROLS = /[\x00-\x08\x0a-\x1a\x1c-\x1f\x7f\x80-\x9f]/g;

/**
 * Removes every escape sequence except CSI (`ESC [ … final`) and every control character but
 * TAB, leaving text anser can colour. `\r` and `\n` are removed too: the log buffer already split
 * lines and applied carriage returns.
 */
export function stripNonSgr(text: string): string {
  if (!/[\x00-\x08\x0a-\x1f\x7f-\x9f]/.test(text)) return text;
  return text.replace(OSC_LIKE, '').replace(C1_STRING, '').replace(C1_CSI, '').replace(ESC_OTHER, '').replace(LONE_ESC, '').replace(CONTROLS, '');
}

/** CSI sequences (colour or otherwise), for plain-text views such as search. */
const CSI = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g;

/** The text a reader sees: every escape sequence and control character removed. */
export function ansiToPlain(text: string): string {
  if (!/[\x00-\x08\x0a-\x1f\x7f-\x9f]/.test(text)) return text;
  return stripNonSgr(text).replace(CSI, '').replace(/\x1b/g, '');
}

/**
 * The xterm 256-colour palette entry `n` (16–255) as `rgb(r, g, b)`: a 6×6×6 cube (16–231) and
 * a 24-step grey ramp (232–255). 0–15 are themed by CSS classes instead.
 */
export function xtermColor(n: number): string {
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v}, ${v}, ${v})`;
  }
  const i = n - 16;
  const level = (x: number) => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${level(Math.floor(i / 36))}, ${level(Math.floor(i / 6) % 6)}, ${level(i % 6)})`;
}

/** WCAG relative luminance of an sRGB colour (0–255 channels). */
export function luminance(r: number, g: number, b: number): number {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG contrast ratio of two luminances (1–21). */
export function contrastRatio(l1: number, l2: number): number {
  return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
}

/** Black or white, whichever reads better on `rgb(r, g, b)` (null for anything else). */
export function readableOn(css: string): string | null {
  const m = /^rgb\((\d{1,3}), (\d{1,3}), (\d{1,3})\)$/.exec(css);
  if (!m) return null;
  const l = luminance(Number(m[1]), Number(m[2]), Number(m[3]));
  return contrastRatio(l, 0) >= contrastRatio(l, 1) ? 'rgb(0, 0, 0)' : 'rgb(255, 255, 255)';
}

/** Maps one anser colour (class name, palette class, or true colour) to a class or a style. */
function colour(value: string | null, truecolor: string | null, kind: 'fg' | 'bg', classes: string[], style: NonNullable<AnsiSpan['style']>): void {
  if (!value) return;
  const prop = kind === 'fg' ? 'color' : 'backgroundColor';
  if (value === 'ansi-truecolor') {
    if (truecolor && /^\d{1,3}, \d{1,3}, \d{1,3}$/.test(truecolor)) style[prop] = `rgb(${truecolor})`;
    return;
  }
  const palette = /^ansi-palette-(\d{1,3})$/.exec(value);
  if (palette) {
    const n = Number(palette[1]);
    if (n >= 16 && n <= 255) style[prop] = xtermColor(n);
    return;
  }
  if (/^ansi-(?:bright-)?(?:black|red|green|yellow|blue|magenta|cyan|white)$/.test(value)) classes.push(`${value}-${kind}`);
}

/**
 * Parses one log line into styled spans. Only SGR codes change the style (colours 8/16/256/true,
 * bold, dim, italic, underline, strikethrough, reverse, hidden); every other escape sequence and
 * control character is dropped. Each line starts unstyled (a colour left open on the previous
 * line does not carry over — like most CI log viewers). The output holds plain strings only.
 */
export function ansiToSpans(line: string): AnsiSpan[] {
  const clean = stripNonSgr(line);
  if (!clean.includes('\x1b')) return clean ? [{ text: clean }] : [];
  const entries = Anser.ansiToJson(clean, { use_classes: true, remove_empty: true });
  const spans: AnsiSpan[] = [];
  for (const e of entries) {
    // anser leaves a stray ESC of a truncated CSI in the content; never show control bytes.
    const text = e.content.replace(/\x1b/g, '');
    if (!text) continue;
    const classes: string[] = [];
    const style: NonNullable<AnsiSpan['style']> = {};
    colour(e.fg, e.fg_truecolor, 'fg', classes, style);
    colour(e.bg, e.bg_truecolor, 'bg', classes, style);
    for (const d of e.decorations) if (/^[a-z]+$/.test(d)) classes.push(`ansi-${d}`);
    if (e.bg) {
      classes.push('ansi-on-bg');
      // Text without a colour of its own on a 256-/true-colour background: the readable one.
      if (!e.fg && style.backgroundColor) style.color = readableOn(style.backgroundColor) ?? undefined;
    }
    const span: AnsiSpan = { text };
    if (classes.length) span.className = classes.join(' ');
    if (style.color || style.backgroundColor) span.style = style;
    const prev = spans[spans.length - 1];
    if (prev && prev.className === span.className && !prev.style && !span.style) prev.text += text;
    else spans.push(span);
  }
  return spans;
}
