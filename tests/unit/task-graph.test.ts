/**
 * The task-graph rule (lib/jobs/task-graph.ts) and what the spec makes of a job group and a task
 * DAG (lib/jobs/spec/task-graph-spec.ts): ready and blocked tasks, the decided end of a group,
 * the job status derived from them, the refusals with their lines, the group's shapes a launch
 * hands the executor (lib/monitor/launch.ts launchGroupOf) and the Slurm components made of them
 * (lib/executors/slurm/group.ts).
 */
import { describe, expect, it } from 'vitest';
import { deriveJobStatus, isTerminal, TASK_STATUSES, type TaskStatus, type TaskStatusView } from '../../lib/jobs/status';
import { graphState, LIVE_TASK_STATUSES } from '../../lib/jobs/task-graph';
import { checkJobSpec, formatSpecIssue, jobCpus } from '../../lib/jobs/spec';
import { launchGroupOf } from '../../lib/monitor/launch';
import { componentArgs, componentOrder } from '../../lib/executors/slurm/group';

const chain = (...s: TaskStatus[]): TaskStatusView[] => s.map((status, index) => ({ index, status }));
const group = (primary: number[], ...s: TaskStatus[]): TaskStatusView[] => s.map((status, index) => ({ index, status, after: [], ...(primary.includes(index) ? { primary: true } : {}) }));

describe('task graph', () => {
  it('holds its live statuses to the status table', () => {
    expect([...LIVE_TASK_STATUSES].sort()).toEqual(TASK_STATUSES.filter((s) => !isTerminal('task', s)).sort());
  });

  it('a pipeline: only the current task is ready; after a failure the rest is blocked', () => {
    expect(graphState(chain('SUCCEEDED', 'PENDING', 'PENDING'))).toMatchObject({ ready: [1], live: [1, 2], blocked: [], stop: [] });
    expect(graphState(chain('FAILED', 'PENDING', 'PENDING'))).toMatchObject({ ready: [], live: [], blocked: [1, 2] });
  });

  it('a DAG: independent tasks are ready together; a waiting task after both', () => {
    const dag = (a: TaskStatus, b: TaskStatus, c: TaskStatus, d: TaskStatus): TaskStatusView[] => [
      { index: 0, status: a, after: [] },
      { index: 1, status: b, after: [0] },
      { index: 2, status: c, after: [0] },
      { index: 3, status: d, after: [1, 2] },
    ];
    expect(graphState(dag('SUCCEEDED', 'PENDING', 'PENDING', 'PENDING')).ready).toEqual([1, 2]);
    expect(graphState(dag('SUCCEEDED', 'SUCCEEDED', 'RUNNING', 'PENDING')).ready).toEqual([2]);
    expect(graphState(dag('SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'PENDING')).ready).toEqual([3]);
    const failed = graphState(dag('SUCCEEDED', 'FAILED', 'RUNNING', 'PENDING'));
    expect(failed).toMatchObject({ live: [2], blocked: [3], decided: 'task 1 ended FAILED', stop: [2] });
  });

  it('a group: every task ready at once; the primary ending stops the others', () => {
    expect(graphState(group([2], 'PENDING', 'PENDING', 'PENDING')).ready).toEqual([0, 1, 2]);
    expect(graphState(group([2], 'RUNNING', 'RUNNING', 'SUCCEEDED'))).toMatchObject({ decided: 'primary task 2 ended', stop: [0, 1] });
    expect(graphState(group([], 'RUNNING', 'SUCCEEDED'))).toMatchObject({ decided: null, stop: [], ready: [0] });
  });

  it('derives the job status: a failure ends the job only once no task is live; primaries decide a group', () => {
    expect(deriveJobStatus(group([], 'FAILED', 'RUNNING'))).toBe('RUNNING');
    expect(deriveJobStatus(group([], 'FAILED', 'CANCELLED'))).toBe('FAILED');
    expect(deriveJobStatus(group([1], 'CANCELLED', 'SUCCEEDED'))).toBe('SUCCEEDED');
    expect(deriveJobStatus(group([1], 'CANCELLED', 'CANCELLED'))).toBe('CANCELLED');
    expect(deriveJobStatus(group([], 'SUCCEEDED', 'CANCELLED'))).toBe('CANCELLED');
    expect(deriveJobStatus(group([], 'PENDING', 'STARTING'))).toBe('STARTING');
    expect(deriveJobStatus(group([], 'PENDING', 'PENDING'))).toBe('PENDING');
  });
});

describe('job groups and task DAGs in the spec', () => {
  const issues = (text: string) => checkJobSpec(text, { filename: 'g.yaml' }).issues.map(formatSpecIssue);

  it('a group: every task after nothing, the primaries marked, the envs set, the CPUs summed', () => {
    const { spec } = checkJobSpec('name: g\nexecution: parallel\nprimary_tasks: [b]\n---\nname: a\nrun: x\n---\nname: rollout-server\nrun: y\nresources: {cpus: 2}\n---\nname: b\nrun: z\n');
    expect(spec!.execution).toBe('parallel');
    expect(spec!.tasks.map((t) => [t.after, t.primary ?? false])).toEqual([[[], false], [[], false], [[], true]]);
    expect(spec!.tasks[1].envs).toMatchObject({ JOBDECK_TASK_NAME: 'rollout-server', JOBDECK_GROUP_TASKS: 'a,rollout-server,b', JOBDECK_TASK_ROLLOUT_SERVER_HOST: '127.0.0.1', JOBDECK_TASK_A_HOST: '127.0.0.1', SKYPILOT_JOBGROUP_NAME: 'g' });
    expect(jobCpus(spec!)).toBe(4);
  });

  it('a pipeline keeps its stored form (no after) and its CPUs (the max)', () => {
    const { spec } = checkJobSpec('name: p\n---\nname: a\nrun: x\nresources: {cpus: 2}\n---\nname: b\nrun: y\n');
    expect(spec!.tasks.map((t) => t.after)).toEqual([undefined, undefined]);
    expect(jobCpus(spec!)).toBe(2);
  });

  it('a group on Slurm: accepted, its hosts left to the executor (set where Slurm places the tasks)', () => {
    const { spec, issues: found } = checkJobSpec('execution: parallel\n---\nname: a\nrun: x\nresources: {infra: slurm}\n---\nname: b\nrun: y\nresources: {infra: slurm}\n');
    expect(found).toEqual([]);
    expect(spec!.tasks[0].envs).toEqual({ JOBDECK_TASK_NAME: 'a', JOBDECK_GROUP_TASKS: 'a,b', SKYPILOT_JOBGROUP_NAME: spec!.name });
  });

  it('refuses bad headers, unknown names, cycles and a multi-node group task at their lines', () => {
    expect(issues('name: g\nexecution: sideways\n---\nrun: x\n---\nrun: y\n')).toEqual(['g.yaml:2 pipeline.execution: expected one of serial, parallel, got "sideways"']);
    expect(issues('name: g\nprimary_tasks: [a]\n---\nname: a\nrun: x\n---\nrun: y\n')).toEqual(['g.yaml:2 pipeline.primary_tasks: primary_tasks is for a job group: add execution: parallel to the header']);
    expect(issues('execution: parallel\nprimary_tasks: [c]\n---\nname: a\nrun: x\n---\nname: b\nrun: y\n')).toEqual(['g.yaml:2 pipeline.primary_tasks[0]: no task named "c" in this job; its tasks: a, b']);
    expect(issues('name: a\nrun: x\ndepends_on: {tasks: [a]}\n')).toEqual(['g.yaml:3 task[0].depends_on.tasks[0]: a cycle: a → a (a task cannot wait for itself)']);
    expect(issues('execution: parallel\n---\nname: a\nrun: x\nnum_nodes: 2\nresources: {infra: slurm}\n---\nname: b\nrun: y\nresources: {infra: slurm}\n')).toEqual(['g.yaml:5 task[0].num_nodes: a job group\'s task runs on one node (the others reach it at JOBDECK_TASK_<NAME>_HOST), got num_nodes: 2']);
    expect(issues('run: x\ndepends_on: {after: ok, tasks: [a]}\n')[0]).toMatch(/^g\.yaml:2 task\[0\]\.depends_on\.after: after: is about depends_on\.jobs/);
  });
});

describe("a job group's launch", () => {
  it("hands the executor every task's shape and host env, from the job's stored spec; nothing for a pipeline or DAG", () => {
    const { spec } = checkJobSpec('name: g\nexecution: parallel\n---\nname: rollout-server\nrun: x\nresources: {cpus: 2, memory: 1}\nmax_duration: 90s\n---\nname: b\nrun: y\n');
    const job = { id: 7, spec: JSON.parse(JSON.stringify(spec)), cpus: jobCpus(spec!) };
    expect(launchGroupOf(job, '/data')).toEqual({
      dir: '/data/jobs/7/group',
      tasks: [
        { hostEnv: 'JOBDECK_TASK_ROLLOUT_SERVER_HOST', cpus: 2, memoryBytes: 1024 ** 3, maxDurationMs: 90_000 },
        { hostEnv: 'JOBDECK_TASK_B_HOST', cpus: 1 },
      ],
    });
    const dag = checkJobSpec('name: a\nrun: x\n---\nname: b\nrun: y\ndepends_on: {tasks: [a]}\n').spec;
    expect(launchGroupOf({ id: 8, spec: JSON.parse(JSON.stringify(dag)), cpus: 2 }, '/data')).toBeUndefined();
  });
});

describe("a job group's Slurm components", () => {
  it('orders the tasks without a time limit first, then the longest (component 0 runs the batch script of all)', () => {
    const t = (maxDurationMs?: number) => ({ hostEnv: 'X', cpus: 1, ...(maxDurationMs !== undefined ? { maxDurationMs } : {}) });
    expect(componentOrder([t(60_000), t(), t(600_000), t(), t(60_000)])).toEqual([1, 3, 2, 0, 4]);
    expect(componentOrder([t(), t()])).toEqual([0, 1]);
  });

  it('asks each component for one node, its CPUs, its memory per CPU (never carried over) and its time, the partition\'s own said explicitly', () => {
    expect(componentArgs({ hostEnv: 'X', cpus: 2, memoryBytes: 3 * 1024 ** 3, maxDurationMs: 90_000 }, 'UNLIMITED')).toEqual(['--nodes=1', '--ntasks=1', '--cpus-per-task=2', '--mem-per-cpu=1536M', '--time=2']);
    expect(componentArgs({ hostEnv: 'X', cpus: 0.5, memoryBytes: 1 }, '1-00:00:00')).toEqual(['--nodes=1', '--ntasks=1', '--cpus-per-task=1', '--mem-per-cpu=1M', '--time=1-00:00:00']);
    expect(componentArgs({ hostEnv: 'X', cpus: 3 }, null)).toEqual(['--nodes=1', '--ntasks=1', '--cpus-per-task=3']);
  });
});
