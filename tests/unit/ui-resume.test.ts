import { describe, expect, it } from 'vitest';
import { compareAttempt, ResumeTracker } from '../../lib/ui/resume';

describe('ResumeTracker', () => {
  it('starts at task 0, attempt 1, offset 0 and advances with chunks', () => {
    const t = new ResumeTracker();
    expect(t.query()).toBe('task=0&attempt=1&offset=0');
    expect(t.onChunk(0, 1, 0, 10)).toEqual({ skip: 0, gap: 0 });
    expect(t.onChunk(0, 1, 10, 5)).toEqual({ skip: 0, gap: 0 });
    expect(t.position).toEqual({ task: 0, attempt: 1, offset: 15 });
    expect(t.query()).toBe('task=0&attempt=1&offset=15');
  });

  it('drops bytes already received after a resume, keeps the new tail of an overlapping chunk', () => {
    const t = new ResumeTracker({ task: 0, attempt: 1, offset: 100 });
    expect(t.onChunk(0, 1, 50, 50)).toBeNull();
    expect(t.onChunk(0, 1, 90, 20)).toEqual({ skip: 10, gap: 0 });
    expect(t.position.offset).toBe(110);
  });

  it('reports a gap when the server skipped bytes', () => {
    const t = new ResumeTracker();
    t.onChunk(0, 1, 0, 10);
    expect(t.onChunk(0, 1, 15, 5)).toEqual({ skip: 0, gap: 5 });
    expect(t.position.offset).toBe(20);
  });

  it('moves to a later attempt/task and never back', () => {
    const t = new ResumeTracker();
    t.onChunk(0, 1, 0, 10);
    t.onAttemptStart(0, 2);
    expect(t.position).toEqual({ task: 0, attempt: 2, offset: 0 });
    expect(t.onChunk(0, 1, 10, 5)).toBeNull();
    t.onAttemptStart(0, 1);
    expect(t.position).toEqual({ task: 0, attempt: 2, offset: 0 });
    expect(t.onChunk(1, 1, 0, 3)).toEqual({ skip: 0, gap: 0 });
    expect(t.position).toEqual({ task: 1, attempt: 1, offset: 3 });
    t.onAttemptStart(1, 1);
    expect(t.position).toEqual({ task: 1, attempt: 1, offset: 3 });
  });

  it('an ended attempt moves the position to the next attempt; since carries the last event id', () => {
    const t = new ResumeTracker();
    t.onChunk(0, 1, 0, 10);
    t.onAttemptEnd(0, 1);
    expect(t.query()).toBe('task=0&attempt=2&offset=0');
    t.onAttemptEnd(0, 1);
    expect(t.position).toEqual({ task: 0, attempt: 2, offset: 0 });
    t.onEvent(12);
    t.onEvent(9);
    t.onEvent(undefined);
    expect(t.query()).toBe('task=0&attempt=2&offset=0&since=12');
  });

  it('orders attempts by task then attempt', () => {
    expect(compareAttempt({ task: 0, attempt: 2 }, { task: 1, attempt: 1 })).toBeLessThan(0);
    expect(compareAttempt({ task: 1, attempt: 1 }, { task: 0, attempt: 9 })).toBeGreaterThan(0);
    expect(compareAttempt({ task: 1, attempt: 1 }, { task: 1, attempt: 1 })).toBe(0);
  });
});
