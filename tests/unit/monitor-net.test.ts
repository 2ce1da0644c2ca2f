/**
 * The monitor's periodic work at scale, kept from growing with the running jobs: the reconcile
 * pass's safety net (docs/design.md §6: a watched job stepped every 30th pass, and past 300
 * watched jobs the period grows so that a pass makes at most 10 such steps), and the usage
 * sampler's rounds (§7: past 1,000 live attempts they space out in proportion).
 */
import { describe, expect, it } from 'vitest';
import { safetyNetPeriod } from '../../lib/monitor/monitor';
import { nextUsageRoundMs } from '../../lib/monitor/usage';

describe('the safety net of watched jobs', () => {
  it('steps each watched job every 30 passes up to 300 jobs, then at most 10 a pass', () => {
    expect([0, 1, 300].map(safetyNetPeriod)).toEqual([30, 30, 30]);
    expect([301, 1000, 5000].map(safetyNetPeriod)).toEqual([31, 100, 500]);
  });

  it('over a whole period every job is stepped once and no pass steps more than 10 (ids staggered)', () => {
    for (const n of [50, 300, 1000, 5000]) {
      const every = safetyNetPeriod(n);
      const ids = Array.from({ length: n }, (_, i) => 1000 + i);
      const stepped = new Map<number, number>();
      let most = 0;
      for (let pass = 0; pass < every; pass++) {
        const these = ids.filter((id) => (id + pass) % every === 0);
        most = Math.max(most, these.length);
        for (const id of these) stepped.set(id, (stepped.get(id) ?? 0) + 1);
      }
      expect(stepped.size).toBe(n);
      expect([...stepped.values()].every((k) => k === 1)).toBe(true);
      expect(most).toBeLessThanOrEqual(Math.max(10, Math.ceil(n / 30)));
    }
  });
});

describe('usage rounds at scale', () => {
  it('keep the configured interval up to 1,000 live attempts, then space out in proportion', () => {
    expect([0, 10, 1000].map((n) => nextUsageRoundMs(5000, n))).toEqual([5000, 5000, 5000]);
    expect([2000, 5000].map((n) => nextUsageRoundMs(5000, n))).toEqual([10_000, 25_000]);
    // A shorter configured interval keeps its proportion: the attempts sampled per second stay bounded.
    expect(nextUsageRoundMs(1000, 5000)).toBe(5000);
  });
});
