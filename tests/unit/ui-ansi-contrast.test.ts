/**
 * ANSI colours meet WCAG AA (4.5:1) in the log viewer, computed from the palette in the
 * dashboard's CSS (app/globals.css tokens, app/styles/log-viewer.css classes — the one source
 * the page uses) with the WCAG 2 contrast formula:
 * - each of the 16 colours as text on the log background, light and dark theme;
 * - every foreground/background pair that a terminal shows legibly — xterm's default palette
 *   gives it 4.5:1 or more, e.g. `ESC[41;97m` (bright white on red) — in the palette used on
 *   coloured backgrounds;
 * - text without its own colour on each of the 16 backgrounds (the `--ansi-on` colour);
 * and lib/ui/ansi.ts marks spans with a background so that this palette applies.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ansiToSpans, contrastRatio, luminance, readableOn } from '../../lib/ui/ansi';
import { ROOT } from '../helpers/server';

const NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white', 'bright-black', 'bright-red', 'bright-green', 'bright-yellow', 'bright-blue', 'bright-magenta', 'bright-cyan', 'bright-white'] as const;
/** xterm's default 16 colours (its XTerm-col.ad / 256colres defaults): the reference terminal. */
const XTERM = ['#000000', '#cd0000', '#00cd00', '#cdcd00', '#0000ee', '#cd00cd', '#00cdcd', '#e5e5e5', '#7f7f7f', '#ff0000', '#00ff00', '#ffff00', '#5c5cff', '#ff00ff', '#00ffff', '#ffffff'];
const AA = 4.5;

const css = ['globals.css', 'styles/log-viewer.css'].map((f) => readFileSync(path.join(ROOT, 'app', f), 'utf8')).join('\n');
const hexLum = (hex: string) => {
  const h = hex.length === 4 ? `#${[...hex.slice(1)].map((c) => c + c).join('')}` : hex;
  return luminance(parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16));
};
const ratio = (a: string, b: string) => contrastRatio(hexLum(a), hexLum(b));

/** `--name: light-dark(#light, #dark)` → [light, dark]. */
function themed(name: string): [string, string] {
  const m = new RegExp(`--${name}:\\s*light-dark\\((#[0-9a-f]{3,6}),\\s*(#[0-9a-f]{3,6})\\)`, 'i').exec(css);
  if (!m) throw new Error(`the CSS has no --${name}: light-dark(…)`);
  return [m[1], m[2]];
}
function plain(name: string): string {
  const m = new RegExp(`--${name}:\\s*(#[0-9a-f]{3,6});`, 'i').exec(css);
  if (!m) throw new Error(`the CSS has no --${name}`);
  return m[1];
}
function onColour(name: string): string {
  const m = new RegExp(`\\.ansi-${name}-bg \\{[^}]*--ansi-on:\\s*(#[0-9a-f]{3,6})`, 'i').exec(css);
  if (!m) throw new Error(`the CSS: .ansi-${name}-bg sets no --ansi-on`);
  return m[1];
}

describe('ANSI colour contrast (WCAG AA, both themes)', () => {
  const [lightBg, darkBg] = themed('log-bg');

  it.each(['light', 'dark'] as const)('the 16 colours as text on the %s log background: ≥ 4.5:1', (theme) => {
    const bg = theme === 'light' ? lightBg : darkBg;
    const low = NAMES.map((n) => ({ n, r: ratio(themed(`ansi-${n}`)[theme === 'light' ? 0 : 1], bg) })).filter((x) => x.r < AA);
    expect(low.map((x) => `${x.n} ${x.r.toFixed(2)}:1`)).toEqual([]);
  });

  it('every pair xterm shows legibly stays legible on a coloured background (e.g. ESC[41;97m)', () => {
    const term = NAMES.map((n) => plain(`ansi-term-${n}`));
    const pairs: string[] = [];
    const low: string[] = [];
    for (let f = 0; f < 16; f++) {
      for (let b = 0; b < 16; b++) {
        if (f === b || ratio(XTERM[f], XTERM[b]) < AA) continue;
        pairs.push(`${NAMES[f]} on ${NAMES[b]}`);
        const r = ratio(term[f], term[b]);
        if (r < AA) low.push(`${NAMES[f]} on ${NAMES[b]}: ${r.toFixed(2)}:1 (xterm ${ratio(XTERM[f], XTERM[b]).toFixed(2)}:1)`);
      }
    }
    expect(pairs.length).toBeGreaterThan(40);
    expect(pairs).toContain('bright-white on red');
    expect(low).toEqual([]);
    expect(ratio(plain('ansi-term-bright-white'), plain('ansi-term-red'))).toBeGreaterThanOrEqual(AA);
  });

  it('text without a colour of its own reads on each of the 16 backgrounds', () => {
    const low = NAMES.map((n) => ({ n, r: ratio(onColour(n), plain(`ansi-term-${n}`)) })).filter((x) => x.r < AA);
    expect(low.map((x) => `${x.n} ${x.r.toFixed(2)}:1`)).toEqual([]);
  });

  it('spans with a background are marked for that palette; a 256-colour background gets readable text', () => {
    const [err] = ansiToSpans('\x1b[41;97m ERR \x1b[0m');
    expect(err).toEqual({ text: ' ERR ', className: 'ansi-bright-white-fg ansi-red-bg ansi-on-bg' });
    const [dark] = ansiToSpans('\x1b[48;5;17m on navy');
    expect(dark.style).toEqual({ backgroundColor: 'rgb(0, 0, 95)', color: 'rgb(255, 255, 255)' });
    const [light] = ansiToSpans('\x1b[48;2;250;240;200m on cream');
    expect(light.style?.color).toBe('rgb(0, 0, 0)');
    expect(readableOn('not a colour')).toBeNull();
    // An explicit colour is kept.
    expect(ansiToSpans('\x1b[48;5;17;38;2;1;2;3mx')[0].style?.color).toBe('rgb(1, 2, 3)');
  });
});
