import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobSummary, StreamMessage } from '../../lib/api/types';
import { JobStream } from '../../lib/ui/job-stream';
import { LogBuffer } from '../../lib/ui/log-buffer';
import { FakeSocket } from './ui-fake-socket';

const at = '2025-01-01T00:00:00.000Z';
const job = (over: Partial<JobSummary> = {}): JobSummary => ({
  id: 7,
  name: 'retry-each-task',
  status: 'RUNNING',
  statusReason: null,
  submissionId: null,
  submittedAt: at,
  startedAt: at,
  endedAt: null,
  totalDurationMs: 0,
  jobDurationMs: 0,
  taskCount: 2,
  currentTask: 0,
  tasksSucceeded: 0,
  restartCount: 0,
  exitCodeRestartCount: 0,
  recoveryCount: 0,
  labels: {},
  cancelRequested: false, priority: 500, queue: 'default', owner: null, pendingReason: null, place: null, nextAttemptAt: null, group: null, scheduleId: null,
  tasks: [
    { index: 0, name: 'retry-each-task', status: 'RUNNING', attempts: 0, restarts: 0, maxRestarts: 1, exitCodeRestarts: 0, recoveries: 0, startedAt: at, endedAt: null, nodeNames: [] },
    { index: 1, name: null, status: 'PENDING', attempts: 0, restarts: 0, maxRestarts: 0, exitCodeRestarts: 0, recoveries: 0, startedAt: null, endedAt: null, nodeNames: [] },
  ],
  ...over,
});
const start = (task: number, attempt: number, cause: 'first' | 'restart' = 'first', restart?: { n: number; max: number }): StreamMessage => ({
  type: 'attempt',
  phase: 'start',
  task,
  attempt,
  status: 'RUNNING',
  cause,
  exitCode: null,
  reason: null,
  at,
  ...(restart ? { restart } : {}),
});
const end = (task: number, attempt: number, exitCode: number): StreamMessage => ({ type: 'attempt', phase: 'end', task, attempt, status: exitCode ? 'FAILED' : 'SUCCEEDED', cause: 'first', exitCode, reason: null, at });

describe('JobStream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.all = [];
  });
  afterEach(() => vi.useRealTimers());

  const make = () => {
    const buffer = new LogBuffer();
    const controls: string[] = [];
    const s = new JobStream({
      jobId: 7,
      buffer,
      wsBase: 'ws://h',
      connectionName: null,
      onControl: (m) => controls.push(m.type),
      socket: { createSocket: (u) => new FakeSocket(u), random: () => 0.5 },
    });
    return { s, buffer, controls };
  };
  const story = (b: LogBuffer) => b.rows.map((r) => (r.kind === 'line' ? `${r.task}.${r.attempt}:${r.n} ${r.text}` : `== ${r.text}`));

  it('takes `times` messages as line times only (no banner, no status), and ignores message types it does not know', () => {
    const { s, buffer, controls } = make();
    s.start();
    const ws = FakeSocket.all[0];
    ws.json({ type: 'hello', protocol: 1, job: job() });
    ws.json(start(0, 1));
    ws.bytes(0, 1, 0, 'one\ntwo\n');
    ws.json({ type: 'times', task: 0, attempt: 1, entries: [[4, 1_000], [8, 2_000]] } as StreamMessage);
    ws.json({ type: 'from-a-newer-server', anything: [1, 2] } as unknown as StreamMessage);
    const lines = buffer.rows.filter((r) => r.kind === 'line');
    expect(lines.map((l) => buffer.timeOf(l))).toEqual([1_000, 2_000]);
    expect(story(buffer)).toEqual(['== Task 0 (retry-each-task), attempt 1 started', '0.1:1 one', '0.1:2 two']);
    expect(controls).not.toContain('times');
  });

  it('tells the seed pipeline story: two failed attempts, the restart, task 1 never started, the end', () => {
    const { s, buffer } = make();
    s.start();
    const ws = FakeSocket.all[0];
    expect(ws.url).toBe('ws://h/ws/jobs/7?task=0&attempt=1&offset=0&follow=1');
    ws.json({ type: 'hello', protocol: 1, job: job() });
    ws.json(start(0, 1));
    ws.bytes(0, 1, 0, 'task 1, attempt 1\n');
    ws.json(end(0, 1, 1));
    ws.json(start(0, 2, 'restart', { n: 1, max: 1 }));
    ws.bytes(0, 2, 0, 'task 1, attempt 2\n');
    ws.json(end(0, 2, 1));
    ws.json({ type: 'task', task: 1, name: null, status: 'CANCELLED', reason: 'an earlier task failed', at });
    ws.json({ type: 'job', status: 'FAILED', reason: 'task 0: run exited with code 1; restarts spent (1 of 1)', at });
    ws.json({ type: 'end', status: 'FAILED', follow: true });
    expect(story(buffer)).toEqual([
      '== Task 0 (retry-each-task), attempt 1 started',
      '0.1:1 task 1, attempt 1',
      '== Task 0 (retry-each-task), attempt 1 failed with exit code 1',
      '== Restart 1 of 1 — Task 0 (retry-each-task), attempt 2 started',
      '0.2:1 task 1, attempt 2',
      '== Task 0 (retry-each-task), attempt 2 failed with exit code 1',
      '== Task 1 cancelled — it never started',
      '== Job ended: FAILED — task 0: run exited with code 1; restarts spent (1 of 1)',
    ]);
    expect(s.ended).toBe(true);
    // The server closes normally after `end`: no reconnect.
    ws.drop(1000);
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('resumes after a drop from the last byte: nothing lost, nothing twice', () => {
    const { s, buffer, controls } = make();
    s.start();
    const a = FakeSocket.all[0];
    a.json({ type: 'hello', protocol: 1, job: job() });
    a.json(start(0, 1));
    a.bytes(0, 1, 0, 'one\ntw');
    a.drop(1006);
    vi.advanceTimersByTime(500);
    const b = FakeSocket.all[1];
    expect(b.url).toBe('ws://h/ws/jobs/7?task=0&attempt=1&offset=6&follow=1');
    // A server may repeat the attempt start and overlap bytes; the client keeps each once.
    b.json({ type: 'hello', protocol: 1, job: job() });
    b.json(start(0, 1));
    b.bytes(0, 1, 4, 'two\nthree\n');
    b.json(end(0, 1, 0));
    b.json({ type: 'end', status: 'SUCCEEDED', follow: true });
    expect(story(buffer)).toEqual([
      '== Task 0 (retry-each-task), attempt 1 started',
      '0.1:1 one',
      '0.1:2 two',
      '0.1:3 three',
      '== Task 0 (retry-each-task), attempt 1 succeeded (exit code 0)',
      '== Job ended: SUCCEEDED',
    ]);
    expect(controls.filter((c) => c === 'hello')).toHaveLength(2);
  });

  it('a drop between attempts resumes after the ended attempt, with the last status event id', () => {
    const { s } = make();
    s.start();
    const a = FakeSocket.all[0];
    a.json(start(0, 1));
    a.bytes(0, 1, 0, 'x\n');
    a.json({ ...end(0, 1, 1), eventId: 41 } as StreamMessage);
    a.drop(1001, 'going away');
    vi.advanceTimersByTime(500);
    expect(FakeSocket.all[1].url).toBe('ws://h/ws/jobs/7?task=0&attempt=2&offset=0&since=41&follow=1');
    const b = FakeSocket.all[1];
    b.json({ ...start(0, 2, 'restart', { n: 1, max: 1 }), eventId: 43 } as StreamMessage);
    b.json({ type: 'job', status: 'RUNNING', reason: null, at, eventId: 42 });
    b.drop(1006);
    vi.advanceTimersByTime(500);
    expect(FakeSocket.all[2].url).toBe('ws://h/ws/jobs/7?task=0&attempt=2&offset=0&since=43&follow=1');
  });

  it('a refusal (job deleted: 4404) stops for good', () => {
    const { s } = make();
    s.start();
    const a = FakeSocket.all[0];
    a.json({ type: 'error', code: 'deleted', message: 'job 7 was deleted' });
    a.drop(4404, 'deleted');
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(s.state).toBe('failed');
  });

  it('malformed frames are counted, never shown', () => {
    const { s, buffer } = make();
    s.start();
    const a = FakeSocket.all[0];
    a.message('not json');
    a.message(new Uint8Array([9, 9, 9]).buffer);
    expect(s.badFrames).toBe(2);
    expect(buffer.rows).toHaveLength(0);
  });
});

describe('story wording', () => {
  it('a one-task job says "Attempt n"; a reason that only repeats the exit code is dropped, others kept', async () => {
    const { bannerFor } = await import('../../lib/ui/story');
    const ctx = { taskCount: 1, taskNames: ['train'], tasksWithAttempts: new Set<number>(), jobReason: null };
    expect(bannerFor(start(0, 1), ctx)?.text).toBe('Attempt 1 started');
    expect(bannerFor({ ...end(0, 1, 3), reason: 'run exited with code 3' } as StreamMessage, ctx)?.text).toBe('Attempt 1 failed with exit code 3');
    expect(bannerFor(start(0, 2, 'restart', { n: 1, max: 2 }), ctx)?.text).toBe('Restart 1 of 2 — attempt 2 started');
    expect(bannerFor({ ...end(0, 2, 137), reason: 'killed by SIGKILL (out of memory?)' } as StreamMessage, ctx)?.text).toBe('Attempt 2 failed with exit code 137 — killed by SIGKILL (out of memory?)');
    expect(bannerFor({ type: 'attempt', phase: 'end', task: 0, attempt: 3, status: 'FAILED_SETUP', cause: 'restart', exitCode: 2, reason: null, at }, ctx)?.tone).toBe('error');
    expect(bannerFor({ type: 'attempt', phase: 'start', task: 0, attempt: 4, status: 'STARTING', cause: 'recovery', exitCode: null, reason: 'process vanished', at }, ctx)?.text).toBe('Recovery — attempt 4 started (the previous attempt was lost) — process vanished');
  });
});
