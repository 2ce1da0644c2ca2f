import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLogChunk, encodeLogChunk, LOG_HEADER_BYTES, writeLogHeader } from '../../lib/logs/protocol';
import { LogFollower, LogTruncatedError, OffsetPastEndError, readLogRange, utf8BoundaryBefore, utf8SkipContinuation } from '../../lib/logs/reader';

const dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-logs-reader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer | null) => {
  const p = path.join(dir, `f${n++}.log`);
  if (content !== null) writeFileSync(p, content);
  return p;
};

describe('UTF-8 boundaries', () => {
  const text = Buffer.from('a€b😀c', 'utf8'); // a(1) €(3) b(1) 😀(4) c(1) = 10 bytes
  it('never ends a range inside a character', () => {
    // Character starts: 0 a, 1 €, 4 b, 5 😀, 9 c.
    const expected = [0, 1, 1, 1, 4, 5, 5, 5, 5, 9, 10];
    for (let end = 0; end <= text.length; end++) expect(utf8BoundaryBefore(text, end)).toBe(expected[end]);
  });
  it('skips leading continuation bytes, at most 3', () => {
    expect(utf8SkipContinuation(text.subarray(2))).toBe(2);
    expect(utf8SkipContinuation(text.subarray(6))).toBe(3);
    expect(utf8SkipContinuation(Buffer.from([0x80, 0x80, 0x80, 0x80]))).toBe(3);
    expect(utf8SkipContinuation(text)).toBe(0);
  });
  it('does not hold back invalid bytes', () => {
    const bad = Buffer.from([0x61, 0xff, 0x80, 0x80, 0x80, 0x80]);
    expect(utf8BoundaryBefore(bad, bad.length)).toBe(bad.length);
  });
});

describe('readLogRange', () => {
  it('reads bounded ranges that join back to the file, on character boundaries', async () => {
    const content = 'héllo wörld — ünïcödé 😀 '.repeat(120);
    const p = file(content);
    for (const limit of [1, 2, 3, 5, 7, 64, 1000]) {
      const parts: string[] = [];
      let offset = 0;
      for (;;) {
        const r = await readLogRange(p, offset, limit, { complete: true });
        expect(r.offset).toBe(offset);
        expect(r.data.length).toBeLessThanOrEqual(Math.max(limit, 4));
        const s = r.data.toString('utf8');
        expect(s).not.toContain('\uFFFD');
        parts.push(s);
        if (r.nextOffset === r.size) break;
        expect(r.nextOffset).toBeGreaterThan(offset);
        offset = r.nextOffset;
      }
      expect(parts.join('')).toBe(content);
    }
  });

  it('holds back a trailing partial character of a running log, returns it when complete', async () => {
    const euro = Buffer.from('€', 'utf8');
    const p = file(Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)]));
    const running = await readLogRange(p, 0, 100);
    expect(running.data.toString()).toBe('ab');
    expect(running.nextOffset).toBe(2);
    expect(running.size).toBe(4);
    const done = await readLogRange(p, 0, 100, { complete: true });
    expect(done.nextOffset).toBe(4);
  });

  it('starts after continuation bytes when the offset lands inside a character', async () => {
    const p = file('a€b');
    const r = await readLogRange(p, 2, 10, { complete: true });
    expect(r.offset).toBe(4);
    expect(r.data.toString()).toBe('b');
  });

  it('answers an empty range at the end, and refuses an offset past it', async () => {
    const p = file('12345');
    const r = await readLogRange(p, 5, 10);
    expect(r).toMatchObject({ offset: 5, nextOffset: 5, size: 5 });
    expect(r.data.length).toBe(0);
    await expect(readLogRange(p, 6, 10)).rejects.toThrow(OffsetPastEndError);
    await expect(readLogRange(p, 6, 10)).rejects.toThrow(/size 5 bytes/);
  });

  it('reads a missing file (or no path) as empty', async () => {
    expect((await readLogRange(path.join(dir, 'nope.log'), 0, 10)).size).toBe(0);
    expect((await readLogRange(null, 0, 10)).size).toBe(0);
    await expect(readLogRange(null, 1, 10)).rejects.toThrow(OffsetPastEndError);
  });
});

describe('LogFollower', () => {
  it('follows a file that does not exist yet, then grows', async () => {
    const p = file(null);
    // A poll far longer than the test may run: every wake below is fs.watch's (on the folder,
    // then on the file), none the poll's.
    const f = new LogFollower(p, 0, { pollMs: 3_600_000 });
    const buf = Buffer.alloc(64);
    expect(await f.readInto(buf, 0, 64)).toBe(0);
    const waited = f.wait();
    writeFileSync(p, 'first\n');
    await waited;
    let got = '';
    for (let i = 0; i < 50 && got !== 'first\n'; i++) {
      const k = await f.readInto(buf, 0, 64);
      got += buf.subarray(0, k).toString();
      if (k === 0) await f.wait();
    }
    expect(got).toBe('first\n');
    const w2 = f.wait();
    appendFileSync(p, 'second\n');
    await w2;
    const k = await f.readInto(buf, 0, 64);
    expect(buf.subarray(0, k).toString()).toBe('second\n');
    expect(f.offset).toBe(13);
    await f.close();
  });

  it('reads from an offset, never more than asked', async () => {
    const p = file('0123456789');
    const f = new LogFollower(p, 3);
    const buf = Buffer.alloc(8);
    expect(await f.readInto(buf, 2, 4)).toBe(4);
    expect(buf.subarray(2, 6).toString()).toBe('3456');
    expect(await f.readInto(buf, 0, 8)).toBe(3);
    expect(await f.readInto(buf, 0, 8)).toBe(0);
    await f.close();
  });

  it('says how many bytes are there to read', async () => {
    const p = file(null);
    const f = new LogFollower(p, 0);
    expect(await f.available()).toBe(0);
    writeFileSync(p, '0123456789');
    expect(await f.available()).toBe(10);
    await f.readInto(Buffer.alloc(4), 0, 4);
    expect(await f.available()).toBe(6);
    truncateSync(p, 2);
    await expect(f.available()).rejects.toThrow(LogTruncatedError);
    await f.close();
  });

  it('on a local disk, says how many bytes there are without a turn of the event loop once open', async () => {
    // An attempt's end is streamed after this answer (docs/design.md §8): a busy loop must not delay it.
    const p = file('0123');
    const f = new LogFollower(p, 0);
    expect(await f.available()).toBe(4);
    appendFileSync(p, '4567');
    const order: string[] = [];
    setImmediate(() => order.push('loop turned'));
    const n = f.available().then((v) => (order.push('answered'), v));
    expect(await n).toBe(8);
    expect(order).toEqual(['answered']);
    await f.close();
  });

  it('reports a file that shrank under it', async () => {
    const p = file('0123456789');
    const f = new LogFollower(p, 0);
    const buf = Buffer.alloc(16);
    expect(await f.readInto(buf, 0, 16)).toBe(10);
    truncateSync(p, 4);
    await expect(f.readInto(buf, 0, 16)).rejects.toThrow(LogTruncatedError);
    await f.close();
    const gone = new LogFollower(path.join(dir, 'never.log'), 5);
    await expect(gone.readInto(buf, 0, 16)).rejects.toThrow(/shrank to 0 bytes/);
    await gone.close();
  });
});

describe('log frame header', () => {
  it('round-trips and can be written in place', () => {
    const data = Buffer.from('hello');
    const frame = encodeLogChunk({ task: 3, attempt: 70000, offset: 2 ** 40 + 5, data });
    expect(frame.length).toBe(LOG_HEADER_BYTES + 5);
    const c = decodeLogChunk(frame);
    expect(c).toMatchObject({ task: 3, attempt: 70000, offset: 2 ** 40 + 5 });
    expect(Buffer.from(c.data).toString()).toBe('hello');
    const buf = Buffer.alloc(LOG_HEADER_BYTES + 5);
    data.copy(buf, LOG_HEADER_BYTES);
    writeLogHeader(buf, 3, 70000, 2 ** 40 + 5);
    expect(Buffer.compare(buf, Buffer.from(frame))).toBe(0);
    expect(() => decodeLogChunk(new Uint8Array(3))).toThrow(/too short/);
  });
});
