/**
 * GPUs (docs/spec.md "accelerators", docs/design.md §6 "GPUs"): the spec's forms (alternatives,
 * shares of one GPU), Slurm's GRES request (the type mapping of JOBDECK_SLURM_GPU_TYPES, lower
 * case by default), what the local executor knows of its devices (JOBDECK_LOCAL_GPUS, nvidia-smi's
 * CSV as it prints it), the pool that grants devices, the variables an attempt gets, and the
 * refusals at submit of GPUs the executor can never grant.
 */
import { describe, expect, it } from 'vitest';
import { gresArgs, slurmGpuType } from '../../lib/executors/slurm/launch';
import { localGpuDevices } from '../../lib/executors/local/gpus';
import { taskEnv } from '../../lib/executors/wrapper';
import { attemptGpus, GpuPool, parseComputeApps, parseLocalGpus, parseNvidiaSmiGpus, typeMatches } from '../../lib/jobs/gpus';
import { checkJobSpec, formatSpecIssue, parseAccelerators, pipelineGpus } from '../../lib/jobs/spec';
import { readTaskSpec } from '../../lib/monitor/taskspec';

const untyped = (n: number) => parseLocalGpus(String(n))!;

/**
 * Output of `nvidia-smi --query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits` on
 * a mixed 4-GPU machine, and of `--query-compute-apps=pid,gpu_uuid --format=csv,noheader` with
 * one process on device 2 (recorded rows; the uuids are the machine's).
 */
const QUERY_GPU = [
  '0, NVIDIA A100-SXM4-80GB, 81920, GPU-b0354a1a-37c2-086d-f6fe-953b6fac5c3e',
  '1, NVIDIA A100-SXM4-80GB, 81920, GPU-7c1d2f0e-9a4b-4e41-b1c2-33d7e8f0a912',
  '2, Tesla V100-SXM2-16GB, 16160, GPU-2f6a9c44-0b8e-11ee-8c90-0242ac120002',
  '3, Tesla V100-SXM2-16GB, 16160, GPU-e3b2c1d0-5f4e-4a3b-9c8d-7e6f5a4b3c2d',
  '',
].join('\n');
const COMPUTE_APPS = '48211, GPU-2f6a9c44-0b8e-11ee-8c90-0242ac120002\n';

describe('accelerators: the spec forms', () => {
  it('reads a type and a count, alternatives in order, and a share of one GPU', () => {
    expect(parseAccelerators('A100:2')).toEqual([{ type: 'A100', count: 2 }]);
    expect(parseAccelerators('V100')).toEqual([{ type: 'V100', count: 1 }]);
    expect(parseAccelerators({ H100: 8 })).toEqual([{ type: 'H100', count: 8 }]);
    expect(parseAccelerators({ A100: 1, V100: 2 })).toEqual([{ type: 'A100', count: 1 }, { type: 'V100', count: 2 }]);
    expect(parseAccelerators(['A100:1', { V100: 1 }, 'T4'])).toEqual([{ type: 'A100', count: 1 }, { type: 'V100', count: 1 }, { type: 'T4', count: 1 }]);
    expect(parseAccelerators({ A100: null, V100: null })).toEqual([{ type: 'A100', count: 1 }, { type: 'V100', count: 1 }]);
    expect(parseAccelerators('T4:0.5')).toEqual([{ type: 'T4', count: 0.5 }]);
    expect(parseAccelerators({ T4: 0.25 })).toEqual([{ type: 'T4', count: 0.25 }]);
    expect(parseAccelerators(null)).toBeNull();
  });

  it('refuses what is not a GPU request, saying the form to write', () => {
    expect(parseAccelerators('A100:65')).toMatch(/a whole number from 1 to 64/);
    expect(parseAccelerators('A100:1.5')).toMatch(/a share of one GPU between 0 and 1/);
    expect(parseAccelerators('A100:0.0001')).toMatch(/a share of one GPU/);
    expect(parseAccelerators('A100:0')).toMatch(/GPU count/);
    expect(parseAccelerators({ 'A 100': 1 })).toMatch(/expected a GPU type/);
    expect(parseAccelerators([])).toMatch(/at least one GPU type/);
    expect(parseAccelerators(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`T${i}`, 1])))).toMatch(/at most 16 alternatives/);
    expect(parseAccelerators(3)).toMatch(/expected a GPU type and count/);
  });
});

describe('accelerators: devices and grants', () => {
  it('JOBDECK_LOCAL_GPUS: a count (untyped) or typed counts; anything else is named', () => {
    expect(parseLocalGpus('4')).toEqual([0, 1, 2, 3].map((index) => ({ index, type: null })));
    expect(parseLocalGpus('A100:2,V100:1')).toEqual([
      { index: 0, type: 'A100' },
      { index: 1, type: 'A100' },
      { index: 2, type: 'V100' },
    ]);
    expect(parseLocalGpus(' ')).toBeNull();
    expect(localGpuDevices({ JOBDECK_LOCAL_GPUS: 'A100:4' })).toHaveLength(4);
    for (const bad of ['x', '-1', 'A100:0', 'A100', '4.5']) expect(() => parseLocalGpus(bad)).toThrow(/^JOBDECK_LOCAL_GPUS must be a GPU count/);
  });

  it("reads nvidia-smi's CSV: index, name, memory and uuid; compute apps by uuid", () => {
    const devices = parseNvidiaSmiGpus(QUERY_GPU);
    expect(devices.map((d) => [d.index, d.type, d.memoryMiB])).toEqual([
      [0, 'NVIDIA A100-SXM4-80GB', 81920],
      [1, 'NVIDIA A100-SXM4-80GB', 81920],
      [2, 'Tesla V100-SXM2-16GB', 16160],
      [3, 'Tesla V100-SXM2-16GB', 16160],
    ]);
    // With the header and units (--format=csv) too.
    expect(parseNvidiaSmiGpus('index, name, memory.total [MiB], uuid\n0, NVIDIA A100 80GB PCIe, 81920 MiB, GPU-b0354a1a-37c2-086d-f6fe-953b6fac5c3e\n')[0]).toMatchObject({ index: 0, memoryMiB: 81920 });
    expect(parseComputeApps(COMPUTE_APPS)).toEqual([{ pid: 48211, uuid: 'GPU-2f6a9c44-0b8e-11ee-8c90-0242ac120002' }]);
    expect(parseComputeApps('No running processes found\n')).toEqual([]);
  });

  it('matches a type against a device name by its parts; untyped devices serve any type', () => {
    expect(typeMatches('A100', 'NVIDIA A100-SXM4-80GB')).toBe(true);
    expect(typeMatches('a100-80gb', 'NVIDIA A100-SXM4-80GB')).toBe(true);
    expect(typeMatches('V100', 'NVIDIA A100-SXM4-80GB')).toBe(false);
    expect(typeMatches('A10', 'NVIDIA A100-SXM4-80GB')).toBe(false);
    expect(typeMatches('T4', null)).toBe(true);
  });

  it('grants distinct whole devices, lowest first, and says why a job waits', () => {
    const pool = new GpuPool(untyped(4));
    const grants = [1, 2, 3, 4].map(() => pool.grant([{ type: 'A100', count: 1 }])!.devices.map((d) => d.index));
    expect(grants).toEqual([[0], [1], [2], [3]]);
    expect(pool.grant([{ type: 'A100', count: 1 }])).toBeNull();
    const half = new GpuPool(untyped(4), [{ type: 'X', count: 1, devices: [{ index: 1, share: 1 }] }, { type: 'X', count: 1, devices: [{ index: 2, share: 1 }] }, { type: 'X', count: 1, devices: [{ index: 3, share: 1 }] }]);
    expect(half.shortReason([{ type: 'A100', count: 2 }])).toBe('needs 2 GPUs, 1 of 4 free');
    expect(half.fit({ type: 'A100', count: 2 })).toBeNull();
  });

  it('never grants a device a process outside jobdeck holds', () => {
    const devices = parseNvidiaSmiGpus(QUERY_GPU);
    const held = new Set(parseComputeApps(COMPUTE_APPS).map((a) => devices.find((d) => d.uuid === a.uuid)!.index));
    const pool = new GpuPool(devices, [], held);
    expect(pool.grant([{ type: 'V100', count: 2 }])).toBeNull();
    expect(pool.grant([{ type: 'V100', count: 1 }])!.devices).toEqual([{ index: 3, share: 1 }]);
    expect(pool.shortReason([{ type: 'V100', count: 1 }])).toBe('needs 1 GPU (V100), 0 of 2 free');
  });

  it('alternatives: the first option that fits now, of a type the executor has', () => {
    const pool = new GpuPool(parseNvidiaSmiGpus(QUERY_GPU));
    expect(pool.grant([{ type: 'H100', count: 1 }, { type: 'A100', count: 2 }])).toMatchObject({ type: 'A100', devices: [{ index: 0 }, { index: 1 }] });
    // No A100 left: a V100 instead.
    expect(pool.grant([{ type: 'A100', count: 1 }, { type: 'V100', count: 1 }])).toMatchObject({ type: 'V100', devices: [{ index: 2 }] });
    expect(pool.never([{ type: 'H100', count: 1 }])).toBe('asks for H100:1 but the executor has 4 (NVIDIA A100-SXM4-80GB, Tesla V100-SXM2-16GB) GPUs');
    expect(pool.never([{ type: 'A100', count: 3 }, { type: 'V100', count: 1 }])).toBeNull();
  });

  it('shares of one GPU add up to at most 1 per device, packed onto as few devices as possible', () => {
    const pool = new GpuPool(untyped(2));
    const a = pool.grant([{ type: 'T4', count: 0.5 }])!;
    const b = pool.grant([{ type: 'T4', count: 0.3 }])!;
    const c = pool.grant([{ type: 'T4', count: 0.2 }])!;
    expect([a, b, c].map((g) => g.devices)).toEqual([[{ index: 0, share: 0.5 }], [{ index: 0, share: 0.3 }], [{ index: 0, share: 0.2 }]]);
    // Device 0 is full; a whole GPU takes device 1, then nothing is left.
    expect(pool.grant([{ type: 'T4', count: 0.1 }])).toMatchObject({ devices: [{ index: 1, share: 0.1 }] });
    expect(pool.grant([{ type: 'T4', count: 1 }])).toBeNull();
    expect(pool.shortReason([{ type: 'T4', count: 1 }])).toBe('needs 1 GPU, 0 of 2 free');
    expect(pool.shortReason([{ type: 'T4', count: 0.95 }])).toBe('needs 0.95 of a GPU, 0.9 of one free at most');
  });

  it('an attempt gets its own count of the granted type from the grant; without a grant, the first option', () => {
    const grant = { type: 'A100', count: 2, devices: [{ index: 2, share: 1 }, { index: 3, share: 1 }] };
    expect(attemptGpus([{ type: 'a100', count: 1 }], grant)).toEqual({ type: 'A100', count: 1, devices: [{ index: 2, share: 1 }] });
    expect(attemptGpus([{ type: 'A100', count: 2 }], grant)).toEqual({ type: 'A100', count: 2, devices: grant.devices });
    expect(attemptGpus([{ type: 'T4', count: 0.5 }], { type: 'T4', count: 0.5, devices: [{ index: 1, share: 0.5 }] })).toEqual({ type: 'T4', count: 0.5, devices: [{ index: 1, share: 0.5 }] });
    expect(attemptGpus([{ type: 'A100', count: 2 }], null)).toEqual({ type: 'A100', count: 2 });
    expect(attemptGpus(undefined, grant)).toBeNull();
  });
});

describe('accelerators: executors', () => {
  it('becomes --gres=gpu:<type>:<count> on Slurm, the type mapped or lower-cased', () => {
    expect(gresArgs({ type: 'A100', count: 2 }, {})).toEqual(['--gres=gpu:a100:2']);
    expect(gresArgs({ type: 'H100', count: 1 }, { JOBDECK_SLURM_GPU_TYPES: 'a100=nvidia_a100, h100=h100_80gb' })).toEqual(['--gres=gpu:h100_80gb:1']);
    expect(gresArgs(undefined, {})).toEqual([]);
    expect(slurmGpuType('T4', { JOBDECK_SLURM_GPU_TYPES: 'A100=a100' })).toBe('t4');
    expect(() => slurmGpuType('T4', { JOBDECK_SLURM_GPU_TYPES: 'A100' })).toThrow(/TYPE=GRES_TYPE/);
  });

  it('the stored spec carries them to the launch; the attempt gets SKYPILOT_NUM_GPUS_PER_NODE and, locally, its granted devices', () => {
    const spec = checkJobSpec('run: x\nresources:\n  infra: slurm\n  accelerators: {A100: 2, V100: 4}\n').spec!;
    expect(readTaskSpec(JSON.parse(JSON.stringify(spec.tasks[0])), 1).gpus).toEqual([{ type: 'A100', count: 2 }, { type: 'V100', count: 4 }]);
    expect('gpus' in readTaskSpec(JSON.parse(JSON.stringify(checkJobSpec('run: x\n').spec!.tasks[0])), 1)).toBe(false);
    const base = { envs: {}, jobId: 1, taskIndex: 0, attempt: 1 };
    expect(taskEnv({ ...base, gpus: { type: 'A100', count: 2 } }, 'slurm')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '2' });
    expect(taskEnv({ ...base, gpus: { type: 'A100', count: 2 } }, 'slurm').CUDA_VISIBLE_DEVICES).toBeUndefined();
    const granted = { type: 'A100', count: 2, devices: [{ index: 1, share: 1 }, { index: 3, share: 1 }] };
    expect(taskEnv({ ...base, gpus: granted }, 'local')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '2', CUDA_VISIBLE_DEVICES: '1,3' });
    expect(taskEnv({ ...base, gpus: { type: 'T4', count: 0.5, devices: [{ index: 2, share: 0.5 }] } }, 'local')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '1', CUDA_VISIBLE_DEVICES: '2' });
    expect(taskEnv(base, 'local')).toMatchObject({ SKYPILOT_NUM_GPUS_PER_NODE: '0' });
  });
});

describe('accelerators: refused at submit', () => {
  it('on the local executor: no device of the type, or fewer than asked; Slurm is not counted', () => {
    const text = 'run: x\nresources:\n  accelerators: A100:2\n';
    expect(checkJobSpec(text, { defaultExecutor: 'local', localGpus: [] }).issues.map(formatSpecIssue)).toEqual([
      'job.yaml:3 task[0].resources.accelerators: accelerators: asks for A100:2; the local executor has 0 GPUs (nvidia-smi, or JOBDECK_LOCAL_GPUS): no resource can run it — use infra: slurm',
    ]);
    expect(checkJobSpec(text, { defaultExecutor: 'local', localGpus: untyped(2) }).issues).toEqual([]);
    expect(checkJobSpec(text, { defaultExecutor: 'local', localGpus: parseLocalGpus('V100:4')! }).issues.map(formatSpecIssue)[0]).toContain('asks for A100:2; the local executor has 4 (V100) GPUs');
    expect(checkJobSpec(text, { defaultExecutor: 'slurm', localGpus: [] }).issues).toEqual([]);
  });

  it('alternatives keep the types this machine has; a share of one GPU is refused on Slurm', () => {
    const devices = parseLocalGpus('V100:2')!;
    const spec = checkJobSpec('run: x\nresources:\n  accelerators: {A100: 1, V100: 1}\n', { defaultExecutor: 'local', localGpus: devices }).spec!;
    expect(pipelineGpus(spec.tasks, 'local', devices)).toEqual({ options: [{ type: 'V100', count: 1 }], total: 1 });
    expect(checkJobSpec('run: x\nresources:\n  infra: slurm\n  accelerators: T4:0.5\n').issues.map(formatSpecIssue)).toEqual([
      "job.yaml:4 task[0].resources.accelerators: accelerators: T4:0.5 asks for a share of one GPU, which only the local executor grants: Slurm's GRES count whole GPUs",
    ]);
  });

  it('a local pipeline shares the job grant: its tasks name the same types; the job holds the largest count', () => {
    const two = 'run: a\nresources:\n  accelerators: A100:2\n---\nrun: b\nresources:\n  accelerators: A100:1\n';
    const ok = checkJobSpec(two, { defaultExecutor: 'local', localGpus: untyped(4) });
    expect(ok.issues).toEqual([]);
    expect(pipelineGpus(ok.spec!.tasks, 'local', untyped(4))).toEqual({ options: [{ type: 'A100', count: 2 }], total: 2 });
    const mixed = checkJobSpec('run: a\nresources:\n  accelerators: A100:1\n---\nrun: b\nresources:\n  accelerators: V100:1\n', { defaultExecutor: 'local', localGpus: untyped(4) });
    expect(mixed.issues.map(formatSpecIssue)).toEqual([
      "job.yaml:7 task[1].resources.accelerators: accelerators: GPU types V100 differ from task[0]'s A100: the tasks of a pipeline on the local executor share the job's GPUs, so they ask for the same types (the counts may differ)",
    ]);
  });

  it('any_of may list GPU alternatives and shares now', () => {
    const r = checkJobSpec('run: x\nresources:\n  any_of:\n    - accelerators: H100:1\n    - accelerators: {A100: 1, T4: 0.5}\n', { defaultExecutor: 'local', localGpus: parseLocalGpus('T4:1')! });
    expect(r.issues).toEqual([]);
    expect(r.spec!.tasks[0].resources.alternative).toEqual({ key: 'any_of', index: 1, of: 2 });
  });
});
