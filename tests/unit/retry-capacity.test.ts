import { describe, expect, it } from 'vitest';
import { planAdmission, planAdmissionReads, type WaitingJob } from '../../lib/jobs/capacity';
import { waitingText } from '../../lib/jobs/waiting';

const job = (id: number, cpus: number, submittedAtMs = 0, executor = 'local'): WaitingJob => ({ id, cpus, executor, submittedAtMs });
const base = { used: {}, total: { local: 4 }, nowMs: 1000, startTimeoutMs: 3_600_000, enabled: true };

describe('planAdmission (capacity, submission order)', () => {
  it('admits in id order while the CPUs fit', () => {
    const p = planAdmission({ ...base, waiting: [job(3, 1), job(1, 2), job(2, 1)] });
    expect(p.admit).toEqual([1, 2, 3]);
    expect(p.used.local).toBe(4);
  });

  it('counts CPUs already held by active jobs', () => {
    const p = planAdmission({ ...base, used: { local: 3 }, waiting: [job(1, 1), job(2, 1)] });
    expect(p.admit).toEqual([1]);
    expect(p.waiting).toEqual([{ id: 2, reason: 'needs 1 CPU, 0 of 4 free · start timeout in 60 min' }]);
  });

  it('is first come first served: a younger small job waits behind an older big one', () => {
    const p = planAdmission({ ...base, used: { local: 2 }, waiting: [job(1, 3), job(2, 1)] });
    expect(p.admit).toEqual([]);
    expect(p.waiting.map((w) => w.id)).toEqual([1, 2]);
  });

  it('ends a job asking more than the machine has, with the reason, without blocking the queue', () => {
    const p = planAdmission({ ...base, waiting: [job(1, 8), job(2, 1)] });
    expect(p.noResource).toEqual([{ id: 1, reason: 'asks for 8 CPUs but the local executor has 4 in all' }]);
    expect(p.admit).toEqual([2]);
  });

  it('ends a job asking more nodes than the executor has (num_nodes), with the reason, without blocking the queue', () => {
    const slurm = { ...base, total: { slurm: 6 }, totalNodes: { slurm: 3 } };
    const gang = (id: number, nodes: number, cpus: number): WaitingJob => ({ id, cpus, nodes, executor: 'slurm', submittedAtMs: 0 });
    const p = planAdmission({ ...slurm, waiting: [gang(1, 4, 4), gang(2, 3, 6), gang(3, 2, 2)] });
    expect(p.noResource).toEqual([{ id: 1, reason: 'asks for 4 nodes (num_nodes) but the slurm executor has 3 in all' }]);
    // A gang's CPUs are nodes × CPUs per node: job 2 takes all 6; job 3 waits for them.
    expect(p.admit).toEqual([2]);
    expect(p.waiting).toEqual([{ id: 3, reason: 'needs 2 CPUs, 0 of 6 free · start timeout in 60 min' }]);
    // The reads plan names the too-big gangs, so a pass that reads only those decides them too.
    expect(planAdmissionReads({ ...slurm, used: { slurm: 6 }, queue: { executor: 'slurm', count: 3, minCpus: 2, maxCpus: 6, maxNodes: 4, oldestSubmittedAtMs: 0 } })).toMatchObject({ head: false, nodesAbove: 3 });
    expect(planAdmissionReads({ ...slurm, queue: { executor: 'slurm', count: 1, minCpus: 2, maxCpus: 2, maxNodes: 3, oldestSubmittedAtMs: 0 } })).not.toHaveProperty('nodesAbove');
  });

  it('ends a job that waited past the start timeout; the queue behind it moves on', () => {
    const p = planAdmission({ ...base, used: { local: 3 }, startTimeoutMs: 500, waiting: [job(1, 2, 0), job(2, 1, 900)] });
    expect(p.noResource).toEqual([{ id: 1, reason: expect.stringContaining('could not start within 0.5 s') }]);
    expect(p.admit).toEqual([2]);
  });

  it('notes the start timeout in whole minutes, rounded up, after the main reason', () => {
    const at = (leftMs: number) => planAdmission({ ...base, used: { local: 2 }, nowMs: 3_600_000 - leftMs, waiting: [job(1, 4, 0), job(2, 1, 0)] }).waiting;
    expect(at(11 * 60_000 + 1)).toEqual([
      { id: 1, reason: 'needs 4 CPUs, 2 of 4 free · start timeout in 12 min' },
      { id: 2, reason: '1 job ahead at priority ≥ 500 · start timeout in 12 min' },
    ]);
    // The text changes once a minute, not on every pass: the pass writes only changed reasons.
    expect(at(12 * 60_000)).toEqual(at(11 * 60_000 + 1));
    expect(at(11 * 60_000)[0].reason).toBe('needs 4 CPUs, 2 of 4 free · start timeout in 11 min');
    expect(at(30_000)[0].reason).toBe('needs 4 CPUs, 2 of 4 free · start timeout in 1 min');
    expect(at(1)[0].reason).toBe('needs 4 CPUs, 2 of 4 free · start timeout in 1 min');
    // A queue's hold carries it too; an executor that is not there has no timeout to note.
    const q = planAdmission({ ...base, nowMs: 48 * 60_000, queueLimits: { gpu: { maxRunning: 0, maxCpus: null } }, waiting: [{ ...job(1, 1, 0), queue: 'gpu' }, job(2, 1, 0, 'nope')] });
    expect(q.waiting).toEqual([
      { id: 1, reason: 'queue gpu at its limit (0 of 0 running) · start timeout in 12 min' },
      { id: 2, reason: 'executor "nope" is not available' },
    ]);
  });

  it('never times out a job that fits', () => {
    const p = planAdmission({ ...base, startTimeoutMs: 0, waiting: [job(1, 1, 0)] });
    expect(p.admit).toEqual([1]);
  });

  it('with the check disabled admits everything', () => {
    const p = planAdmission({ ...base, enabled: false, used: { local: 4 }, waiting: [job(1, 100), job(2, 1)] });
    expect(p.admit).toEqual([1, 2]);
    expect(p.noResource).toEqual([]);
  });

  it('keeps separate budgets per executor; an unknown executor waits', () => {
    const p = planAdmission({ ...base, total: { local: 1, slurm: 8 }, waiting: [job(1, 1), job(2, 1), job(3, 4, 0, 'slurm'), job(4, 1, 0, 'nope')] });
    expect(p.admit).toEqual([1, 3]);
    expect(p.waiting).toEqual([
      { id: 2, reason: 'needs 1 CPU, 0 of 1 free · start timeout in 60 min' },
      { id: 4, reason: 'executor "nope" is not available' },
    ]);
  });

  it('handles fractional CPUs', () => {
    const p = planAdmission({ ...base, total: { local: 1 }, waiting: [job(1, 0.5), job(2, 0.5), job(3, 0.5)] });
    expect(p.admit).toEqual([1, 2]);
  });
});

describe('planAdmission (priority, strict)', () => {
  const pj = (id: number, cpus: number, priority: number, queue?: string): WaitingJob => ({ id, cpus, executor: 'local', submittedAtMs: 0, priority, ...(queue ? { queue } : {}) });

  it('starts higher priority first, FIFO within a priority, and says why the others wait', () => {
    const p = planAdmission({ ...base, used: { local: 3 }, waiting: [pj(1, 1, 100), pj(2, 1, 100), pj(3, 1, 900), pj(4, 1, 500), pj(5, 1, 500)] });
    expect(p.admit).toEqual([3]);
    expect(p.waiting).toEqual([
      { id: 4, reason: 'needs 1 CPU, 0 of 4 free · start timeout in 60 min' },
      { id: 5, reason: '1 job ahead at priority ≥ 500 · start timeout in 60 min' },
      { id: 1, reason: '2 jobs ahead at priority ≥ 100 · start timeout in 60 min' },
      { id: 2, reason: '3 jobs ahead at priority ≥ 100 · start timeout in 60 min' },
    ]);
    expect(p.blocked).toEqual(['local']);
    expect(p.blockedPriority).toEqual({ local: 500 });
  });

  it('strict: a big high-priority job that does not fit holds back a smaller one that would', () => {
    const p = planAdmission({ ...base, used: { local: 2 }, waiting: [pj(1, 1, 100), pj(2, 4, 900)] });
    expect(p.admit).toEqual([]);
    expect(p.waiting).toEqual([
      { id: 2, reason: 'needs 4 CPUs, 2 of 4 free · start timeout in 60 min' },
      { id: 1, reason: '1 job ahead at priority ≥ 100 · start timeout in 60 min' },
    ]);
    // Once the big one started (its CPUs held) — or left — the small one goes.
    expect(planAdmission({ ...base, used: { local: 0 }, waiting: [pj(1, 1, 100), pj(2, 4, 900)] }).admit).toEqual([2]);
    expect(planAdmission({ ...base, used: { local: 2 }, waiting: [pj(1, 1, 100)] }).admit).toEqual([1]);
  });

  it('queue limits: a job of a full queue waits without blocking the line; a queue held by its CPU limit keeps its later jobs waiting', () => {
    const limits = { gpu: { maxRunning: 2, maxCpus: null }, batch: { maxRunning: null, maxCpus: 2 } };
    const p = planAdmission({
      ...base,
      total: { local: 8 },
      queueLimits: limits,
      queueUsed: { gpu: { running: 2, cpus: 2 } },
      waiting: [pj(1, 1, 900, 'gpu'), pj(2, 2, 500, 'batch'), pj(3, 1, 500, 'batch'), pj(4, 1, 100, 'batch'), pj(5, 1, 100)],
    });
    expect(p.admit).toEqual([2, 5]);
    expect(p.waiting).toEqual([
      { id: 1, reason: 'queue gpu at its limit (2 of 2 running) · start timeout in 60 min' },
      { id: 3, reason: 'queue batch at its CPU limit (2 of 2 CPUs in use) · start timeout in 60 min' },
      { id: 4, reason: 'queue batch at its CPU limit (2 of 2 CPUs in use) · start timeout in 60 min' },
    ]);
    expect(p.fullQueues).toEqual(['batch', 'gpu']);
  });
});

describe('waitingText (how a reason is shown)', () => {
  it('shows the whole reason, and in its short form the main reason only', () => {
    const r = 'needs 4 CPUs, 2 of 8 free · start timeout in 12 min';
    expect(waitingText(r)).toBe(r);
    expect(waitingText(r, true)).toBe('needs 4 CPUs, 2 of 8 free');
    expect(waitingText(null, true)).toBe('in line');
    expect(waitingText('queue a-very-long-queue-name at its limit (2 of 2 running) · start timeout in 3 min', true)).toBe('queue a-very-long-queue-name at its lim…');
  });
});
