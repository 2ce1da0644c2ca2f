import { describe, expect, it } from 'vitest';
import { applyCarriageReturns, LogBuffer, type LogRow } from '../../lib/ui/log-buffer';
import { ansiToPlain } from '../../lib/ui/ansi';

const enc = new TextEncoder();
const lines = (rows: LogRow[]) => rows.filter((r) => r.kind === 'line').map((r) => (r.kind === 'line' ? r.text : ''));

describe('LogBuffer', () => {
  it('splits lines across chunk boundaries and keeps an unfinished last line', () => {
    const b = new LogBuffer();
    b.appendText(0, 1, 'hel');
    expect(lines(b.rows)).toEqual(['hel']);
    b.appendText(0, 1, 'lo\nwor');
    expect(lines(b.rows)).toEqual(['hello', 'wor']);
    b.appendText(0, 1, 'ld\n\nlast');
    expect(lines(b.rows)).toEqual(['hello', 'world', '', 'last']);
    expect(b.rows.map((r) => (r.kind === 'line' ? r.n : 0))).toEqual([1, 2, 3, 4]);
    expect(b.lineCount).toBe(4);
  });

  it('startAt: a log taken from an offset drops the line it began in (even mid-character), keeps byte offsets and line times, and numbers no line', () => {
    const b = new LogBuffer();
    const log = enc.encode('first line\nsecond é line\nthird\n');
    // From inside 'é' (a two-byte character) of the second line, in chunks cut anywhere.
    const from = log.indexOf(0xc3) + 1;
    b.startAt(0, 1, from);
    expect(b.numbered).toBe(false);
    for (let i = from; i < log.length; i += 3) b.appendBytes(0, 1, log.subarray(i, Math.min(log.length, i + 3)));
    expect(lines(b.rows)).toEqual(['third']);
    const row = b.rows.find((r) => r.kind === 'line')!;
    expect(row.kind === 'line' && row.n).toBe(0);
    expect(row.kind === 'line' && row.offset).toBe(log.indexOf(0x74, from)); // the 't' of "third"
    b.addTimes(0, 1, [[log.length, 1_700_000_000_000]]);
    expect(row.kind === 'line' && b.timeOf(row)).toBe(1_700_000_000_000);
    expect(b.attemptStats(0, 1).bytes).toBe(log.length);
  });

  it('decodes a multi-byte character split between chunks', () => {
    const b = new LogBuffer();
    const bytes = enc.encode('é→😀\n');
    for (let i = 0; i < bytes.length; i++) b.appendBytes(0, 1, bytes.subarray(i, i + 1));
    expect(lines(b.rows)).toEqual(['é→😀']);
  });

  it('a truncated character at the end of an attempt shows as U+FFFD after endAttempt', () => {
    const b = new LogBuffer();
    b.appendBytes(0, 1, enc.encode('ok\nx').slice());
    b.appendBytes(0, 1, new Uint8Array([0xe2, 0x86]));
    b.endAttempt(0, 1);
    expect(lines(b.rows)).toEqual(['ok', 'x\ufffd']);
  });

  it('carriage returns: the text after the last \\r wins; CRLF is a plain newline', () => {
    expect(applyCarriageReturns('10%\r50%\r100%')).toBe('100%');
    expect(applyCarriageReturns('line\r')).toBe('line');
    expect(applyCarriageReturns('a\r\r')).toBe('a');
    const b = new LogBuffer();
    b.appendText(0, 1, 'crlf\r\nprogress 1%');
    b.appendText(0, 1, '\rprogress 2%');
    b.appendText(0, 1, '\rprogress 3%\r');
    expect(lines(b.rows)).toEqual(['crlf', 'progress 3%']);
    b.appendText(0, 1, '\ndone\n');
    expect(lines(b.rows)).toEqual(['crlf', 'progress 3%', 'done']);
  });

  it('hostile example line: red/bold overwritten by the CR rewrite, as a terminal shows it', () => {
    const b = new LogBuffer();
    b.appendText(0, 1, '\x1b[31mred\x1b[0m \x1b[1mbold\x1b[0m \r carriage-return overwrite\nno newline at the end');
    expect(lines(b.rows)).toEqual([' carriage-return overwrite', 'no newline at the end']);
  });

  it('attempts keep their own partial lines and numbering; banners sit between them', () => {
    const b = new LogBuffer();
    b.addBanner({ key: 'start:0:1', tone: 'info', text: 'attempt 1', task: 0, attempt: 1 });
    b.appendText(0, 1, 'a1\nno newline');
    b.endAttempt(0, 1);
    b.addBanner({ key: 'end:0:1', tone: 'error', text: 'failed', task: 0, attempt: 1 });
    b.addBanner({ key: 'start:0:2', tone: 'warning', text: 'restart', task: 0, attempt: 2 });
    b.appendText(0, 2, 'b1\n');
    expect(b.rows.map((r) => (r.kind === 'line' ? `${r.attempt}:${r.n}:${r.text}` : `[${r.key}]`))).toEqual([
      '[start:0:1]',
      '1:1:a1',
      '1:2:no newline',
      '[end:0:1]',
      '[start:0:2]',
      '2:1:b1',
    ]);
    expect(b.firstRowOf(0, 2)).toBe(4);
    expect(b.firstRowOf(1, 1)).toBe(-1);
  });

  it('numbers lines across the whole view too (seq): never restarting at an attempt or a task', () => {
    const b = new LogBuffer();
    b.appendText(0, 1, 'a1\na2\n');
    b.addBanner({ key: 'start:0:2', tone: 'warning', text: 'restart', task: 0, attempt: 2 });
    b.appendText(0, 2, 'b1\nunfinished');
    b.appendText(1, 1, 'c1\n');
    b.appendText(0, 2, ' now finished\n');
    const nums = b.rows.filter((r) => r.kind === 'line').map((r) => (r.kind === 'line' ? `${r.task}.${r.attempt}:${r.n}/${r.seq}:${r.text}` : ''));
    expect(nums).toEqual(['0.1:1/1:a1', '0.1:2/2:a2', '0.2:1/3:b1', '0.2:2/4:unfinished now finished', '1.1:1/5:c1']);
    expect(b.lineSeq).toBe(5);
  });

  it('a repeated banner (after a resume) is ignored', () => {
    const b = new LogBuffer();
    expect(b.addBanner({ key: 'k', tone: 'info', text: 'x' })).toBe(true);
    expect(b.addBanner({ key: 'k', tone: 'info', text: 'x' })).toBe(false);
    expect(b.rows).toHaveLength(1);
  });

  it('notifies and bumps the version on every change', () => {
    const b = new LogBuffer();
    let calls = 0;
    const off = b.subscribe(() => calls++);
    b.appendText(0, 1, 'x\n');
    b.addBanner({ key: 'k', tone: 'info', text: 'y' });
    off();
    b.appendText(0, 1, 'z\n');
    expect(calls).toBe(2);
    expect(b.version).toBe(3);
  });

  it('search finds plain text through colour codes, case-insensitively', () => {
    const b = new LogBuffer();
    b.appendText(0, 1, '\x1b[32mEpoch 1\x1b[0m\nother\nepoch 2\n');
    expect(b.search('epoch 1', ansiToPlain)).toEqual([0]);
    expect(b.search('EPOCH', ansiToPlain)).toEqual([0, 2]);
    expect(b.search('EPOCH', ansiToPlain, true)).toEqual([]);
  });

  it('drops the oldest rows past maxRows, with a notice, keeping indices consistent', () => {
    const b = new LogBuffer({ maxRows: 100 });
    for (let i = 0; i < 150; i++) b.appendText(0, 1, `line ${i}\n`);
    b.appendText(0, 1, 'partial');
    expect(b.rows.length).toBeLessThanOrEqual(101);
    expect(b.rows[0].kind).toBe('banner');
    expect(b.dropped).toBeGreaterThan(0);
    b.appendText(0, 1, ' finished\n');
    const last = b.rows[b.rows.length - 1];
    expect(last.kind === 'line' && last.text).toBe('partial finished');
    expect(last.kind === 'line' && last.n).toBe(151);
    expect(last.kind === 'line' && last.seq).toBe(151);
    expect(b.lineCount).toBe(b.rows.filter((r) => r.kind === 'line').length);
  });
});
