import { describe, expect, it } from 'vitest';
import { appendSample, coresSeries, halveSeries, placeSample, usageFigures, USAGE_MAX_POINTS, type UsagePoint } from '../../lib/jobs/usage';

/** The i-th sample of a run one second a sample, using one core, memory rising 1 MB a sample. */
const sample = (i: number): UsagePoint => [i * 1000, i * 1000, (i + 1) * 1e6, 1 + (i % 3), 1];

describe('usage series', () => {
  it('halving merges neighbours: the later time and CPU total, the higher memory and process count, the samples summed', () => {
    const s: UsagePoint[] = [
      [1000, 10, 500, 2, 1],
      [2000, 30, 300, 5, 1],
      [3000, 60, 900, 1, 1],
      [4000, 70, 100, 1, 1],
      [5000, 90, 50, 3, 1],
    ];
    expect(halveSeries(s)).toEqual([
      [2000, 30, 500, 5, 2],
      [4000, 70, 900, 1, 2],
      [5000, 90, 50, 3, 1],
    ]);
  });

  it('a long run stays bounded AND evenly spaced: after a halving, new samples merge at the coarser resolution', () => {
    let s: UsagePoint[] = [];
    const ops = { append: 0, merge: 0, halve: 0 };
    for (let i = 0; i < 5000; i++) {
      const r = appendSample(s, sample(i), 720);
      ops[r.op]++;
      s = r.points;
      expect(s.length).toBeLessThanOrEqual(720);
    }
    expect(ops.halve).toBe(3); // 720 → 1440 → 2880 → 5760 samples fit
    expect(s.length).toBe(Math.ceil(5000 / 8));
    // Every point but the last stands for 8 samples, 8 s apart: the oldest part is no coarser than the newest.
    for (const p of s.slice(0, -1)) expect(p[4]).toBe(8);
    const gaps = s.slice(1).map((p, i) => p[0] - s[i][0]);
    expect(new Set(gaps.slice(0, -1))).toEqual(new Set([8000]));
    expect(s[s.length - 1][0]).toBe(4999 * 1000);
    // The memory peak survives every merge.
    expect(Math.max(...s.map((p) => p[2]))).toBe(5000 * 1e6);
    expect(s.reduce((n, p) => n + p[4], 0)).toBe(5000);
  });

  it('the CPU rate stays exact through merges (cumulative CPU time)', () => {
    const s = halveSeries(halveSeries(Array.from({ length: 100 }, (_, i) => sample(i))));
    for (const c of coresSeries(s)) expect(c.cores).toBeCloseTo(1, 9);
  });

  it('placeSample works from the shape alone (what a server that did not hold the series knows)', () => {
    expect(placeSample({ length: 0, weight: 1, last: null }, 4)).toBe('append');
    expect(placeSample({ length: 3, weight: 1, last: [0, 0, 0, 0, 1] }, 4)).toBe('append');
    expect(placeSample({ length: 4, weight: 1, last: [0, 0, 0, 0, 1] }, 4)).toBe('halve');
    expect(placeSample({ length: 4, weight: 2, last: [0, 0, 0, 0, 1] }, 4)).toBe('merge');
    expect(() => appendSample([], sample(0), 1)).toThrow(RangeError);
    expect(USAGE_MAX_POINTS).toBe(720);
  });
});

describe('usage figures (seff-like)', () => {
  const startedAt = new Date('2026-01-01T00:00:00Z');
  const endedAt = new Date('2026-01-01T00:01:40Z'); // 100 s
  it('CPU efficiency is CPU-seconds ÷ (cpus × wall); memory is peak ÷ requested', () => {
    const f = usageFigures({ cpuMs: 100_000, peakRssBytes: 2 * 2 ** 30 }, { cpus: 8, memoryBytes: 4 * 2 ** 30, startedAt, endedAt, now: endedAt });
    expect(f).toEqual({ cpuSeconds: 100, averageCores: 1, cpuEfficiency: 0.125, peakRssBytes: 2 * 2 ** 30, memoryEfficiency: 0.5 });
  });
  it('nothing recorded is null, never zeros; no memory requested gives no memory efficiency', () => {
    expect(usageFigures({ cpuMs: null, peakRssBytes: null }, { cpus: 1, memoryBytes: null, startedAt, endedAt, now: endedAt })).toBeNull();
    expect(usageFigures({ cpuMs: 5, peakRssBytes: 10 }, { cpus: 1, memoryBytes: null, startedAt, endedAt, now: endedAt })?.memoryEfficiency).toBeNull();
    expect(usageFigures({ cpuMs: 5, peakRssBytes: 10 }, { cpus: 1, memoryBytes: null, startedAt: null, endedAt, now: endedAt })?.cpuEfficiency).toBeNull();
  });
});
