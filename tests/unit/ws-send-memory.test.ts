import { describe, expect, it } from 'vitest';
import { FramePool, LogSendBudget } from '../../lib/ws/job-stream';

describe('LogSendBudget', () => {
  const limits = { highWater: 1024 * 1024, totalHighWater: 16 * 1024 * 1024, chunkBytes: 256 * 1024 };
  it('gives each sender budget / senders, between one frame and the per-socket high-water mark', () => {
    const b = new LogSendBudget(limits);
    expect(b.highWater()).toBe(1024 * 1024); // nobody sending yet: the per-socket mark
    for (let i = 0; i < 16; i++) b.enter();
    expect(b.highWater()).toBe(1024 * 1024); // 16 MiB / 16
    for (let i = 0; i < 16; i++) b.enter();
    expect(b.highWater()).toBe(512 * 1024); // 16 MiB / 32
    for (let i = 0; i < 200; i++) b.enter();
    expect(b.highWater()).toBe(256 * 1024); // never below one frame
    for (let i = 0; i < 300; i++) b.leave();
    expect(b.senders).toBe(0); // leave() never goes below zero
    expect(b.highWater()).toBe(1024 * 1024);
  });
});

describe('FramePool', () => {
  it('hands a given-back full-size buffer out again, keeps at most `keep`, and never pools other sizes', () => {
    const pool = new FramePool(1024, 2);
    const a = pool.take(1024);
    const b = pool.take(1024);
    const c = pool.take(1024);
    expect(new Set([a, b, c]).size).toBe(3);
    pool.give(a);
    pool.give(b);
    pool.give(c); // over `keep`: dropped
    expect(pool.size).toBe(2);
    expect([pool.take(1024), pool.take(1024)]).toEqual(expect.arrayContaining([a, b]));
    expect(pool.take(1024)).not.toBe(c);
    const small = pool.take(100);
    expect(small.length).toBe(100);
    pool.give(small);
    expect(pool.size).toBe(0);
  });

  it('trim() keeps `floor` spares once nothing was taken since the previous trim', () => {
    const pool = new FramePool(1024, 6, 2);
    const bufs = Array.from({ length: 6 }, () => pool.take(1024));
    for (const b of bufs) pool.give(b);
    expect(pool.size).toBe(6);
    pool.trim(); // taken since the last trim: still busy, nothing dropped
    expect(pool.size).toBe(6);
    pool.trim(); // idle since: down to the floor
    expect(pool.size).toBe(2);
    pool.take(1024);
    pool.trim();
    expect(pool.size).toBe(1);
  });
});
