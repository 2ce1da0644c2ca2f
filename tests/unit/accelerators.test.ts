/**
 * GPUs (docs/spec.md "accelerators"): the spec's forms, Slurm's GRES request (the type mapping
 * of JOBDECK_SLURM_GPU_TYPES, lower case by default), the variables an attempt gets, and the local
 * executor's refusal at submit of more GPUs than the machine has.
 */
import { describe, expect, it } from 'vitest';
import { gresArgs, slurmGpuType } from '../../lib/executors/slurm-launch';
import { localGpuCount } from '../../lib/executors/gpus';
import { taskEnv } from '../../lib/executors/wrapper';
import { checkJobSpec, formatSpecIssue, parseAccelerators } from '../../lib/jobs/spec';
import { readTaskSpec } from '../../lib/monitor/taskspec';

describe('accelerators', () => {
  it('reads one type and a whole count', () => {
    expect(parseAccelerators('A100:2')).toEqual({ type: 'A100', count: 2 });
    expect(parseAccelerators('V100')).toEqual({ type: 'V100', count: 1 });
    expect(parseAccelerators({ H100: 8 })).toEqual({ type: 'H100', count: 8 });
    expect(parseAccelerators(null)).toBeNull();
    expect(parseAccelerators('A100:0.5')).toMatch(/fractions are not supported/);
    expect(parseAccelerators(['A100', 'V100'])).toMatch(/a list of alternatives is not supported/);
    expect(parseAccelerators({ A100: 1, V100: 1 })).toMatch(/alternatives \(A100, V100\)/);
    expect(parseAccelerators('A100:65')).toMatch(/from 1 to 64/);
  });

  it('becomes --gres=gpu:<type>:<count> on Slurm, the type mapped or lower-cased', () => {
    expect(gresArgs({ type: 'A100', count: 2 }, {})).toEqual(['--gres=gpu:a100:2']);
    expect(gresArgs({ type: 'H100', count: 1 }, { JOBDECK_SLURM_GPU_TYPES: 'a100=nvidia_a100, h100=h100_80gb' })).toEqual(['--gres=gpu:h100_80gb:1']);
    expect(gresArgs(undefined, {})).toEqual([]);
    expect(slurmGpuType('T4', { JOBDECK_SLURM_GPU_TYPES: 'A100=a100' })).toBe('t4');
    expect(() => slurmGpuType('T4', { JOBDECK_SLURM_GPU_TYPES: 'A100' })).toThrow(/TYPE=GRES_TYPE/);
  });

  it('the stored spec carries them to the launch; the attempt gets SKYPILOT_NUM_GPUS_PER_NODE (and CUDA_VISIBLE_DEVICES locally)', () => {
    const spec = checkJobSpec('run: x\nresources:\n  infra: slurm\n  accelerators: A100:2\n').spec!;
    expect(readTaskSpec(JSON.parse(JSON.stringify(spec.tasks[0])), 1).gpus).toEqual({ type: 'A100', count: 2 });
    expect('gpus' in readTaskSpec(JSON.parse(JSON.stringify(checkJobSpec('run: x\n').spec!.tasks[0])), 1)).toBe(false);
    const base = { envs: {}, jobId: 1, taskIndex: 0, attempt: 1 };
    expect(taskEnv({ ...base, gpus: { type: 'A100', count: 2 } }, 'slurm')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '2' });
    expect(taskEnv({ ...base, gpus: { type: 'A100', count: 2 } }, 'slurm').CUDA_VISIBLE_DEVICES).toBeUndefined();
    expect(taskEnv({ ...base, gpus: { type: 'A100', count: 3 } }, 'local')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '3', CUDA_VISIBLE_DEVICES: '0,1,2' });
    expect(taskEnv(base, 'local')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '0' });
  });

  it('on the local executor, more GPUs than the machine has are refused at the key; Slurm is not counted', () => {
    const text = 'run: x\nresources:\n  accelerators: A100:2\n';
    expect(checkJobSpec(text, { defaultExecutor: 'local', localGpus: 0 }).issues.map(formatSpecIssue)).toEqual([
      'job.yaml:3 task[0].resources.accelerators: accelerators: asks for 2 GPUs (A100:2); the local executor has 0 (nvidia-smi -L, or JOBDECK_LOCAL_GPUS): no resource can run it — use infra: slurm',
    ]);
    expect(checkJobSpec(text, { defaultExecutor: 'local', localGpus: 2 }).issues).toEqual([]);
    expect(checkJobSpec(text, { defaultExecutor: 'slurm', localGpus: 0 }).issues).toEqual([]);
    expect(localGpuCount({ JOBDECK_LOCAL_GPUS: '4' })).toBe(4);
    expect(() => localGpuCount({ JOBDECK_LOCAL_GPUS: 'x' })).toThrow(/integer ≥ 0/);
  });
});
