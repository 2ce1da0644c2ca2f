import { describe, expect, it } from 'vitest';
import { ansiToPlain, ansiToSpans, stripNonSgr, xtermColor } from '../../lib/ui/ansi';

const ESC = '\x1b';
const text = (spans: { text: string }[]) => spans.map((s) => s.text).join('');

describe('ansiToSpans', () => {
  it('plain text is one unstyled span', () => {
    expect(ansiToSpans('hello world')).toEqual([{ text: 'hello world' }]);
  });

  it('SGR colours and decorations become class names, codes disappear', () => {
    const spans = ansiToSpans(`${ESC}[31mred${ESC}[0m ${ESC}[1mbold${ESC}[0m plain`);
    expect(text(spans)).toBe('red bold plain');
    expect(spans[0]).toEqual({ text: 'red', className: 'ansi-red-fg' });
    expect(spans.find((s) => s.text === 'bold')?.className).toBe('ansi-bold');
    expect(spans[spans.length - 1].className).toBeUndefined();
  });

  it('bright, background, 256-colour and true-colour codes', () => {
    const spans = ansiToSpans(`${ESC}[92;44mA${ESC}[38;5;196mB${ESC}[38;2;10;20;30mC${ESC}[38;5;244mD`);
    expect(spans[0].className).toBe('ansi-bright-green-fg ansi-blue-bg ansi-on-bg');
    expect(spans.find((s) => s.text === 'B')?.style?.color).toBe(xtermColor(196));
    expect(spans.find((s) => s.text === 'C')?.style?.color).toBe('rgb(10, 20, 30)');
    expect(spans.find((s) => s.text === 'D')?.style?.color).toBe('rgb(128, 128, 128)');
  });

  it('HTML in log text stays text: no span ever carries markup', () => {
    const line = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`;
    const spans = ansiToSpans(line);
    expect(text(spans)).toBe(line);
    for (const s of spans) expect(Object.keys(s).sort()).toEqual(['text']);
  });

  it('OSC window titles and hyperlinks are removed, their visible text kept', () => {
    const line = `${ESC}]0;title-change\x07${ESC}]8;;http://example.invalid${ESC}\\link${ESC}]8;;${ESC}\\`;
    const spans = ansiToSpans(line);
    expect(text(spans)).toBe('link');
    expect(JSON.stringify(spans)).not.toContain('example.invalid');
    expect(JSON.stringify(spans)).not.toContain('title-change');
  });

  it('unterminated OSC, DCS, cursor movement, charset and C0/C1 controls never reach the text', () => {
    const line = `a${ESC}[2K${ESC}[1;1Hb${ESC}(Bc${ESC}7d\x07\x08\x00e\u009b31mf${ESC}P1;2|data${ESC}\\g${ESC}]2;never ends`;
    const out = text(ansiToSpans(line));
    expect(out).toBe('abcdef' + 'g');
    expect(out).not.toMatch(/[\x00-\x08\x0a-\x1f\x7f-\x9f]/);
  });

  it('a lone or truncated escape leaves no ESC byte behind', () => {
    expect(text(ansiToSpans(`x${ESC}`))).toBe('x');
    expect(text(ansiToSpans(`x${ESC}[31`))).not.toContain(ESC);
  });

  it('keeps tabs', () => {
    expect(text(ansiToSpans('a\tb'))).toBe('a\tb');
  });
});

describe('ansiToPlain / stripNonSgr', () => {
  it('plain text for search drops every escape', () => {
    expect(ansiToPlain(`${ESC}[32mepoch 1/30${ESC}[0m loss=0.99`)).toBe('epoch 1/30 loss=0.99');
  });
  it('stripNonSgr keeps CSI for anser, removes the rest', () => {
    expect(stripNonSgr(`${ESC}]0;t\x07${ESC}[31mx`)).toBe(`${ESC}[31mx`);
  });
});
