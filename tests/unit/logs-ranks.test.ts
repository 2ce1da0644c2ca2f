/**
 * One log per rank of a multi-node attempt, end to end through the pure parts: the frame header
 * that names a rank (and leaves rank 0's frame as it always was), the stream query, the
 * dashboard's resume position, buffer and view (rank selector, "all ranks, prefixed"), and the
 * CLI's prefixed interleaving and `--rank K`.
 */
import { describe, expect, it } from 'vitest';
import { FollowRenderer, type Output } from '../../lib/cli/follow-render';
import { RankLines } from '../../lib/cli/rank-lines';
import { rankLogPath } from '../../lib/jobs/paths';
import type { StreamMessage } from '../../lib/api/types';
import { decodeLogChunk, encodeLogChunk, FRAME_LOG, FRAME_RANK_LOG, LOG_HEADER_BYTES, LOG_RANK_HEADER_BYTES, type LogChunk } from '../../lib/logs/protocol';
import { LogBuffer } from '../../lib/ui/log-buffer';
import { LogView } from '../../lib/ui/log-view';
import { ResumeTracker } from '../../lib/ui/resume';
import { parseStreamStart, StreamQueryError } from '../../lib/ws/stream-start';

const enc = new TextEncoder();
const dec = new TextDecoder();
const AT = '2026-01-01T00:00:00.000Z';
const chunk = (attempt: number, offset: number, text: string, rank?: number): LogChunk => ({ task: 0, attempt, offset, data: enc.encode(text), ...(rank !== undefined ? { rank } : {}) });
const start = (attempt: number, nodes: number): StreamMessage => ({ type: 'attempt', phase: 'start', task: 0, attempt, status: 'STARTING', cause: 'first', exitCode: null, reason: null, at: AT, nodes });
const end = (attempt: number, status: 'SUCCEEDED' | 'FAILED', exitCode: number, reason: string | null, nodes: number): StreamMessage => ({ type: 'attempt', phase: 'end', task: 0, attempt, status, cause: 'first', exitCode, reason, at: AT, nodes });

describe('rank log paths', () => {
  it('rank 0 is the attempt log itself; rank K sits beside it', () => {
    expect(rankLogPath('/h/jobs/1/task-0/attempt-1/run.log', 0)).toBe('/h/jobs/1/task-0/attempt-1/run.log');
    expect(rankLogPath('/h/jobs/1/task-0/attempt-1/run.log', 2)).toBe('/h/jobs/1/task-0/attempt-1/run.rank-2.log');
    expect(() => rankLogPath('/x/run.log', -1)).toThrow(RangeError);
  });
});

describe('log frames with a rank', () => {
  it('rank 0 keeps the 16-byte frame of kind 1; rank K has kind 2 and a 20-byte header', () => {
    const zero = encodeLogChunk(chunk(2, 7, 'abc'));
    expect(zero.length).toBe(LOG_HEADER_BYTES + 3);
    expect(zero[1]).toBe(FRAME_LOG);
    expect(encodeLogChunk(chunk(2, 7, 'abc', 0))).toEqual(zero);
    expect(decodeLogChunk(zero)).not.toHaveProperty('rank');
    const two = encodeLogChunk(chunk(2, 2 ** 33, 'xyz', 70000));
    expect(two.length).toBe(LOG_RANK_HEADER_BYTES + 3);
    expect(two[1]).toBe(FRAME_RANK_LOG);
    const c = decodeLogChunk(two);
    expect(c).toMatchObject({ task: 0, attempt: 2, offset: 2 ** 33, rank: 70000 });
    expect(dec.decode(c.data)).toBe('xyz');
    expect(() => decodeLogChunk(two.subarray(0, 18))).toThrow(/too short/);
  });
});

describe('stream query: rank and offsets', () => {
  const q = (s: string) => parseStreamStart(new URLSearchParams(s));
  it('defaults to every rank; offsets name each rank of the start attempt', () => {
    expect(q('task=0&attempt=2&offset=5')).toMatchObject({ offset: 5, rank: null, offsets: null });
    expect(q('attempt=2&offsets=5,9,0')).toMatchObject({ offset: 5, offsets: [5, 9, 0] });
    expect(q('attempt=2&offset=5&offsets=5,9')).toMatchObject({ offset: 5, offsets: [5, 9] });
    expect(q('rank=1&offset=9')).toMatchObject({ rank: 1, offset: 9 });
  });
  it('refuses what it cannot mean, naming the parameter', () => {
    expect(() => q('offsets=1,x')).toThrow(StreamQueryError);
    expect(() => q('offsets=1,x')).toThrow(/^offsets: /);
    expect(() => q('offset=4&offsets=5,9')).toThrow(/^offset: 4 disagrees with offsets/);
    expect(() => q('rank=-1')).toThrow(/^rank: /);
  });
});

describe('dashboard: resume per rank', () => {
  it('keeps one offset per rank of the attempt and resumes with all of them', () => {
    const t = new ResumeTracker();
    expect(t.onChunk(0, 1, 0, 10)).toEqual({ skip: 0, gap: 0 });
    expect(t.onChunk(0, 1, 0, 4, 2)).toEqual({ skip: 0, gap: 0 });
    expect(t.onChunk(0, 1, 0, 6, 2)).toEqual({ skip: 4, gap: 0 });
    expect(t.onChunk(0, 1, 2, 3, 2)).toBeNull();
    expect(t.query()).toBe('task=0&attempt=1&offset=10&offsets=10,0,6');
    t.onAttemptEnd(0, 1);
    expect(t.query()).toBe('task=0&attempt=2&offset=0');
  });
});

describe('dashboard: buffer and view of a multi-node attempt', () => {
  function gang(): LogBuffer {
    const b = new LogBuffer();
    b.addBanner({ key: 'start:0:1', tone: 'info', text: 'Attempt 1 started', task: 0, attempt: 1 });
    b.setNodes(0, 1, 3);
    b.appendBytes(0, 1, enc.encode('r0 a\nr0 '), 0);
    b.appendBytes(0, 1, enc.encode('r2 a\n'), 2);
    b.appendBytes(0, 1, enc.encode('b\n'), 0);
    b.appendBytes(0, 1, enc.encode('r1 a\nr1 b\n'), 1);
    return b;
  }
  it('each line carries its rank and its own line number; a rank\'s unfinished line stays its own', () => {
    const b = gang();
    const lines = b.rows.filter((r) => r.kind === 'line').map((r) => (r.kind === 'line' ? `${r.rank}:${r.n}:${r.text}` : ''));
    expect(lines).toEqual(['0:1:r0 a', '0:2:r0 b', '2:1:r2 a', '1:1:r1 a', '1:2:r1 b']);
    expect(b.maxNodes).toBe(3);
    expect(b.nodesOf(0, 1)).toBe(3);
    expect(b.attemptStats(0, 1)).toEqual({ lines: 5, bytes: 25 });
  });
  it('the view shows every rank, or one rank\'s lines with the banners', () => {
    const b = gang();
    const text = (rank: number | null) => {
      const v = new LogView();
      v.update(b, { taskSections: false, folded: new Set(), only: null, rank });
      return v.items.map((it) => (typeof it === 'number' ? b.rows[it].text : `[${it.kind}]`));
    };
    expect(text(null)).toEqual(['[attempt]', 'r0 a', 'r0 b', 'r2 a', 'r1 a', 'r1 b']);
    expect(text(1)).toEqual(['[attempt]', 'r1 a', 'r1 b']);
  });
  it('a one-node attempt\'s lines have no rank and stay under any rank selection', () => {
    const b = new LogBuffer();
    b.appendText(0, 1, 'solo\n');
    expect(b.rows[0]).not.toHaveProperty('rank');
    const v = new LogView();
    v.update(b, { taskSections: false, folded: new Set(), only: null, rank: 2 });
    expect(v.items.filter((i) => typeof i === 'number')).toHaveLength(1);
  });
});

/** Runs steps through a renderer; answers stdout text and stderr text. */
function play(r: FollowRenderer, steps: Array<StreamMessage | LogChunk>): { out: string; err: string } {
  let out = '';
  let err = '';
  for (const s of steps) {
    const outs: Output[] = 'data' in s ? r.chunk(s) : r.message(s);
    for (const o of outs) {
      if (o.to === 'out') out += dec.decode(o.data);
      else err += o.text;
    }
  }
  return { out, err };
}

describe('CLI: ranks interleaved line by line, each prefixed, or one rank alone', () => {
  it('RankLines never mixes two ranks in one line and ends unfinished lines at the end', () => {
    const l = new RankLines((r) => `[rank ${r}] `);
    expect(dec.decode(l.write(0, enc.encode('a\nb')))).toBe('[rank 0] a\n');
    expect(dec.decode(l.write(1, enc.encode('x\n')))).toBe('[rank 1] x\n');
    expect(dec.decode(l.write(0, enc.encode('c\n')))).toBe('[rank 0] bc\n');
    l.write(2, enc.encode('tail'));
    expect(dec.decode(l.end())).toBe('[rank 2] tail\n');
  });

  it('default: a prefixed interleaved view, the failing rank named, a resume position per rank', () => {
    const r = new FollowRenderer({ jobId: 1 });
    const { out, err } = play(r, [start(1, 3), chunk(1, 0, 'rank 0 says\n'), chunk(1, 0, 'rank 2 ', 2), chunk(1, 0, 'rank 1 says\n', 1)]);
    expect(out).toBe('[rank 0] rank 0 says\n[rank 1] rank 1 says\n');
    expect(err).toContain('attempt 1 started on 3 nodes');
    expect(r.position()).toEqual({ task: 0, attempt: 1, offset: 12, offsets: [12, 12, 7] });
    // A resumed stream repeats bytes: nothing is printed twice.
    expect(play(r, [chunk(1, 0, 'rank 1 says\n', 1)]).out).toBe('');
    const tail = play(r, [chunk(1, 7, 'says\n', 2), end(1, 'FAILED', 3, 'rank 1: run exited with code 3', 3)]);
    expect(tail.out).toBe('[rank 2] rank 2 says\n');
    expect(tail.err).toContain('Task 0 attempt 1 failed with exit code 3 on rank 1');
    expect(r.position()).toEqual({ task: 0, attempt: 2, offset: 0 });
  });

  it('--rank K: that rank\'s bytes exactly, its offset the position', () => {
    const r = new FollowRenderer({ jobId: 1, rank: 2 });
    const { out, err } = play(r, [start(1, 3), chunk(1, 0, 'partial', 2), chunk(1, 7, ' line\n', 2)]);
    expect(out).toBe('partial line\n');
    expect(err).toContain('started on 3 nodes (showing rank 2)');
    expect(r.position()).toEqual({ task: 0, attempt: 1, offset: 13 });
  });

  it('one-node attempts pass exactly as before (no prefix)', () => {
    const r = new FollowRenderer({ jobId: 1 });
    expect(play(r, [start(1, 1), chunk(1, 0, 'no newline')]).out).toBe('no newline');
  });
});
