/**
 * The dependency rule (lib/jobs/dependencies.ts, Slurm's afterok / afternotok / afterany) and the
 * array expansion (lib/jobs/spec/flow.ts): ranks, the cartesian product, names, the CLI's --param.
 */
import { describe, expect, it } from 'vitest';
import { decideDependencies } from '../../lib/jobs/dependencies';
import { arraySlots, parseParamFlag, slotEnvs, slotName } from '../../lib/jobs/spec';

describe('decideDependencies', () => {
  it('waits, is met, or can never be met, per mode', () => {
    expect(decideDependencies([{ onJobId: 41, after: 'ok', status: 'RUNNING' }])).toEqual({ kind: 'wait', reason: 'waits for job 41 to succeed' });
    expect(decideDependencies([{ onJobId: 41, after: 'ok', status: 'SUCCEEDED' }])).toEqual({ kind: 'met' });
    expect(decideDependencies([{ onJobId: 41, after: 'ok', status: 'FAILED_SETUP' }])).toEqual({ kind: 'never', reason: 'job 41 ended FAILED_SETUP; this job waited for it to succeed (after: ok)' });
    expect(decideDependencies([{ onJobId: 41, after: 'failed', status: 'CANCELLED' }])).toEqual({ kind: 'met' });
    expect(decideDependencies([{ onJobId: 41, after: 'failed', status: 'SUCCEEDED' }]).kind).toBe('never');
    expect(decideDependencies([{ onJobId: 41, after: 'any', status: 'FAILED' }])).toEqual({ kind: 'met' });
    expect(decideDependencies([{ onJobId: 41, after: 'any', status: null }])).toEqual({ kind: 'met' });
    expect(decideDependencies([{ onJobId: 41, after: 'ok', status: null }]).kind).toBe('never');
  });

  it('decides never as soon as one edge cannot be met, and names what is still awaited', () => {
    const deps = [41, 42, 43, 44].map((id) => ({ onJobId: id, after: 'ok' as const, status: 'RUNNING' }));
    expect(decideDependencies(deps)).toEqual({ kind: 'wait', reason: 'waits for jobs 41, 42, 43 and 1 more to succeed' });
    expect(decideDependencies([...deps, { onJobId: 45, after: 'ok', status: 'FAILED' }]).kind).toBe('never');
  });
});

describe('arrays', () => {
  it('expands the product, the first parameter slowest, num_jobs copies each, with ranks, envs and names', () => {
    const slots = arraySlots({ numJobs: 2, params: [['lr', ['1e-3', '3e-4']], ['seed', ['1', '2', '3']]] });
    expect(slots).toHaveLength(12);
    expect(slots.slice(0, 3).map((s) => [s.index, s.values])).toEqual([
      [0, [['lr', '1e-3'], ['seed', '1']]],
      [1, [['lr', '1e-3'], ['seed', '1']]],
      [2, [['lr', '1e-3'], ['seed', '2']]],
    ]);
    expect(slotEnvs(slots[11], 12)).toEqual({ SKYPILOT_JOB_RANK: '11', SKYPILOT_NUM_JOBS: '12', JOBDECK_ARRAY_INDEX: '11', JOBDECK_ARRAY_COUNT: '12', lr: '3e-4', seed: '3' });
    expect(slotName('sweep', slots[11])).toBe('sweep[lr=3e-4 seed=3]');
    expect(slotName('plain', arraySlots({ numJobs: 3, params: [] })[2])).toBe('plain[2]');
    expect(slotName('x'.repeat(126), slots[0]).length).toBeLessThanOrEqual(128);
  });

  it("parses the CLI's --param, saying what is wrong", () => {
    expect(parseParamFlag('lr=1e-3,3e-4')).toEqual(['lr', ['1e-3', '3e-4']]);
    expect(() => parseParamFlag('lr')).toThrow('--param lr: expected NAME=v1,v2,…');
    expect(() => parseParamFlag('1x=2')).toThrow('--param 1x=2: "1x" is not a parameter name (letters, digits and _, not starting with a digit)');
    expect(() => parseParamFlag('lr=1,,2')).toThrow('--param lr=1,,2: a value is empty');
  });
});
