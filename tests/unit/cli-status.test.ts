import { describe, expect, it } from 'vitest';
import type { AttemptView, JobDetail, TaskView } from '../../lib/api/types';
import { renderStatus } from '../../lib/cli/commands/manage';
import { colors } from '../../lib/cli/format';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

function attempt(number: number, over: Partial<AttemptView> = {}): AttemptView {
  return { number, status: 'FAILED', cause: number === 1 ? 'first' : 'restart', exitCode: 1, reason: 'run exited with code 1', executor: 'local', nodes: ['host-a'], createdAt: ago(120_000), startedAt: ago(120_000), endedAt: ago(118_000), logBytes: 18, usage: null, gpus: null, osUser: null, logLostBytes: null, ...over };
}

function task(index: number, over: Partial<TaskView> = {}): TaskView {
  return {
    index, name: null, status: 'PENDING', attempts: 0, restarts: 0, maxRestarts: 0, exitCodeRestarts: 0, recoveries: 0, startedAt: null, endedAt: null, nodeNames: [], statusReason: null, exitCode: null, labels: {},
    setup: null, run: 'exit 1', envs: {}, workdir: null, resources: { cpus: 1, cpusAtLeast: true, memoryGb: null, memoryAtLeast: false, alternative: null }, recoverOnExitCodes: [], attemptList: [], ...over,
  };
}

/** The seed pipeline after its end: task 0 failed twice (one restart), task 1 cancelled. */
function seedJob(): JobDetail {
  return {
    id: 4, name: 'retry-each-task', status: 'FAILED', statusReason: 'task 0: run exited with code 1; restarts spent (1 of 1)', submissionId: null,
    submittedAt: ago(130_000), startedAt: ago(120_000), endedAt: ago(110_000), totalDurationMs: 20_000, jobDurationMs: 10_000, taskCount: 2, currentTask: 0,
    tasksSucceeded: 0, restartCount: 1, exitCodeRestartCount: 0, recoveryCount: 0, labels: {}, cancelRequested: false, priority: 500, queue: 'default', owner: null, pendingReason: null, place: null, nextAttemptAt: null, group: null, scheduleId: null, dependsOn: [], events: [], specYaml: '', launch: { name: null, envs: {} }, origin: 'cli', metadata: null, executor: 'local', warnings: [], viaToken: null, upload: null, logsRemovedAt: null, logBytesTotal: 0,
    tasks: [
      task(0, { name: 'retry-each-task', status: 'FAILED', attempts: 2, restarts: 1, maxRestarts: 1, exitCode: 1, startedAt: ago(120_000), endedAt: ago(110_000), statusReason: 'restarts spent (1 of 1)', attemptList: [attempt(1), attempt(2, { startedAt: ago(115_000), endedAt: ago(110_000) })] }),
      task(1, { status: 'CANCELLED', statusReason: 'task 0 failed' }),
    ],
  };
}

/** Splits table lines into cells by the header's column starts. */
function grid(text: string): { head: string[]; rows: Record<string, string>[] } {
  const lines = text.split('\n');
  const h = lines.findIndex((l) => l.startsWith('TASK'));
  const end = lines.findIndex((l, i) => i > h && l === '');
  const header = lines[h];
  const names = header.split(/\s+/);
  const starts = names.map((n) => header.indexOf(n));
  const rows = lines.slice(h + 1, end < 0 ? undefined : end).map((l) => {
    const row: Record<string, string> = {};
    names.forEach((n, i) => {
      // A cell starts exactly at its column: the character before it is a space.
      const cell = l.slice(starts[i], i + 1 < names.length ? starts[i + 1] : undefined);
      if (starts[i] > 0 && l.length > starts[i]) expect(l[starts[i] - 1], `column ${n} of ${JSON.stringify(l)}`).toBe(' ');
      row[n] = cell.trim();
    });
    return row;
  });
  return { head: names, rows };
}

describe('jobdeck status — the table', () => {
  it('restarts have their own column; CAUSE holds only attempt causes; every cell sits under its header', () => {
    const text = renderStatus(seedJob(), NOW, colors(false));
    const { head, rows } = grid(text);
    expect(head).toEqual(['TASK', 'ATTEMPT', 'CAUSE', 'STATUS', 'EXIT', 'RESTARTS', 'STARTED', 'DURATION', 'REASON']);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({ TASK: 'Task 0 (retry-each-task)', ATTEMPT: '', CAUSE: '', STATUS: 'FAILED', EXIT: '1', RESTARTS: '1/1', STARTED: '2 minutes ago', DURATION: '10s', REASON: 'restarts spent (1 of 1)' });
    expect(rows[1]).toMatchObject({ TASK: '', ATTEMPT: '1', CAUSE: 'first', STATUS: 'FAILED', EXIT: '1', RESTARTS: '', DURATION: '2s', REASON: 'run exited with code 1' });
    expect(rows[2]).toMatchObject({ TASK: '', ATTEMPT: '2', CAUSE: 'restart', STATUS: 'FAILED', EXIT: '1', RESTARTS: '', DURATION: '5s' });
    expect(rows[3]).toMatchObject({ TASK: 'Task 1', ATTEMPT: '', CAUSE: '', STATUS: 'CANCELLED', EXIT: '', RESTARTS: '0/0', STARTED: '-', DURATION: '-', REASON: 'task 0 failed' });
    expect(text).not.toMatch(/restarts\s*$/m);
  });

  it('recoveries show beside the restarts', () => {
    const job = seedJob();
    job.tasks[0].recoveries = 2;
    expect(grid(renderStatus(job, NOW, colors(false))).rows[0].RESTARTS).toBe('1/1 +2 recov.');
  });

  it('a PENDING job says why it waits, with its priority and queue', () => {
    const job = { ...seedJob(), status: 'PENDING' as const, statusReason: null, priority: 900, queue: 'gpu', pendingReason: 'queue gpu at its limit (2 of 2 running)' };
    expect(renderStatus(job, NOW, colors(false)).split('\n')[1]).toBe('  waiting: queue gpu at its limit (2 of 2 running) (priority 900, queue gpu)');
    expect(renderStatus({ ...job, pendingReason: null }, NOW, colors(false)).split('\n')[1]).toBe('  waiting: in line, behind the jobs admission looked at (priority 900, queue gpu)');
    const held = { ...seedJob(), status: 'RUNNING' as const, statusReason: null, executor: 'slurm', pendingReason: 'Slurm: Resources' };
    expect(renderStatus(held, NOW, colors(false)).split('\n')[1]).toBe('  not running yet: Slurm: Resources (submitted to slurm, waiting in its queue)');
    expect(renderStatus({ ...held, pendingReason: null }, NOW, colors(false)).split('\n')[1]).toMatch(/^  submitted /);
  });

  it('a PENDING job says its place in line; a job waiting out a restart backoff says when it restarts', () => {
    const job = { ...seedJob(), status: 'PENDING' as const, statusReason: null, queue: 'gpu', pendingReason: 'queue gpu at its limit (1 of 1 running)', place: { position: 3, queuePosition: 2, ahead: { jobs: 2, cpus: 4, gpus: 2 } } };
    expect(renderStatus(job, NOW, colors(false)).split('\n')[2]).toBe('  place: 3rd in line (2nd in queue gpu); ahead: 2 jobs asking for 4 CPUs, 2 GPUs');
    const due = new Date(NOW.getTime() + 30_000).toISOString();
    const restarting = { ...seedJob(), status: 'RUNNING' as const, nextAttemptAt: due };
    expect(renderStatus(restarting, NOW, colors(false)).split('\n')[1]).toBe(`  restarting in 30 s (at ${due})`);
  });

  it('the header line names who submitted the job, and through which personal token', () => {
    const line = (over: Partial<JobDetail>) => renderStatus({ ...seedJob(), ...over }, NOW, colors(false)).split('\n')[1];
    expect(line({ owner: 'mia' })).toBe('  submitted 2 minutes ago by mia, total 20s, running 10s, 2 tasks, 1 restart, 0 recoveries');
    expect(line({ owner: 'mia', viaToken: 'jdp_AbCd1234' })).toBe('  submitted 2 minutes ago by mia via token jdp_AbCd1234, total 20s, running 10s, 2 tasks, 1 restart, 0 recoveries');
  });

  it('the header line: status, reason, durations, counts', () => {
    const text = renderStatus(seedJob(), NOW, colors(false));
    expect(text.split('\n')[0]).toBe('Job 4 (retry-each-task): FAILED — task 0: run exited with code 1; restarts spent (1 of 1)');
    expect(text.split('\n')[1]).toBe('  submitted 2 minutes ago, total 20s, running 10s, 2 tasks, 1 restart, 0 recoveries');
  });
});

describe('jobdeck status — resource usage', () => {
  it('a table per attempt: CPU time, cores, "N % of K CPUs", peak memory, memory efficiency; "not recorded" where nothing was', () => {
    const job = seedJob();
    job.tasks[0].attemptList[0].usage = {
      cpuSeconds: 2, averageCores: 1, rssBytes: 1024, peakRssBytes: 200 * 2 ** 20, peakProcs: 3, sampledAt: ago(118_000),
      requested: { cpus: 8, memoryBytes: 2 ** 30 }, efficiency: { cpu: 0.125, memory: 200 / 1024 }, series: [],
    };
    const text = renderStatus(job, NOW, colors(false));
    const lines = text.split('\n');
    const at = lines.indexOf('Resource usage');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^TASK\s+ATTEMPT\s+CPU TIME\s+AVG CORES\s+CPU EFFICIENCY\s+PEAK MEMORY\s+MEMORY EFFICIENCY\s+PROCS$/);
    expect(lines[at + 2]).toMatch(/^0\s+1\s+2\.0 s\s+1\.00\s+13 % of 8 CPUs\s+200\.0 MiB\s+20 % of 1\.0 GiB\s+3$/);
    expect(lines[at + 3]).toMatch(/^0\s+2\s+not recorded$/);
    expect(lines).toHaveLength(at + 4);
  });
});
