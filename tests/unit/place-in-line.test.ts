/**
 * A waiting job's place in line (lib/jobs/capacity placesInLine) and its words
 * (lib/jobs/waiting placeText): positions in line order among the jobs still waiting, per
 * executor, the queue position always, the overall one only as far as the pass read the line.
 */
import { describe, expect, it } from 'vitest';
import { placesInLine, type PlacedJob } from '../../lib/jobs/capacity';
import { ordinal, placeText } from '../../lib/jobs/waiting';

const j = (id: number, priority: number, queue = 'default', cpus = 1, gpus = 0, executor = 'local'): PlacedJob => ({ id, priority, queue, cpus, gpus, executor });

describe('placesInLine', () => {
  it('orders by priority then id, per executor; ahead sums the CPUs and GPUs of the jobs before', () => {
    const places = placesInLine([j(3, 500, 'gpu', 2, 1), j(1, 500), j(2, 900, 'gpu', 0.1, 2), j(4, 500, 'default', 1, 0, 'slurm')], { local: 'all', slurm: 'all' });
    expect(places.get(2)).toEqual({ position: 1, queuePosition: 1, ahead: { jobs: 0, cpus: 0, gpus: 0 } });
    expect(places.get(1)).toEqual({ position: 2, queuePosition: 1, ahead: { jobs: 1, cpus: 0.1, gpus: 2 } });
    expect(places.get(3)).toEqual({ position: 3, queuePosition: 2, ahead: { jobs: 2, cpus: 1.1, gpus: 2 } });
    expect(places.get(4)).toEqual({ position: 1, queuePosition: 1, ahead: { jobs: 0, cpus: 0, gpus: 0 } });
  });

  it('past where the pass read without a gap: no overall position, the queue position still', () => {
    const places = placesInLine([j(1, 900), j(2, 500), j(3, 500, 'gpu'), j(4, 100, 'gpu')], { local: { id: 2, priority: 500 } });
    expect(places.get(2)?.position).toBe(2);
    expect(places.get(3)).toEqual({ position: null, queuePosition: 1, ahead: null });
    expect(places.get(4)).toEqual({ position: null, queuePosition: 2, ahead: null });
    // An executor the pass has no bound for: queue positions only.
    expect(placesInLine([j(5, 500)], {}).get(5)).toEqual({ position: null, queuePosition: 1, ahead: null });
  });
});

describe('placeText', () => {
  it('says the place in a column and in a sentence', () => {
    const p = { position: 3, queuePosition: 2, ahead: { jobs: 2, cpus: 6, gpus: 2 } };
    expect(placeText(p, 'gpu', true)).toBe('#3 · q2');
    expect(placeText(p, 'gpu')).toBe('3rd in line (2nd in queue gpu); ahead: 2 jobs asking for 6 CPUs, 2 GPUs');
    expect(placeText({ position: 1, queuePosition: 1, ahead: { jobs: 0, cpus: 0, gpus: 0 } }, 'default')).toBe('1st in line (1st in queue default); nothing waits ahead');
    expect(placeText({ position: 2, queuePosition: 1, ahead: { jobs: 1, cpus: 0.5, gpus: 0 } }, 'a')).toBe('2nd in line (1st in queue a); ahead: 1 job asking for 0.5 CPUs');
    expect(placeText({ position: null, queuePosition: 4, ahead: null }, 'gpu', true)).toBe('q4');
    expect(placeText({ position: null, queuePosition: 4, ahead: null }, 'gpu')).toBe('4th in queue gpu');
    expect(placeText(null, 'gpu')).toBe('');
  });

  it('ordinals', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal)).toEqual(['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '111th']);
  });
});
