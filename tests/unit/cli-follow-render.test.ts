import { describe, expect, it } from 'vitest';
import type { JobSummary, StreamMessage, TaskSummary } from '../../lib/api/types';
import { FollowRenderer, type Output } from '../../lib/cli/follow-render';
import type { LogChunk } from '../../lib/logs/protocol';

const AT = '2026-01-01T00:00:00.000Z';
const enc = new TextEncoder();
const dec = new TextDecoder();

function task(index: number, over: Partial<TaskSummary> = {}): TaskSummary {
  return { index, name: null, status: 'PENDING', attempts: 0, restarts: 0, maxRestarts: 0, exitCodeRestarts: 0, recoveries: 0, startedAt: null, endedAt: null, nodeNames: [], ...over };
}

function job(id: number, tasks: TaskSummary[], over: Partial<JobSummary> = {}): JobSummary {
  return {
    id,
    name: 'retry-each-task',
    status: 'PENDING',
    statusReason: null,
    submissionId: null,
    submittedAt: AT,
    startedAt: null,
    endedAt: null,
    totalDurationMs: 0,
    jobDurationMs: null,
    taskCount: tasks.length,
    currentTask: 0,
    tasksSucceeded: 0,
    restartCount: 0,
    exitCodeRestartCount: 0,
    recoveryCount: 0,
    labels: {},
    cancelRequested: false, priority: 500, queue: 'default', owner: null, pendingReason: null, place: null, nextAttemptAt: null, group: null, scheduleId: null,
    tasks,
    ...over,
  };
}

type Step = StreamMessage | LogChunk;

const start = (task: number, attempt: number, cause: 'first' | 'restart' | 'recovery' = 'first', restart?: { n: number; max: number }): StreamMessage => ({
  type: 'attempt', phase: 'start', task, attempt, status: 'STARTING', cause, exitCode: null, reason: null, at: AT, ...(restart ? { restart } : {}),
});
const end = (task: number, attempt: number, status: 'SUCCEEDED' | 'FAILED' | 'FAILED_SETUP' | 'CANCELLED' | 'LOST', exitCode: number | null, cause: 'first' | 'restart' = 'first'): StreamMessage => ({
  type: 'attempt', phase: 'end', task, attempt, status, cause, exitCode, reason: null, at: AT,
});
const taskMsg = (t: number, status: TaskSummary['status'], reason: string | null = null, name: string | null = null): StreamMessage => ({ type: 'task', task: t, name, status, reason, at: AT });
const chunk = (task: number, attempt: number, offset: number, text: string): LogChunk => ({ task, attempt, offset, data: enc.encode(text) });

/** Consecutive chunks of one attempt holding `texts`, with their offsets. */
function pieces(task: number, attempt: number, texts: string[]): LogChunk[] {
  let offset = 0;
  return texts.map((t) => {
    const c = chunk(task, attempt, offset, t);
    offset += c.data.length;
    return c;
  });
}

/** Runs steps through a renderer; answers stdout text, stderr text and both interleaved. */
function play(r: FollowRenderer, steps: Step[]): { out: string; err: string; all: string } {
  let out = '';
  let err = '';
  let all = '';
  for (const s of steps) {
    const outs: Output[] = 'type' in s ? r.message(s) : r.chunk(s);
    for (const o of outs) {
      if (o.to === 'out') {
        out += dec.decode(o.data);
        all += dec.decode(o.data);
      } else {
        err += o.text;
        all += o.text;
      }
    }
  }
  return { out, err, all };
}

/**
 * SkyPilot's retry-each-task pipeline (examples/seed-retry-pipeline.yaml): task 0 `exit 1` with
 * 1 restart; task 1 never runs.
 */
function seedSteps(): Step[] {
  const j = job(4, [task(0, { name: 'retry-each-task', maxRestarts: 1 }), task(1)]);
  return [
    { type: 'hello', protocol: 1, job: j },
    taskMsg(0, 'STARTING'),
    start(0, 1),
    chunk(0, 1, 0, 'task 1, attempt 1\n'),
    end(0, 1, 'FAILED', 1),
    start(0, 2, 'restart', { n: 1, max: 1 }),
    chunk(0, 2, 0, 'task 1, attempt 2\n'),
    taskMsg(0, 'FAILED', 'no restarts left (1 of 1 used)'),
    end(0, 2, 'FAILED', 1, 'restart'),
    taskMsg(1, 'CANCELLED', 'an earlier task failed'),
    { type: 'job', status: 'FAILED', reason: null, at: AT },
    { type: 'end', status: 'FAILED', follow: true },
  ];
}

describe('FollowRenderer — the seed pipeline (task 0 exit 1 with one restart, task 1 never runs)', () => {
  it('marks both attempts, one restart, no task-1 start, and the FAILED end; stdout is only the log bytes', () => {
    const r = new FollowRenderer({ jobId: 4 });
    const { out, err, all } = play(r, seedSteps());
    expect(out).toBe('task 1, attempt 1\ntask 1, attempt 2\n');
    expect(err.match(/Task 0 attempt \d failed with exit code 1/g)).toEqual(['Task 0 attempt 1 failed with exit code 1', 'Task 0 attempt 2 failed with exit code 1']);
    expect(err.match(/↻ Restarting/g)).toHaveLength(1);
    expect(err).toContain('↻ Restarting task 0 (attempt 2 of 2)');
    expect(err).toContain('├── Task 0 (retry-each-task), attempt 1 started');
    expect(err).toContain('├── Task 0 (retry-each-task), attempt 2 started');
    expect(err).not.toMatch(/Task 1, attempt/);
    expect(err).toContain('Task 1 will not run (status: CANCELLED)');
    expect(err.trimEnd().split('\n').at(-1)).toBe('✗ Job 4 finished (status: FAILED)');
    // The task's FAILED marker waits until its open attempt has ended, so the story reads in order.
    expect(all.indexOf('attempt 2 failed with exit code 1')).toBeLessThan(all.indexOf('Task 0 (retry-each-task) ended (status: FAILED): no restarts left'));
    expect(all.indexOf('task 1, attempt 1')).toBeLessThan(all.indexOf('Task 0 attempt 1 failed'));
    expect(r.outcome()).toEqual({ status: 'FAILED', terminal: true });
    expect(r.done).toBe(true);
  });

  it('a succeeded pipeline: the move to the next task, then ✓', () => {
    const r = new FollowRenderer({ jobId: 9 });
    const j = job(9, [task(0, { name: 'prepare' }), task(1, { name: 'report' })]);
    const { out, err } = play(r, [
      { type: 'hello', protocol: 1, job: j },
      start(0, 1),
      chunk(0, 1, 0, 'preparing\n'),
      end(0, 1, 'SUCCEEDED', 0),
      taskMsg(0, 'SUCCEEDED'),
      start(1, 1),
      chunk(1, 1, 0, 'all done\n'),
      end(1, 1, 'SUCCEEDED', 0),
      taskMsg(1, 'SUCCEEDED'),
      { type: 'end', status: 'SUCCEEDED', follow: true },
    ]);
    expect(out).toBe('preparing\nall done\n');
    expect(err).toContain('├── Task 0 (prepare) succeeded; moving on to task 1 (report)');
    expect(err.indexOf('moving on to task 1')).toBeLessThan(err.indexOf('Task 1 (report), attempt 1 started'));
    expect(err.trimEnd().split('\n').at(-1)).toBe('✓ Job 9 finished (status: SUCCEEDED)');
    expect(r.outcome()).toEqual({ status: 'SUCCEEDED', terminal: true });
  });

  it('a replay without task messages still tells the move to the next task', () => {
    const r = new FollowRenderer({ jobId: 9 });
    const j = job(9, [task(0, { name: 'a', status: 'SUCCEEDED' }), task(1, { name: 'b', status: 'SUCCEEDED' })], { status: 'SUCCEEDED' });
    const { err } = play(r, [
      { type: 'hello', protocol: 1, job: j },
      start(0, 1),
      end(0, 1, 'SUCCEEDED', 0),
      start(1, 1),
      end(1, 1, 'SUCCEEDED', 0),
      { type: 'end', status: 'SUCCEEDED', follow: true },
    ]);
    expect(err.match(/moving on to task 1 \(b\)/g)).toHaveLength(1);
  });
});

describe('FollowRenderer — resume after a dropped connection', () => {
  it('prints nothing twice: repeated start message, overlapping and old chunks are dropped', () => {
    const r = new FollowRenderer({ jobId: 1 });
    const j = job(1, [task(0)]);
    const first = play(r, [{ type: 'hello', protocol: 1, job: j }, start(0, 1), chunk(0, 1, 0, 'abc'), chunk(0, 1, 3, 'def')]);
    expect(r.position()).toEqual({ task: 0, attempt: 1, offset: 6 });
    // The server re-sends hello and the start attempt's start message, then bytes from 4
    // (overlap of 2: "ef" was already printed), then an old chunk again.
    const second = play(r, [{ type: 'hello', protocol: 1, job: j }, start(0, 1), chunk(0, 1, 4, 'efgh'), chunk(0, 1, 0, 'abc'), end(0, 1, 'SUCCEEDED', 0), { type: 'end', status: 'SUCCEEDED', follow: true }]);
    expect(first.out + second.out).toBe('abcdefgh');
    expect((first.err + second.err).match(/attempt 1 started/g)).toHaveLength(1);
    expect((first.err + second.err).match(/├── Job 1/g)).toHaveLength(1);
  });

  it('after an attempt end the resume position is the next attempt at offset 0', () => {
    const r = new FollowRenderer({ jobId: 1 });
    play(r, [{ type: 'hello', protocol: 1, job: job(1, [task(0, { maxRestarts: 2 })]) }, start(0, 1), chunk(0, 1, 0, 'x\n'), end(0, 1, 'FAILED', 3)]);
    expect(r.position()).toEqual({ task: 0, attempt: 2, offset: 0 });
  });

  it('`since` is the eventId of the attempt message that set the position, not the highest id seen', () => {
    const r = new FollowRenderer({ jobId: 1 });
    play(r, [{ type: 'hello', protocol: 1, job: job(1, [task(0, { maxRestarts: 1 })]) }, { ...taskMsg(0, 'STARTING'), eventId: 5 } as StreamMessage, { type: 'job', status: 'RUNNING', reason: null, at: AT, eventId: 7 }]);
    expect(r.since()).toBeUndefined(); // before any attempt: every status message again (deduped)
    play(r, [{ ...start(0, 1), eventId: 8 } as StreamMessage, { type: 'job', status: 'RUNNING', reason: null, at: AT, eventId: 12 }]);
    expect(r.since()).toBe(8);
    play(r, [{ ...end(0, 1, 'FAILED', 1), eventId: 10 } as StreamMessage]);
    expect(r.since()).toBe(10);
    expect(r.position()).toEqual({ task: 0, attempt: 2, offset: 0 });
  });

  it('a status message sent again after a resume (same eventId) is handled once', () => {
    const r = new FollowRenderer({ jobId: 1 });
    const rec = { type: 'job', status: 'RECOVERING', reason: 'lost', at: AT, eventId: 9 } as StreamMessage;
    const { err } = play(r, [{ type: 'hello', protocol: 1, job: job(1, [task(0)]) }, start(0, 1), rec, rec, { ...rec, eventId: 11 } as StreamMessage]);
    expect(err.match(/is recovering/g)).toHaveLength(2);
  });

  it('a gap in the bytes is reported, not silently glued', () => {
    const r = new FollowRenderer({ jobId: 1 });
    const { out, err } = play(r, [start(0, 1), chunk(0, 1, 0, 'ab'), chunk(0, 1, 5, 'fg')]);
    expect(out).toBe('abfg');
    expect(err).toContain('3 bytes of task 0 attempt 1 were not received');
  });
});

describe('FollowRenderer — markers', () => {
  it('setup failure, cancel, lost attempt and recovery', () => {
    const r = new FollowRenderer({ jobId: 2 });
    const { err } = play(r, [
      { type: 'hello', protocol: 1, job: job(2, [task(0, { maxRestarts: 1 })]) },
      start(0, 1),
      end(0, 1, 'FAILED_SETUP', 2),
      start(0, 2, 'recovery'),
      end(0, 2, 'LOST', null),
      start(0, 3, 'restart'),
      { type: 'job', status: 'CANCELLING', reason: 'cancel requested', at: AT },
      end(0, 3, 'CANCELLED', 143),
      { type: 'end', status: 'CANCELLED', follow: true },
    ]);
    expect(err).toContain('Task 0 attempt 1 setup failed with exit code 2');
    expect(err).toContain('↻ Recovering task 0 (attempt 2)');
    expect(err).toContain('Task 0 attempt 2 was lost');
    // Attempt 2 was a recovery (not counted against the budget): restart 1 of 1 is attempt 3 of 3.
    expect(err).toContain('↻ Restarting task 0 (attempt 3 of 3)');
    expect(err).toContain('Job 2 is being cancelled: cancel requested');
    expect(err).toContain('Task 0 attempt 3 cancelled (exit code 143)');
    expect(err.trimEnd().split('\n').at(-1)).toBe('✗ Job 2 finished (status: CANCELLED)');
  });

  it('ends a log line the job left open before a marker when stdout and stderr share a terminal', () => {
    const r = new FollowRenderer({ jobId: 3, sameTerminal: true });
    const { all } = play(r, [start(0, 1), chunk(0, 1, 0, 'no newline at the end'), end(0, 1, 'SUCCEEDED', 0)]);
    expect(all).toContain('no newline at the end\n│   Task 0 attempt 1 succeeded');
    const r2 = new FollowRenderer({ jobId: 3 });
    const p2 = play(r2, [start(0, 1), chunk(0, 1, 0, 'open'), end(0, 1, 'SUCCEEDED', 0)]);
    expect(p2.out).toBe('open'); // stdout is never altered
  });

  it('terminalSafe: escape sequences split across chunks are removed, colours kept and reset at the attempt end', () => {
    const E = '\u001b';
    const r = new FollowRenderer({ jobId: 3, terminalSafe: true });
    const { out, all } = play(r, [
      start(0, 1),
      ...pieces(0, 1, [`a${E}]0;ti`, `tle\u0007b${E}[3`, `1mred\n`]),
      end(0, 1, 'FAILED', 1),
      start(0, 2, 'restart', { n: 1, max: 1 }),
      chunk(0, 2, 0, `${E}[2Jc\n`),
      end(0, 2, 'SUCCEEDED', 0, 'restart'),
      { type: 'end', status: 'SUCCEEDED', follow: true },
    ]);
    expect(out).toBe(`ab${E}[31mred\n${E}[0mc\n`);
    expect(all).not.toContain('not received');
    // The reset comes before the marker that follows the attempt.
    expect(all.indexOf(`${E}[0m`)).toBeLessThan(all.indexOf('attempt 1 failed'));
    // Positions count the bytes received, not the bytes shown.
    expect(r.position()).toEqual({ task: 0, attempt: 3, offset: 0 });
  });

  it('without terminalSafe the bytes pass exactly, escape sequences and all', () => {
    const E = '\u001b';
    const text = `a${E}]0;title\u0007b${E}[2J\u00c2\u009b`;
    const { out } = play(new FollowRenderer({ jobId: 3 }), [start(0, 1), chunk(0, 1, 0, text)]);
    expect(out).toBe(text);
  });

  it('terminalSafe: flush() at a stop resets colours the log left on', () => {
    const r = new FollowRenderer({ jobId: 3, terminalSafe: true });
    play(r, [start(0, 1), chunk(0, 1, 0, '\u001b[32mgreen')]);
    expect(r.flush().map((o) => (o.to === 'out' ? dec.decode(o.data) : o.text))).toEqual(['\u001b[0m']);
    expect(r.flush()).toEqual([]);
  });

  it('--no-follow on a running job: what exists, then a note, outcome not terminal', () => {
    const r = new FollowRenderer({ jobId: 5, follow: false });
    const { err } = play(r, [
      { type: 'hello', protocol: 1, job: job(5, [task(0, { status: 'RUNNING' })], { status: 'RUNNING' }) },
      start(0, 1),
      chunk(0, 1, 0, 'epoch 1\n'),
      { type: 'end', status: 'RUNNING', follow: false },
    ]);
    expect(err).toContain('└── Job 5 is RUNNING; not following');
    expect(err).not.toContain('Ctrl-C');
    expect(r.outcome()).toEqual({ status: 'RUNNING', terminal: false });
  });

  it('colours only when asked', () => {
    const plain = play(new FollowRenderer({ jobId: 1 }), seedSteps()).err;
    expect(plain).not.toContain('\u001b[');
  });
});

describe('FollowRenderer — scope (one task, one attempt)', () => {
  it('TASK: ignores other tasks and ends when that task ends', () => {
    const r = new FollowRenderer({ jobId: 8, scope: { task: 1 } });
    const j = job(8, [task(0, { name: 'a' }), task(1, { name: 'b' }), task(2, { name: 'c' })]);
    const { out, err } = play(r, [
      { type: 'hello', protocol: 1, job: j },
      start(1, 1),
      chunk(1, 1, 0, 'b says hi\n'),
      end(1, 1, 'SUCCEEDED', 0),
      taskMsg(1, 'SUCCEEDED'),
      start(2, 1),
      chunk(2, 1, 0, 'c output\n'),
    ]);
    expect(out).toBe('b says hi\n');
    expect(r.done).toBe(true);
    expect(err.trimEnd().split('\n').at(-1)).toBe('✓ Task 1 (b) finished (status: SUCCEEDED)');
    expect(r.outcome()).toEqual({ status: 'SUCCEEDED', terminal: true });
  });

  it('TASK: the start of a later task ends it too when no task message came', () => {
    const r = new FollowRenderer({ jobId: 8, scope: { task: 0 } });
    play(r, [{ type: 'hello', protocol: 1, job: job(8, [task(0), task(1)]) }, start(0, 1), end(0, 1, 'SUCCEEDED', 0), start(1, 1)]);
    expect(r.done).toBe(true);
    expect(r.outcome().status).toBe('SUCCEEDED');
  });

  it('--attempt: only that attempt; ends with its status', () => {
    const r = new FollowRenderer({ jobId: 8, scope: { task: 0, attempt: 1 } });
    const { out, err } = play(r, [
      { type: 'hello', protocol: 1, job: job(8, [task(0, { maxRestarts: 1 })]) },
      start(0, 1),
      chunk(0, 1, 0, 'first\n'),
      end(0, 1, 'FAILED', 1),
      start(0, 2, 'restart'),
      chunk(0, 2, 0, 'second\n'),
    ]);
    expect(out).toBe('first\n');
    expect(err).not.toContain('Restarting');
    expect(err.trimEnd().split('\n').at(-1)).toBe('✗ Task 0 attempt 1 finished (status: FAILED)');
    expect(r.outcome()).toEqual({ status: 'FAILED', terminal: true });
  });

  it('TASK not started with --no-follow: ends at once, not terminal', () => {
    const r = new FollowRenderer({ jobId: 8, scope: { task: 1 }, follow: false });
    const { err } = play(r, [{ type: 'hello', protocol: 1, job: job(8, [task(0, { status: 'RUNNING' }), task(1)], { status: 'RUNNING' }) }, { type: 'end', status: 'RUNNING', follow: false }]);
    expect(r.done).toBe(true);
    expect(r.outcome()).toEqual({ status: 'PENDING', terminal: false });
    expect(err).toContain('Task 1 has not ended (status: PENDING)');
  });
});
