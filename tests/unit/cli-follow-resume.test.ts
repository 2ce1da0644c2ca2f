/**
 * The follow renderer across dropped connections, deterministically: a scripted job stream (the
 * messages a server sends for a whole job, in wire order) is cut after every message — once, and
 * at every pair of points — and resumed the way lib/logs/protocol.ts says a server answers
 * `?task=&attempt=&offset=&since=`. Every marker line must appear exactly once and stdout must be
 * exactly the log bytes, wherever the connection dropped.
 */
import { describe, expect, it } from 'vitest';
import type { JobSummary, StreamMessage, TaskSummary } from '../../lib/api/types';
import { FollowRenderer, type Position } from '../../lib/cli/follow-render';
import type { LogChunk } from '../../lib/logs/protocol';

const AT = '2026-01-01T00:00:00.000Z';
const enc = new TextEncoder();
const dec = new TextDecoder();

type Item = StreamMessage | LogChunk;
type AttemptMsg = Extract<StreamMessage, { type: 'attempt' }>;

function task(index: number, over: Partial<TaskSummary> = {}): TaskSummary {
  return { index, name: null, status: 'PENDING', attempts: 0, restarts: 0, maxRestarts: 0, exitCodeRestarts: 0, recoveries: 0, startedAt: null, endedAt: null, nodeNames: [], ...over };
}

function job(id: number, tasks: TaskSummary[], status: JobSummary['status'] = 'PENDING'): JobSummary {
  return {
    id, name: 'retry-each-task', status, statusReason: null, submissionId: null, submittedAt: AT, startedAt: null, endedAt: null, totalDurationMs: 0,
    jobDurationMs: null, taskCount: tasks.length, currentTask: 0, tasksSucceeded: 0, restartCount: 0, exitCodeRestartCount: 0, recoveryCount: 0, labels: {}, cancelRequested: false, priority: 500, queue: 'default', owner: null, pendingReason: null, place: null, nextAttemptAt: null, group: null, scheduleId: null, tasks,
  };
}

const jobMsg = (status: JobSummary['status'], eventId: number, reason: string | null = null): StreamMessage => ({ type: 'job', status, reason, at: AT, eventId });
const taskMsg = (t: number, status: TaskSummary['status'], eventId: number, reason: string | null = null): StreamMessage => ({ type: 'task', task: t, name: null, status, reason, at: AT, eventId });
const start = (t: number, a: number, eventId: number, cause: AttemptMsg['cause'] = 'first', restart?: { n: number; max: number }): StreamMessage => ({
  type: 'attempt', phase: 'start', task: t, attempt: a, status: 'STARTING', cause, exitCode: null, reason: cause, at: AT, eventId, ...(restart ? { restart } : {}),
});
const end = (t: number, a: number, status: AttemptMsg['status'], exitCode: number | null, eventId: number, cause: AttemptMsg['cause'] = 'first'): StreamMessage => ({
  type: 'attempt', phase: 'end', task: t, attempt: a, status, cause, exitCode, reason: null, at: AT, eventId,
});
const chunk = (t: number, a: number, offset: number, text: string): LogChunk => ({ task: t, attempt: a, offset, data: enc.encode(text) });

const isChunk = (i: Item): i is LogChunk => !('type' in i);
const before = (t: number, a: number, p: Position) => t < p.task || (t === p.task && a < p.attempt);

/**
 * What a server following lib/logs/protocol.ts sends for a (re)connection at `pos` with `since`,
 * given the whole stream `items` (after hello) in wire order:
 * - log chunks of attempts before the position are skipped, the position's attempt from its offset;
 * - the position's attempt start message is always sent; a later attempt's start only when its
 *   eventId > since; earlier attempts' start/end messages are skipped; an end is always sent;
 * - job/task status messages only when eventId > since (without since, a stream that starts past
 *   the beginning skips job messages until it reaches the position, and task messages of earlier
 *   tasks).
 */
function serve(hello: JobSummary, items: Item[], pos: Position, since: number | undefined): Item[] {
  const out: Item[] = [{ type: 'hello', protocol: 1, job: hello }];
  const wanted = (id: number | undefined) => since === undefined || id === undefined || id > since;
  let reached = since !== undefined || (pos.task === 0 && pos.attempt === 1 && pos.offset === 0);
  for (const it of items) {
    if (isChunk(it)) {
      if (before(it.task, it.attempt, pos)) continue;
      if (it.task === pos.task && it.attempt === pos.attempt) {
        const endAt = it.offset + it.data.length;
        if (endAt <= pos.offset) continue;
        if (it.offset < pos.offset) {
          out.push({ ...it, offset: pos.offset, data: it.data.subarray(pos.offset - it.offset) });
          continue;
        }
      }
      out.push(it);
      continue;
    }
    switch (it.type) {
      case 'attempt':
        if (before(it.task, it.attempt, pos)) continue;
        if (it.phase === 'start') {
          const isStart = it.task === pos.task && it.attempt === pos.attempt;
          if (!isStart && !wanted(it.eventId)) continue;
          reached = true;
        }
        out.push(it);
        break;
      case 'task':
        if (it.task < pos.task) continue;
        reached = true;
        if (wanted(it.eventId)) out.push(it);
        break;
      case 'job':
        if ((reached || ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(it.status)) && wanted(it.eventId)) out.push(it);
        break;
      default:
        out.push(it);
    }
  }
  return out;
}

/** Feeds a renderer; answers stdout bytes and stderr text. */
function feed(r: FollowRenderer, items: Item[], into: { out: string; err: string }): void {
  for (const it of items) {
    if (r.done) return;
    for (const o of isChunk(it) ? r.chunk(it) : r.message(it)) {
      if (o.to === 'out') into.out += dec.decode(o.data);
      else into.err += o.text;
    }
  }
}

/** Follows the scripted job, dropping each connection after `drops[i]` messages of connection i. */
function follow(hello: JobSummary, items: Item[], drops: number[]): { out: string; err: string } {
  const r = new FollowRenderer({ jobId: hello.id });
  const got = { out: '', err: '' };
  for (let conn = 0; !r.done; conn++) {
    if (conn > drops.length + 2) throw new Error(`no end after ${conn} connections:\n${got.err}`);
    const msgs = serve(hello, items, r.position(), r.since());
    feed(r, msgs.slice(0, drops[conn] ?? msgs.length), got);
  }
  return got;
}

/** The seed pipeline (task 0 exits 1, one restart; task 1 never runs), as the server streams it. */
const SEED_HELLO = job(4, [task(0, { maxRestarts: 1 }), task(1)]);
const SEED_MARKERS = [
  '├── Job 4 (retry-each-task), 2 tasks, status PENDING — Ctrl-C stops following; the job keeps running',
  '├── Task 0, attempt 1 started',
  '│   Task 0 attempt 1 failed with exit code 1',
  '↻ Restarting task 0 (attempt 2 of 2)',
  '├── Task 0, attempt 2 started',
  '│   Task 0 attempt 2 failed with exit code 1',
  '├── Task 0 ended (status: FAILED): restarts spent (1 of 1)',
  '│   Task 1 will not run (status: CANCELLED): task 0 failed',
  '✗ Job 4 finished (status: FAILED)',
];
const SEED_OUT = 'task 1, attempt 1\ntask 1, attempt 2\n';

/** Event ids and wire order exactly as a real server sent them for the seed pipeline. */
function seedInIdOrder(): Item[] {
  return [
    jobMsg('PENDING', 1, 'submitted'),
    taskMsg(0, 'STARTING', 2, 'admitted'),
    start(0, 1, 3),
    jobMsg('STARTING', 4, 'admitted'),
    taskMsg(0, 'RUNNING', 6),
    jobMsg('RUNNING', 7),
    chunk(0, 1, 0, 'task 1, '),
    chunk(0, 1, 8, 'attempt 1\n'),
    end(0, 1, 'FAILED', 1, 8),
    taskMsg(0, 'STARTING', 9, 'task 0: run exited with code 1: restart 1 of 1'),
    start(0, 2, 10, 'restart', { n: 1, max: 1 }),
    jobMsg('STARTING', 11, 'task 0: run exited with code 1: restart 1 of 1'),
    taskMsg(0, 'RUNNING', 13),
    jobMsg('RUNNING', 14),
    chunk(0, 2, 0, 'task 1, attempt 2\n'),
    end(0, 2, 'FAILED', 1, 15, 'restart'),
    taskMsg(0, 'FAILED', 16, 'restarts spent (1 of 1)'),
    taskMsg(1, 'CANCELLED', 17, 'task 0 failed'),
    jobMsg('FAILED', 18, 'task 0: restarts spent (1 of 1)'),
    { type: 'end', status: 'FAILED', follow: true },
  ];
}

/**
 * The same job where status messages reach the wire out of eventId order: ids are taken when a
 * row is inserted, not when its transaction commits, so a status written by another transaction
 * (here the job's STARTING / RUNNING, ids 11 and 14) can be seen — and sent — before lower ids
 * (the job stream reads with a lag floor for exactly this). A client that resumes with
 * since = the highest id it saw then tells the server to skip attempt 2's start (id 10).
 */
function seedOutOfOrder(): Item[] {
  const s = seedInIdOrder();
  const take = (pred: (i: Item) => boolean) => s.splice(s.findIndex(pred), 1)[0];
  const job11 = take((i) => !isChunk(i) && i.type === 'job' && i.eventId === 11);
  const job14 = take((i) => !isChunk(i) && i.type === 'job' && i.eventId === 14);
  // Both are sent while attempt 1 is still being streamed, before its last chunk and its end.
  const at = s.findIndex((i) => isChunk(i) && i.attempt === 1 && i.offset === 8);
  s.splice(at, 0, job11, job14);
  return s;
}

function markerLines(err: string): string[] {
  return err.split('\n').filter((l) => l.length > 0);
}

describe.each([
  ['in eventId order', seedInIdOrder],
  ['with statuses out of eventId order', seedOutOfOrder],
])('FollowRenderer resume — the seed pipeline %s', (_label, story) => {
  const items = story();
  const total = serve(SEED_HELLO, items, { task: 0, attempt: 1, offset: 0 }, undefined).length;

  it('without a drop: every marker once, in order, stdout exact', () => {
    const got = follow(SEED_HELLO, items, []);
    expect(markerLines(got.err)).toEqual(SEED_MARKERS);
    expect(got.out).toBe(SEED_OUT);
  });

  it('dropped after each message (then resumed): every marker exactly once, stdout exact', () => {
    for (let k = 0; k <= total; k++) {
      const got = follow(SEED_HELLO, items, [k]);
      expect(markerLines(got.err), `dropped after message ${k}`).toEqual(SEED_MARKERS);
      expect(got.out, `dropped after message ${k}`).toBe(SEED_OUT);
    }
  });

  it('dropped twice, at every pair of points: every marker exactly once, stdout exact', () => {
    for (let k1 = 0; k1 <= total; k1++) {
      for (let k2 = 0; k2 <= total; k2++) {
        const got = follow(SEED_HELLO, items, [k1, k2]);
        expect(markerLines(got.err), `dropped after ${k1}, then after ${k2}`).toEqual(SEED_MARKERS);
        expect(got.out, `dropped after ${k1}, then after ${k2}`).toBe(SEED_OUT);
      }
    }
  });
});

describe('FollowRenderer resume — repeated status messages are shown once', () => {
  it('a recovery marker (job RECOVERING) re-sent after a resume is not printed twice', () => {
    const hello = job(2, [task(0, { maxRestarts: 1 })]);
    const items: Item[] = [
      start(0, 1, 3),
      chunk(0, 1, 0, 'a\n'),
      jobMsg('RECOVERING', 5, 'attempt lost'),
      end(0, 1, 'LOST', null, 6),
      start(0, 2, 7, 'recovery'),
      jobMsg('CANCELLING', 8, 'cancel requested'),
      chunk(0, 2, 0, 'b\n'),
      end(0, 2, 'CANCELLED', 143, 9, 'recovery'),
      jobMsg('CANCELLED', 10),
      { type: 'end', status: 'CANCELLED', follow: true },
    ];
    const total = serve(hello, items, { task: 0, attempt: 1, offset: 0 }, undefined).length;
    const ref = follow(hello, items, []);
    expect(ref.err.match(/is recovering/g)).toHaveLength(1);
    for (let k = 0; k <= total; k++) {
      for (let k2 = 0; k2 <= total; k2++) {
        const got = follow(hello, items, [k, k2]);
        expect(got.err, `dropped after ${k}, ${k2}`).toBe(ref.err);
        expect(got.out).toBe('a\nb\n');
      }
    }
  });
});
