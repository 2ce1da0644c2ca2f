/**
 * Users' running-CPU quotas in the one admission plan (lib/jobs/capacity planAdmission): a job
 * over its user's quota waits with the numbers in its reason (and, for a role's default, whose
 * default it is), without holding up the line for other users; jobs admitted in the same plan
 * count against the quota. The role defaults (lib/jobs/quotas.ts): read from JOBDECK_QUOTA_*,
 * each bad or unknown variable named; a user's own value wins over its role's default.
 */
import { describe, expect, it } from 'vitest';
import { planAdmission, type AdmissionInput, type WaitingJob } from '../../lib/jobs/capacity';
import { effectiveQuota, roleQuotasFromEnv } from '../../lib/jobs/quotas';

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

describe('role default quotas', () => {
  it('names the role whose default holds a job', () => {
    const plan = planAdmission(base([job(1, 7), job(2, 7)], { userQuotas: { 7: { name: 'mia', maxCpus: 1, roleDefault: 'member' } } }));
    expect(plan.admit).toEqual([1]);
    expect(plan.waiting[0].reason.split(' · ')[0]).toBe("user mia at its CPU quota, the member role's default (1 of 1 CPUs running; needs 1)");
  });

  it('reads one variable per role and quota; none set is no default', () => {
    expect(roleQuotasFromEnv({})).toEqual({});
    expect(roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_PENDING_JOBS: '20', JOBDECK_QUOTA_MEMBER_RUNNING_CPUS: '8', JOBDECK_QUOTA_ADMIN_RUNNING_CPUS: ' 0.5 ', JOBDECK_QUOTA_ADMIN_PENDING_JOBS: '' })).toEqual({
      member: { maxPendingJobs: 20, maxRunningCpus: 8 },
      admin: { maxPendingJobs: null, maxRunningCpus: 0.5 },
    });
  });

  it('refuses a bad value or an unknown JOBDECK_QUOTA_* variable, naming it', () => {
    expect(() => roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_PENDING_JOBS: '2.5' })).toThrow('JOBDECK_QUOTA_MEMBER_PENDING_JOBS: expected a whole number of jobs from 0 to 1000000, got "2.5"');
    for (const bad of ['-1', '1e3', 'eight', '1000001', '0x10']) expect(() => roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_RUNNING_CPUS: bad })).toThrow(/^JOBDECK_QUOTA_MEMBER_RUNNING_CPUS: expected a number of CPUs from 0 to 1000000/);
    expect(() => roleQuotasFromEnv({ JOBDECK_QUOTA_VIEWER_RUNNING_CPUS: '1' })).toThrow(/^JOBDECK_QUOTA_VIEWER_RUNNING_CPUS: not a jobdeck setting; the role quotas are JOBDECK_QUOTA_MEMBER_PENDING_JOBS, .* \(viewers submit nothing; admins have no priority cap\)$/);
    expect(() => roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBERS_PENDING_JOBS: '1' })).toThrow(/^JOBDECK_QUOTA_MEMBERS_PENDING_JOBS: not a jobdeck setting/);
  });

  it("applies a user's own value, else its role's default, else none", () => {
    const defaults = roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_PENDING_JOBS: '2' });
    expect(effectiveQuota({ role: 'member', maxPendingJobs: null, maxRunningCpus: null }, 'maxPendingJobs', defaults)).toEqual({ value: 2, source: 'role' });
    expect(effectiveQuota({ role: 'member', maxPendingJobs: 0, maxRunningCpus: null }, 'maxPendingJobs', defaults)).toEqual({ value: 0, source: 'user' });
    expect(effectiveQuota({ role: 'member', maxPendingJobs: null, maxRunningCpus: null }, 'maxRunningCpus', defaults)).toEqual({ value: null, source: null });
    expect(effectiveQuota({ role: 'admin', maxPendingJobs: null, maxRunningCpus: null }, 'maxPendingJobs', defaults)).toEqual({ value: null, source: null });
    expect(effectiveQuota({ role: 'viewer', maxPendingJobs: null, maxRunningCpus: null }, 'maxPendingJobs', defaults)).toEqual({ value: null, source: null });
  });
});
