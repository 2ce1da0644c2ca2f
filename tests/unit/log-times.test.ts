/**
 * Line times (docs/design.md §8 "Line times"): the time index's pure parts — which entry a look
 * appends (gap, cap, clock clamps), parsing a sidecar (torn lines, bad entries), mapping a byte to
 * its time — and their users: the CLI's `--timestamps` lines (held until covered, a dash after
 * the attempt ends) and the dashboard's LogBuffer (each line's offset and time). Plus the
 * indexer itself on a real file.
 */
import { mkdtemp, readFile, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FollowRenderer, type Output } from '../../lib/cli/follow-render';
import { HOLD_MS, NO_TIME, TimedLines } from '../../lib/cli/timed-lines';
import { timesPath } from '../../lib/jobs/paths';
import { timeAt, type TimeEntry } from '../../lib/logs/protocol';
import { indexGapMs, LogTimeIndexer, MAX_TIME_ENTRIES, nextEntry, parseTimes, TimesReader } from '../../lib/logs/time-index';
import { LogBuffer } from '../../lib/ui/log-buffer';

const enc = new TextEncoder();
const dec = new TextDecoder();
const T0 = Date.parse('2026-12-02T07:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('time index entries', () => {
  it('appends when the log grew and the gap since the last entry allows, with the mtime clamped to [last, now]', () => {
    expect(nextEntry(10, T0, T0 + 5, null, 0)).toEqual([10, T0]);
    // Did not grow: nothing.
    expect(nextEntry(10, T0 + 500, T0 + 500, [10, T0], 1)).toBeNull();
    // Grew 50 ms after the last entry: too soon (100 ms gap) — unless the attempt ended.
    expect(nextEntry(20, T0 + 50, T0 + 50, [10, T0], 1)).toBeNull();
    expect(nextEntry(20, T0 + 50, T0 + 50, [10, T0], 1, true)).toEqual([20, T0 + 50]);
    expect(nextEntry(20, T0 + 150, T0 + 150, [10, T0], 1)).toEqual([20, T0 + 150]);
    // A remote clock ahead of ours: never later than now; a mtime older than the last entry: the last.
    expect(nextEntry(20, T0 + 9_000, T0 + 200, [10, T0], 1)).toEqual([20, T0 + 200]);
    expect(nextEntry(20, T0 - 9_000, T0 + 200, [10, T0], 1)).toEqual([20, T0]);
  });

  it('gets coarser as the index grows and stops at its cap', () => {
    expect(indexGapMs(0)).toBe(100);
    expect(indexGapMs(9_999)).toBe(100);
    expect(indexGapMs(10_000)).toBe(1_000);
    expect(indexGapMs(25_000)).toBe(10_000);
    expect(indexGapMs(35_000)).toBe(60_000);
    expect(indexGapMs(MAX_TIME_ENTRIES)).toBe(Infinity);
    expect(nextEntry(20, T0 + 500, T0 + 500, [10, T0], 10_000)).toBeNull();
    expect(nextEntry(20, T0 + 1_000, T0 + 1_000, [10, T0], 10_000)).toEqual([20, T0 + 1_000]);
    // At the cap not even the final look adds one.
    expect(nextEntry(20, T0 + 1e9, T0 + 1e9, [10, T0], MAX_TIME_ENTRIES, true)).toBeNull();
  });

  it('a simulated day of a line every 10 ms stays under the cap', () => {
    let last: TimeEntry | null = null;
    let count = 0;
    for (let t = 0, size = 0; t < 86_400_000; t += 10) {
      size += 40;
      const e = nextEntry(size, T0 + t, T0 + t, last, count);
      if (e) {
        last = e;
        count++;
      }
    }
    expect(count).toBeLessThanOrEqual(MAX_TIME_ENTRIES);
    expect(count).toBeGreaterThan(10_000);
  });

  it('parses complete lines only, skipping bad and out-of-order entries', () => {
    const text = `10 ${T0}\nnonsense\n5 ${T0 + 1}\n20 ${T0 - 1}\n30 ${T0 + 100}\n40 ${T0 + 200}`;
    const { entries, consumed } = parseTimes(text);
    expect(entries).toEqual([
      [10, T0],
      [30, T0 + 100],
    ]);
    expect(consumed).toBe(text.lastIndexOf('\n') + 1);
    // Read on from a later position: ordered against the last entry already read.
    expect(parseTimes(`30 ${T0}\n50 ${T0 + 200}\n`, [30, T0 + 100]).entries).toEqual([[50, T0 + 200]]);
    expect(parseTimes('no newline yet')).toEqual({ entries: [], consumed: 0 });
  });

  it('maps a byte to the first entry whose end is past it', () => {
    const idx: TimeEntry[] = [
      [10, T0],
      [25, T0 + 1000],
      [40, T0 + 2000],
    ];
    expect(timeAt(idx, 0)).toBe(T0);
    expect(timeAt(idx, 9)).toBe(T0);
    expect(timeAt(idx, 10)).toBe(T0 + 1000);
    expect(timeAt(idx, 39)).toBe(T0 + 2000);
    expect(timeAt(idx, 40)).toBeNull();
    expect(timeAt([], 0)).toBeNull();
  });

  it('the sidecar sits beside each rank log', () => {
    expect(timesPath('/d/run.log')).toBe('/d/run.times');
    expect(timesPath('/d/run.rank-2.log')).toBe('/d/run.rank-2.times');
  });
});

describe('CLI --timestamps lines', () => {
  it('holds a line until the index covers its first byte, then prefixes it with its ISO time', () => {
    const t = new TimedLines();
    expect(dec.decode(t.write(enc.encode('one\ntw'), T0))).toBe('');
    expect(dec.decode(t.addTimes([[4, T0]]))).toBe(`${iso(T0)} one\n`);
    // The rest of a line started goes out at once; the next line waits for its entry.
    expect(dec.decode(t.write(enc.encode('o\nthree\n'), T0))).toBe('');
    expect(dec.decode(t.addTimes([[7, T0 + 1000]]))).toBe(`${iso(T0 + 1000)} two\n`);
    expect(dec.decode(t.addTimes([[13, T0 + 2000]]))).toBe(`${iso(T0 + 2000)} three\n`);
  });

  it('lines without a time get a dash: at the end of the attempt, or after waiting HOLD_MS', () => {
    const t = new TimedLines();
    t.write(enc.encode('a\nb'), T0);
    expect(dec.decode(t.expire(T0 + HOLD_MS - 1))).toBe('');
    expect(dec.decode(t.expire(T0 + HOLD_MS))).toBe(`${NO_TIME}a\n${NO_TIME}b`);
    const u = new TimedLines();
    u.addTimes([[2, 0]]);
    // Time 0 is "unknown" (bytes from before the index began): covered, but no time.
    expect(dec.decode(u.write(enc.encode('x\ny\n'), T0))).toBe(`${NO_TIME}x\n`);
    expect(dec.decode(u.end())).toBe(`${NO_TIME}y\n`);
  });

  it('the renderer prefixes lines from times sent before or after the bytes, and flushes at the attempt end', () => {
    const r = new FollowRenderer({ jobId: 1, timestamps: true, now: () => T0 });
    const out: Output[] = [];
    const start: StreamMsg = { type: 'attempt', phase: 'start', task: 0, attempt: 1, status: 'STARTING', cause: 'first', exitCode: null, reason: null, at: iso(T0) };
    out.push(...r.message(start));
    out.push(...r.message({ type: 'times', task: 0, attempt: 1, entries: [[6, T0]] }));
    out.push(...r.chunk({ task: 0, attempt: 1, offset: 0, data: enc.encode('first\nsecond\nlast') }));
    out.push(...r.message({ type: 'times', task: 0, attempt: 1, entries: [[13, T0 + 1000]] }));
    out.push(...r.message({ ...start, phase: 'end', status: 'SUCCEEDED', exitCode: 0 }));
    const stdout = out.map((o) => (o.to === 'out' ? dec.decode(o.data) : '')).join('');
    expect(stdout).toBe(`${iso(T0)} first\n${iso(T0 + 1000)} second\n${NO_TIME}last`);
  });

  it('without --timestamps, times pass unseen and the bytes stay exact; a message type it does not know prints nothing', () => {
    const r = new FollowRenderer({ jobId: 1 });
    const start: StreamMsg = { type: 'attempt', phase: 'start', task: 0, attempt: 1, status: 'STARTING', cause: 'first', exitCode: null, reason: null, at: iso(T0) };
    r.message(start);
    const out = [...r.message({ type: 'times', task: 0, attempt: 1, entries: [[6, T0]] }), ...r.chunk({ task: 0, attempt: 1, offset: 0, data: enc.encode('first\n') })];
    expect(out.map((o) => (o.to === 'out' ? dec.decode(o.data) : o.text)).join('')).toBe('first\n');
    expect(r.message({ type: 'from-a-newer-server' } as unknown as StreamMsg)).toEqual([]);
  });
});

type StreamMsg = Parameters<FollowRenderer['message']>[0];

describe('dashboard LogBuffer line times', () => {
  it("knows each line's offset and looks its time up once the index arrives", () => {
    const b = new LogBuffer();
    b.appendBytes(0, 1, enc.encode('héllo\nwor'));
    b.appendBytes(0, 1, enc.encode('ld\nlast\n'));
    const lines = b.rows.filter((r) => r.kind === 'line');
    expect(lines.map((l) => l.offset)).toEqual([0, 7, 13]);
    expect(lines.map((l) => b.timeOf(l))).toEqual([null, null, null]);
    b.addTimes(0, 1, [
      [7, T0],
      [13, T0 + 1000],
    ]);
    expect(lines.map((l) => b.timeOf(l))).toEqual([T0, T0 + 1000, null]);
    b.addTimes(0, 1, [
      [13, T0 + 5],
      [18, T0 + 2000],
    ]);
    expect(lines.map((l) => b.timeOf(l))).toEqual([T0, T0 + 1000, T0 + 2000]);
  });
});

describe('LogTimeIndexer on a real file', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('indexes a growing log, continues an index left by an earlier server, and a reader resumes from an offset', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'jobdeck-times-'));
    const log = path.join(dir, 'run.log');
    await writeFile(log, 'a\n');
    const ix = new LogTimeIndexer({ pollMs: 20 });
    ix.track(log, true);
    await waitFor(async () => (await readFile(timesPath(log), 'utf8').catch(() => '')).includes('\n'));
    await new Promise((r) => setTimeout(r, 150));
    await appendFile(log, 'bb\n');
    await waitFor(async () => (await readFile(timesPath(log), 'utf8')).split('\n').length === 3);
    await ix.close();
    // A new indexer (a restarted server) adopting the log continues the same index.
    await appendFile(log, 'ccc\n');
    const again = new LogTimeIndexer({ pollMs: 20 });
    again.track(log, false);
    await again.finish(log);
    const { entries } = parseTimes(await readFile(timesPath(log), 'utf8'));
    expect(entries.map((e) => e[0])).toEqual([2, 5, 9]);
    expect(entries[1][1]).toBeGreaterThanOrEqual(entries[0][1] + 100);
    expect(entries.every((e) => e[1] > 0)).toBe(true);
    expect(await new TimesReader(timesPath(log), 3).read()).toEqual(entries.slice(1));
    // A log adopted without an index: what is there has no known time (0).
    const old = path.join(dir, 'old.log');
    await writeFile(old, 'from before\n');
    const third = new LogTimeIndexer({ pollMs: 20 });
    third.track(old, false);
    await third.finish(old);
    expect(parseTimes(await readFile(timesPath(old), 'utf8')).entries).toEqual([[12, 0]]);
    // Adopted before its log exists (an attempt still starting): nothing of it is unknown.
    const late = path.join(dir, 'late.log');
    const fourth = new LogTimeIndexer({ pollMs: 20 });
    fourth.track(late, false);
    await new Promise((r) => setTimeout(r, 60));
    await writeFile(late, 'written after the look\n');
    await fourth.finish(late);
    const lateEntries = parseTimes(await readFile(timesPath(late), 'utf8')).entries;
    expect(lateEntries).toHaveLength(1);
    expect(lateEntries[0][1]).toBeGreaterThan(0);
    // No index at all: a reader answers nothing, no error.
    expect(await new TimesReader(path.join(dir, 'none.times'), 0).read()).toEqual([]);
  });

  it('a watched log on a local file system is looked at when it grows, not on every poll', async () => {
    dir ||= await mkdtemp(path.join(tmpdir(), 'jobdeck-times-'));
    const log = path.join(dir, 'watched.log');
    await writeFile(log, 'a\n');
    // A 10 ms poll that would look ~30 times in the quiet 300 ms below; the watcher takes over.
    const ix = new LogTimeIndexer({ pollMs: 10, watchedPollMs: 60_000 });
    ix.track(log, true);
    await waitFor(async () => (await readFile(timesPath(log), 'utf8').catch(() => '')).includes('\n'));
    const before = ix.looks;
    await new Promise((r) => setTimeout(r, 300));
    expect(ix.looks - before).toBeLessThanOrEqual(2);
    // A write is still seen (by the watcher): its entry comes without the poll.
    await appendFile(log, 'bb\n');
    await waitFor(async () => parseTimes(await readFile(timesPath(log), 'utf8')).entries.length === 2);
    await ix.close();
    expect(parseTimes(await readFile(timesPath(log), 'utf8')).entries.map((e) => e[0])).toEqual([2, 5]);
  });

  it('a reader on a local disk follows a growing index — missing, a torn line, past 64 KiB — and answers without a turn of the event loop', async () => {
    dir ||= await mkdtemp(path.join(tmpdir(), 'jobdeck-times-'));
    const file = path.join(dir, 'grow.times');
    const reader = new TimesReader(file, 0);
    expect(await reader.read()).toEqual([]);
    await writeFile(file, '10 1000\n20 1100\n30 12');
    expect(await reader.read()).toEqual([[10, 1000], [20, 1100]]);
    // More than 64 KiB at once is read off the loop; the torn line completes with it.
    const many = Array.from({ length: 8000 }, (_, i) => `${40 + i * 10} ${2000 + i}\n`).join('');
    await appendFile(file, `00\n${many}`);
    const big = await reader.read();
    expect(big.length).toBe(8001);
    expect(big[0]).toEqual([30, 1200]);
    expect(big.at(-1)).toEqual([40 + 7999 * 10, 2000 + 7999]);
    // A small read on a local disk (docs/design.md §8): answered before a setImmediate queued ahead of it runs.
    await appendFile(file, '999999 99999\n');
    const order: string[] = [];
    setImmediate(() => order.push('loop turned'));
    const small = reader.read().then((e) => (order.push('read'), e));
    expect(await small).toEqual([[999999, 99999]]);
    expect(order).toEqual(['read']);
  });

  it('close() waits for a last look in flight: no index write outlives the stop', async () => {
    dir ||= await mkdtemp(path.join(tmpdir(), 'jobdeck-times-'));
    const log = path.join(dir, 'ended.log');
    await writeFile(log, 'the last line\n');
    const ix = new LogTimeIndexer({ pollMs: 60_000 });
    // Adopted without an index: the last look writes an entry whatever the gap.
    ix.track(log, false);
    // The attempt ended (its finish is not awaited, as the monitor does), then the server stops.
    const finished = ix.finish(log);
    await ix.close();
    expect(parseTimes(await readFile(timesPath(log), 'utf8').catch(() => '')).entries).toEqual([[14, 0]]);
    await finished;
  });
});

async function waitFor(ok: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}
