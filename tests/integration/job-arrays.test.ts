/**
 * Arrays and sweeps (docs/design.md §17 "Groups") on both databases: a spec's `array` (or the
 * submit's numJobs / params) is written as one group of ordinary jobs — each with its rank's and
 * parameters' envs and its own name — that the folded list shows as one row; the pending quota
 * counts every job; the group's verbs: cancel, re-run the failed slots (into their slots), delete
 * (refused while live).
 */
import { describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { submitJobSpec, PendingQuotaError } from '../../lib/control/submit';
import { cancelGroup, deleteGroup, GroupLiveError, rerunFailedInGroup } from '../../lib/control/groups';
import { requestCancel } from '../../lib/control/cancel';
import { groupSlots, groupStatusCounts, transitionJobsWhere } from '../../lib/store';
import { listJobs } from '../../lib/api/views';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import type { Actor } from '../../lib/jobs/roles';
import type { TaskSpec } from '../../lib/jobs/spec';

const MIA: Actor = { userId: 1, name: 'admin', role: 'admin', tokenId: null, tokenPrefix: null, ip: null };

describe.each(DB_KINDS)('arrays on %s', (kind) => {
  const t = useDatabase(kind, `job-arrays-${kind}`);

  it('a sweep is one group of jobs, each with its rank, count and values in its envs and its name', async () => {
    const yaml = 'name: sweep\narray:\n  params:\n    lr: ["1e-3", "3e-4"]\n    seed: [1, 2, 3]\nrun: echo "$lr $seed"\n';
    const out = await submitJobSpec(t.store, { source: { kind: 'yaml', text: yaml }, submissionId: 'sweep-1', actor: MIA });
    expect(out.created).toBe(true);
    const group = out.result.group!;
    expect(group.size).toBe(6);
    expect(out.result.id).toBe(group.jobIds[0]);
    const jobs = await t.prisma.job.findMany({ where: { groupId: group.id }, orderBy: { groupIndex: 'asc' }, include: { tasks: true } });
    expect(jobs.map((j) => [j.groupIndex, j.groupLead, j.name])).toEqual([
      [0, true, 'sweep[lr=1e-3 seed=1]'],
      [1, false, 'sweep[lr=1e-3 seed=2]'],
      [2, false, 'sweep[lr=1e-3 seed=3]'],
      [3, false, 'sweep[lr=3e-4 seed=1]'],
      [4, false, 'sweep[lr=3e-4 seed=2]'],
      [5, false, 'sweep[lr=3e-4 seed=3]'],
    ]);
    const envs = (jobs[4].tasks[0].spec as unknown as TaskSpec).envs;
    expect(envs).toEqual({ SKYPILOT_JOB_RANK: '4', SKYPILOT_NUM_JOBS: '6', JOBDECK_ARRAY_INDEX: '4', JOBDECK_ARRAY_COUNT: '6', lr: '3e-4', seed: '2' });
    expect(jobs.every((j) => (j.spec as { array?: unknown }).array === undefined)).toBe(true);
    // A repeat of the submit answers the group it made.
    const again = await submitJobSpec(t.store, { source: { kind: 'yaml', text: yaml }, submissionId: 'sweep-1', actor: MIA });
    expect([again.created, again.result.group?.id]).toEqual([false, group.id]);
    // The folded list: one row for the group, with its counts.
    const page = await listJobs(t.store, { foldGroups: true, groupId: undefined });
    expect(page.jobs.filter((j) => j.group?.id === group.id).map((j) => j.id)).toEqual([group.jobIds[0]]);
    expect(page.groups?.find((g) => g.id === group.id)).toMatchObject({ name: 'sweep', size: 6, done: 0, counts: { PENDING: 6 }, jobId: group.jobIds[0] });
    expect((await listJobs(t.store, { groupId: group.id })).jobs).toHaveLength(6);
    await requestCancel(t.store, group.jobIds);
  });

  it('numJobs from the submit, bounded; the pending quota counts every job of it', async () => {
    const out = await submitJobSpec(t.store, { source: { kind: 'cmd', cmd: 'echo $SKYPILOT_JOB_RANK' }, name: 'shards', array: { numJobs: 3 }, actor: MIA });
    expect(out.result.group?.size).toBe(3);
    expect((await t.prisma.job.findMany({ where: { groupId: out.result.group!.id }, orderBy: { id: 'asc' } })).map((j) => j.name)).toEqual(['shards[0]', 'shards[1]', 'shards[2]']);
    const big = await submitJobSpec(t.store, { source: { kind: 'cmd', cmd: 'true' }, array: { numJobs: 600, params: { x: ['a', 'b'] } } }).catch((e: unknown) => e);
    expect((big as Error).message).toBe('job.yaml overrides.array: the array has 1200 jobs (600 × 2); at most 1000');
    const quota: Actor = { ...MIA, pendingQuota: { value: 4, source: 'user' } };
    const refused = await submitJobSpec(t.store, { source: { kind: 'cmd', cmd: 'true' }, array: { numJobs: 2 }, actor: quota }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PendingQuotaError);
    expect((refused as Error).message).toBe('user admin has 3 jobs pending and may have 4 at once; the array would add 2: wait for one to start, or cancel one');
    await requestCancel(t.store, out.result.group!.jobIds);
  });

  it('group verbs: delete refused while live; cancel; re-run-failed fills the failed slots; delete removes every job', async () => {
    const out = await submitJobSpec(t.store, { source: { kind: 'cmd', cmd: 'true' }, name: 'verbs', array: { numJobs: 3 }, actor: MIA });
    const g = out.result.group!;
    const executor = () => createLocalExecutor({ cpus: 1 });
    const err = await deleteGroup(t.store, g.id, { executor }, MIA).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroupLiveError);
    // Slot 0 succeeds (as written by a monitor), the others are cancelled.
    const done = await transitionJobsWhere(t.store, { ids: [g.jobIds[0]], from: 'PENDING', to: 'SUCCEEDED', reason: 'nothing to run', data: { endedAt: new Date() }, tasks: { from: 'PENDING', to: 'SUCCEEDED', reason: 'nothing to run' } });
    expect(done.applied).toEqual([g.jobIds[0]]);
    const c = await cancelGroup(t.store, g.id, MIA);
    expect(c.cancelled.sort()).toEqual(g.jobIds.slice(1).sort());
    expect((await groupStatusCounts(t.store, [g.id])).get(g.id)).toEqual({ SUCCEEDED: 1, CANCELLED: 2 });
    const re = await rerunFailedInGroup(t.store, g.id, 'api', MIA);
    expect(re.map((r) => [r.index, r.from])).toEqual([
      [1, g.jobIds[1]],
      [2, g.jobIds[2]],
    ]);
    const slots = await groupSlots(t.store, g.id);
    expect(slots.map((s) => [s.index, s.status, s.runs])).toEqual([
      [0, 'SUCCEEDED', 1],
      [1, 'PENDING', 2],
      [2, 'PENDING', 2],
    ]);
    const rerunJob = await t.prisma.job.findUnique({ where: { id: re[1].jobId }, include: { tasks: true } });
    expect([rerunJob?.name, rerunJob?.groupIndex, rerunJob?.groupLead]).toEqual(['verbs[2]', 2, false]);
    // Its slot's envs again, as at the group's submit.
    expect((rerunJob!.tasks[0].spec as unknown as TaskSpec).envs).toMatchObject({ SKYPILOT_JOB_RANK: '2', JOBDECK_ARRAY_INDEX: '2', JOBDECK_ARRAY_COUNT: '3' });
    await cancelGroup(t.store, g.id, MIA);
    const deleted = await deleteGroup(t.store, g.id, { executor }, MIA);
    expect(deleted).toHaveLength(5);
    expect(await t.prisma.job.count({ where: { groupId: g.id } })).toBe(0);
    expect(await t.prisma.jobGroup.count({ where: { id: g.id } })).toBe(0);
  });
});
