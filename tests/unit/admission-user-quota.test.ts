/**
 * Users' running-CPU quotas in the one admission plan (lib/jobs/capacity planAdmission): a job
 * over its user's quota waits with the numbers in its reason, without holding up the line for
 * other users; jobs admitted in the same plan count against the quota.
 */
import { describe, expect, it } from 'vitest';
import { planAdmission, type AdmissionInput, type WaitingJob } from '../../lib/jobs/capacity';

const job = (id: number, userId: number | null, cpus = 1): WaitingJob => ({ id, cpus, executor: 'local', submittedAtMs: 0, userId });
const base = (waiting: WaitingJob[], extra: Partial<AdmissionInput> = {}): AdmissionInput => ({
  waiting,
  used: {},
  total: { local: 8 },
  nowMs: 1000,
  startTimeoutMs: 3_600_000,
  enabled: true,
  ...extra,
});

describe('user CPU quotas in admission', () => {
  it('admits up to the quota, counting the jobs it admits, and lets others pass the held ones', () => {
    const plan = planAdmission(base([job(1, 7), job(2, 7), job(3, 7), job(4, 8)], { userQuotas: { 7: { name: 'mia', maxCpus: 2 } }, userUsed: { 7: 0.5 } }));
    expect(plan.admit).toEqual([1, 4]);
    expect(plan.waiting.map((w) => [w.id, w.reason.split(' · ')[0]])).toEqual([
      [2, 'user mia at its CPU quota (1.5 of 2 CPUs running; needs 1)'],
      [3, 'user mia at its CPU quota (1.5 of 2 CPUs running; needs 1)'],
    ]);
    expect(plan.blocked).toEqual([]);
  });

  it('does not limit a user without a quota, or a job without a submitter', () => {
    const plan = planAdmission(base([job(1, 9, 4), job(2, null, 4)], { userQuotas: { 7: { name: 'mia', maxCpus: 1 } } }));
    expect(plan.admit).toEqual([1, 2]);
  });
});
