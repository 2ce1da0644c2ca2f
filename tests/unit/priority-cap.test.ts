/**
 * The members' priority cap (lib/jobs/priority-cap.ts, read by lib/jobs/quotas.ts): the lower of
 * the role's and the queue's applies, admins are never capped, and the refusal names the cap.
 */
import { describe, expect, it } from 'vitest';
import { priorityCap, priorityCapProblem } from '../../lib/jobs/priority-cap';
import { roleMaxPriority, roleQuotasFromEnv } from '../../lib/jobs/quotas';

describe('priorityCap', () => {
  const gpu = { name: 'gpu', memberMaxPriority: 600 };
  const open = { name: 'cpu', memberMaxPriority: null };
  it('the lower of the role cap and the queue cap; none for admins', () => {
    expect(priorityCap('member', 950, gpu)).toEqual({ value: 600, source: 'queue', queue: 'gpu' });
    expect(priorityCap('member', 500, gpu)).toEqual({ value: 500, source: 'role' });
    expect(priorityCap('member', 950, open)).toEqual({ value: 950, source: 'role' });
    expect(priorityCap('member', null, gpu)).toEqual({ value: 600, source: 'queue', queue: 'gpu' });
    expect(priorityCap('member', null, null)).toBeNull();
    expect(priorityCap('admin', 500, gpu)).toBeNull();
  });

  it('names the cap in the refusal; at the cap is allowed', () => {
    expect(priorityCapProblem(1000, { value: 600, source: 'queue', queue: 'gpu' })).toBe('priority 1000 is above the member cap 600 (queue gpu): ask an admin for more');
    expect(priorityCapProblem(951, { value: 950, source: 'role' })).toBe('priority 951 is above the member cap 950 (JOBDECK_QUOTA_MEMBER_MAX_PRIORITY): ask an admin for more');
    expect(priorityCapProblem(600, { value: 600, source: 'queue', queue: 'gpu' })).toBeNull();
    expect(priorityCapProblem(1000, null)).toBeNull();
  });
});

describe('JOBDECK_QUOTA_MEMBER_MAX_PRIORITY', () => {
  it('is read with the role quotas: a whole priority 0–1000, members only', () => {
    const q = roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_MAX_PRIORITY: '600' });
    expect(q.member).toEqual({ maxPendingJobs: null, maxRunningCpus: null, maxPriority: 600 });
    expect([roleMaxPriority('member', q), roleMaxPriority('admin', q), roleMaxPriority('viewer', q)]).toEqual([600, null, null]);
    expect(roleMaxPriority('member', roleQuotasFromEnv({}))).toBeNull();
    expect(roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_MAX_PRIORITY: '0' }).member?.maxPriority).toBe(0);
    for (const bad of ['1001', '-1', '5.5', 'high']) expect(() => roleQuotasFromEnv({ JOBDECK_QUOTA_MEMBER_MAX_PRIORITY: bad })).toThrow(`JOBDECK_QUOTA_MEMBER_MAX_PRIORITY: expected a whole priority from 0 to 1000, got "${bad}"`);
    // Admins are never capped: there is no such setting.
    expect(() => roleQuotasFromEnv({ JOBDECK_QUOTA_ADMIN_MAX_PRIORITY: '900' })).toThrow(/JOBDECK_QUOTA_ADMIN_MAX_PRIORITY: not a jobdeck setting; .*admins have no priority cap/);
  });
});
