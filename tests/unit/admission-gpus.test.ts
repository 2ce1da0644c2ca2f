/**
 * GPUs in the one admission plan (lib/jobs/capacity planAdmission, docs/design.md §6 "GPUs"): an
 * executor with devices grants each admitted job specific ones (never one granted to a job that
 * holds it, never one a process outside jobdeck holds), a job that does not fit waits with the
 * numbers in its reason and blocks the line (strict priority), one that can never fit ends
 * FAILED_NO_RESOURCE; queue GPU limits and user GPU quotas hold jobs without blocking the line;
 * the start timeout is off unless the server or the job's queue sets one. And max_duration's
 * form, and the reasons of a limit's stop.
 */
import { describe, expect, it } from 'vitest';
import { planAdmission, planAdmissionReads, type AdmissionInput, type WaitingJob } from '../../lib/jobs/capacity';
import { parseLocalGpus, type GpuGrant } from '../../lib/jobs/gpus';
import { formatMemory, outOfMemoryReason, pastMaxDuration, timeLimitReason } from '../../lib/jobs/limits';
import { decideRestart } from '../../lib/jobs/retry';
import { checkJobSpec, formatDuration, formatSpecIssue, parseDuration } from '../../lib/jobs/spec';

const gpuJob = (id: number, count: number, extra: Partial<WaitingJob> = {}): WaitingJob => ({ id, cpus: 1, executor: 'local', submittedAtMs: 0, gpus: count, gpuOptions: [{ type: 'A100', count }], ...extra });
const base = (waiting: WaitingJob[], extra: Partial<AdmissionInput> = {}): AdmissionInput => ({
  waiting,
  used: {},
  total: { local: 64 },
  gpuPools: { local: { devices: parseLocalGpus('4')!, granted: [] } },
  nowMs: 1000,
  startTimeoutMs: null,
  enabled: true,
  ...extra,
});
const indices = (g: GpuGrant | undefined) => g?.devices.map((d) => d.index);
const first = (reason: string) => reason.split(' · ')[0];

describe('GPU admission', () => {
  it('grants four 1-GPU jobs four different devices; the fifth waits with the reason and blocks the line', () => {
    const plan = planAdmission(base([1, 2, 3, 4, 5].map((id) => gpuJob(id, 1)).concat([{ id: 6, cpus: 1, executor: 'local', submittedAtMs: 0 }])));
    expect(plan.admit).toEqual([1, 2, 3, 4]);
    expect([1, 2, 3, 4].map((id) => indices(plan.grants[id]))).toEqual([[0], [1], [2], [3]]);
    expect(plan.waiting).toEqual([
      { id: 5, reason: 'needs 1 GPU, 0 of 4 free' },
      { id: 6, reason: '1 job ahead at priority ≥ 500' },
    ]);
    expect(plan.blocked).toEqual(['local']);
  });

  it('never grants a device a running job holds or a process outside jobdeck holds', () => {
    const granted: GpuGrant[] = [{ type: 'A100', count: 1, devices: [{ index: 0, share: 1 }] }];
    const plan = planAdmission(base([gpuJob(1, 2), gpuJob(2, 1)], { gpuPools: { local: { devices: parseLocalGpus('4')!, granted, held: [2] } } }));
    // Devices 1 and 3 are free: the 2-GPU job gets them, the 1-GPU job waits.
    expect(plan.admit).toEqual([1]);
    expect(indices(plan.grants[1])).toEqual([1, 3]);
    expect(plan.waiting.map((w) => first(w.reason))).toEqual(['needs 1 GPU, 0 of 4 free']);
    // A held device that jobdeck granted is its own job's, not a foreign process's: still only the grant counts.
    const own = planAdmission(base([gpuJob(1, 1)], { gpuPools: { local: { devices: parseLocalGpus('2')!, granted, held: [0] } } }));
    expect(indices(own.grants[1])).toEqual([1]);
  });

  it('a job asking more than the executor can ever grant ends FAILED_NO_RESOURCE without blocking', () => {
    const plan = planAdmission(base([gpuJob(1, 8), gpuJob(2, 1, { gpuOptions: [{ type: 'H100', count: 1 }] }), gpuJob(3, 1)], { gpuPools: { local: { devices: parseLocalGpus('A100:4')!, granted: [] } } }));
    expect(plan.noResource).toEqual([
      { id: 1, reason: 'asks for A100:8 but the local executor has 4 (A100) GPUs' },
      { id: 2, reason: 'asks for H100:1 but the local executor has 4 (A100) GPUs' },
    ]);
    expect(plan.admit).toEqual([3]);
  });

  it('shares of one GPU go onto one device until it is full', () => {
    const share = (id: number, n: number) => gpuJob(id, n, { gpuOptions: [{ type: 'T4', count: n }] });
    const plan = planAdmission(base([share(1, 0.5), share(2, 0.5), share(3, 0.5)], { gpuPools: { local: { devices: parseLocalGpus('1')!, granted: [] } } }));
    expect(plan.admit).toEqual([1, 2]);
    expect([1, 2].map((id) => plan.grants[id].devices)).toEqual([[{ index: 0, share: 0.5 }], [{ index: 0, share: 0.5 }]]);
    expect(first(plan.waiting[0].reason)).toBe('needs 0.5 of a GPU, 0 of one free at most');
  });

  it('alternatives: the first option that fits now', () => {
    const alt = gpuJob(2, 1, { gpuOptions: [{ type: 'A100', count: 1 }, { type: 'V100', count: 1 }] });
    const plan = planAdmission(base([gpuJob(1, 2), alt], { gpuPools: { local: { devices: parseLocalGpus('A100:2,V100:2')!, granted: [] } } }));
    expect(plan.admit).toEqual([1, 2]);
    expect(plan.grants[2]).toMatchObject({ type: 'V100', devices: [{ index: 2, share: 1 }] });
  });

  it('a queue GPU limit and a user GPU quota hold a job without blocking the line', () => {
    const plan = planAdmission(
      base([gpuJob(1, 2, { queue: 'gpu' }), gpuJob(2, 1, { queue: 'gpu' }), gpuJob(3, 1, { userId: 7 }), gpuJob(4, 1)], {
        queueLimits: { gpu: { maxRunning: null, maxCpus: null, maxGpus: 2 } },
        userQuotas: { 7: { name: 'mia', maxGpus: 0.5, gpusRoleDefault: 'member' } },
      }),
    );
    expect(plan.admit).toEqual([1, 4]);
    expect(plan.waiting.map((w) => [w.id, first(w.reason)])).toEqual([
      [2, 'queue gpu at its GPU limit (2 of 2 GPUs in use; needs 1)'],
      [3, "user mia at its GPU quota, the member role's default (0 of 0.5 GPUs running; needs 1)"],
    ]);
    expect(plan.blocked).toEqual([]);
    expect(plan.fullQueues).toEqual(['gpu']);
  });

  it('executors without devices (Slurm) leave GPUs to their own scheduler: no grant, no GPU wait', () => {
    const plan = planAdmission(base([gpuJob(1, 8, { executor: 'slurm' })], { total: { slurm: 64 } }));
    expect(plan.admit).toEqual([1]);
    expect(plan.grants).toEqual({});
  });

  it('the check off still names distinct devices while there are some', () => {
    const plan = planAdmission(base([gpuJob(1, 1), gpuJob(2, 1)], { enabled: false }));
    expect([indices(plan.grants[1]), indices(plan.grants[2])]).toEqual([[0], [1]]);
  });
});

describe('the start timeout', () => {
  const busy = (extra: Partial<AdmissionInput>) => planAdmission(base([gpuJob(1, 1, { queue: 'batch' })], { gpuPools: { local: { devices: parseLocalGpus('1')!, granted: [{ type: 'A100', count: 1, devices: [{ index: 0, share: 1 }] }] } }, nowMs: 10 * 3_600_000, ...extra }));

  it('is off by default: a job waits as long as it must, and its reason has no timeout note', () => {
    const plan = busy({});
    expect(plan.noResource).toEqual([]);
    expect(plan.waiting).toEqual([{ id: 1, reason: 'needs 1 GPU, 0 of 1 free' }]);
  });

  it("the server's, or the job's queue's own, which wins", () => {
    expect(busy({ startTimeoutMs: 3_600_000 }).noResource).toEqual([{ id: 1, reason: 'could not start within 3600 s (JOBDECK_START_TIMEOUT_MS): needs 1 GPU, 0 of 1 free' }]);
    const q = { batch: { maxRunning: null, maxCpus: null, startTimeoutMs: 20 * 3_600_000 } };
    expect(busy({ startTimeoutMs: 3_600_000, queueLimits: q }).waiting).toEqual([{ id: 1, reason: 'needs 1 GPU, 0 of 1 free · start timeout in 600 min' }]);
    expect(busy({ queueLimits: { batch: { maxRunning: null, maxCpus: null, startTimeoutMs: 60_000 } } }).noResource).toEqual([
      { id: 1, reason: "could not start within 60 s (queue batch's start timeout): needs 1 GPU, 0 of 1 free" },
    ]);
  });

  it('admission reads the jobs past the shortest timeout that may apply', () => {
    const reads = (limits: AdmissionInput['queueLimits'], server: number | null) =>
      planAdmissionReads({ ...base([]), startTimeoutMs: server, queueLimits: limits, queue: { executor: 'local', count: 1, minCpus: 1, maxCpus: 1, oldestSubmittedAtMs: 0 } })!.submittedAtOrBefore;
    expect(reads({}, null)).toBeNull();
    expect(reads({ q: { maxRunning: null, maxCpus: null, startTimeoutMs: 500 } }, null)).toBe(500);
    expect(reads({ q: { maxRunning: null, maxCpus: null, startTimeoutMs: 900 } }, 100)).toBe(900);
  });
});

describe('max_duration and the limits', () => {
  it('reads durations with units, refuses a bare number', () => {
    expect(parseDuration('10h')).toBe(36_000_000);
    expect(parseDuration('90m')).toBe(5_400_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('2d')).toBe(172_800_000);
    for (const bad of ['5', 5, '0s', '1.5h', 'banana', '367d', '']) expect(parseDuration(bad)).toMatch(/expected a duration with units/);
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(7_200_000)).toBe('2h');
  });

  it('is a task key, stored in ms; a bad value is refused at its line', () => {
    expect(checkJobSpec('run: x\nmax_duration: 2h\n').spec!.tasks[0].maxDurationMs).toBe(7_200_000);
    expect('maxDurationMs' in checkJobSpec('run: x\n').spec!.tasks[0]).toBe(false);
    expect(checkJobSpec('run: x\nmax_duration: 30\n').issues.map(formatSpecIssue)).toEqual(['job.yaml:2 task[0].max_duration: expected a duration with units, e.g. 10h, 90m, 5s or 1h30m (d, h, m, s), from 1s to 366d, got 30']);
  });

  it('says the limit that stopped an attempt; the budget restarts it, recover_on_exit_codes does not', () => {
    expect(outOfMemoryReason(8 * 1024 ** 3)).toBe('out of memory: limit 8 GB');
    expect(formatMemory(512 * 1024 ** 2)).toBe('512 MB');
    expect(timeLimitReason(7_200_000)).toBe('exceeded max_duration 2h');
    expect(pastMaxDuration(new Date(0), new Date(5000), 5000)).toBe(true);
    expect(pastMaxDuration(new Date(0), new Date(4999), 5000)).toBe(false);
    const policy = { maxRestartsOnErrors: 1, recoverOnExitCodes: [137] };
    expect(decideRestart({ status: 'FAILED', exitCode: 137, cause: 'out of memory: limit 8 GB' }, 0, policy)).toEqual({ action: 'restart', counted: true, delayMs: 0, reason: 'out of memory: limit 8 GB: restart 1 of 1' });
    expect(decideRestart({ status: 'FAILED', exitCode: 137, cause: 'out of memory: limit 8 GB' }, 1, policy)).toEqual({ action: 'fail', status: 'FAILED', reason: 'out of memory: limit 8 GB; restarts spent (1 of 1)' });
  });
});
