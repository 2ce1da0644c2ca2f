import { describe, expect, it } from 'vitest';
import type { JobSummary, TaskSummary } from '../../lib/api/types';
import { errorFromResponse, exitCodeForHttp, formatIssues } from '../../lib/cli/client';
import { resolveToken, resolveUrl } from '../../lib/cli/config';
import { EXIT, EXIT_CODE_TABLE, exitCodeForStatus, exitCodesMarkdown } from '../../lib/cli/exit-codes';
import { exitCodesText } from '../../lib/cli/help';
import { parseEnvs } from '../../lib/cli/commands/launch';
import { defaultView, parseStatuses } from '../../lib/cli/commands/queue';
import { listForError } from '../../lib/cli/commands/resolve';
import { resolveTask } from '../../lib/cli/commands/logs';
import { colorEnabled, colors, colorStatus, formatAgo, formatDuration } from '../../lib/cli/format';
import { nodesCell, QUEUE_COLUMNS, queueJson, queueRows, renderQueueTable, restartsCell } from '../../lib/cli/queue-render';
import { JOB_STATUSES } from '../../lib/jobs/status';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const env = (e: Record<string, string>) => e as unknown as NodeJS.ProcessEnv;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

function task(index: number, over: Partial<TaskSummary> = {}): TaskSummary {
  return { index, name: null, status: 'PENDING', attempts: 0, restarts: 0, maxRestarts: 0, exitCodeRestarts: 0, recoveries: 0, startedAt: null, endedAt: null, nodeNames: [], ...over };
}
function job(id: number, tasks: TaskSummary[], over: Partial<JobSummary> = {}): JobSummary {
  return {
    id, name: `job-${id}`, status: 'RUNNING', statusReason: null, submissionId: null, submittedAt: ago(600_000), startedAt: ago(540_000), endedAt: null,
    totalDurationMs: 600_000, jobDurationMs: 540_000, taskCount: tasks.length, currentTask: 0, tasksSucceeded: 0, restartCount: 0, exitCodeRestartCount: 0, recoveryCount: 0, labels: {}, cancelRequested: false, priority: 500, queue: 'default', owner: null, pendingReason: null, place: null, nextAttemptAt: null, group: null, scheduleId: null, tasks, ...over,
  };
}

describe('durations and times', () => {
  it.each([
    [0, '0s'], [999, '0s'], [1000, '1s'], [59_999, '59s'], [60_000, '1m 0s'], [125_000, '2m 5s'],
    [3_723_000, '1h 2m 3s'], [86_400_000 + 3_600_000 * 4 + 60_000 * 5 + 7000, '1d 4h 5m'],
    [null, '-'], [-5, '-'], [Number.NaN, '-'],
  ])('formatDuration(%s) = %s', (ms, want) => {
    expect(formatDuration(ms as number | null)).toBe(want);
  });

  it('relative submitted times', () => {
    expect(formatAgo(ago(3 * 60_000), NOW)).toBe('3 minutes ago');
    expect(formatAgo(ago(2 * 3600_000), NOW)).toBe('2 hours ago');
    expect(formatAgo(ago(5000), NOW)).toBe('5 seconds ago');
    // A server clock slightly ahead never prints the future.
    expect(formatAgo(new Date(NOW.getTime() + 800).toISOString(), NOW)).toBe('0 seconds ago');
    expect(formatAgo(null, NOW)).toBe('-');
    expect(formatAgo('garbage', NOW)).toBe('-');
  });

  it('colours only when enabled: TTY, FORCE_COLOR, NO_COLOR', () => {
    expect(colorEnabled({ isTTY: true }, env({}))).toBe(true);
    expect(colorEnabled({ isTTY: false }, env({}))).toBe(false);
    expect(colorEnabled({ isTTY: true }, env({ NO_COLOR: '1' }))).toBe(false);
    expect(colorEnabled({ isTTY: false }, env({ FORCE_COLOR: '1' }))).toBe(true);
    expect(colorStatus('FAILED', colors(false))).toBe('FAILED');
    expect(colorStatus('FAILED', colors(true))).toBe('\u001b[31mFAILED\u001b[39m');
    expect(colorStatus('SUCCEEDED', colors(true))).toContain('\u001b[32m');
  });
});

describe('queue table', () => {
  const pipeline = job(12, [
    task(0, { name: 'prepare', status: 'SUCCEEDED', attempts: 1, startedAt: ago(590_000), endedAt: ago(585_000), nodeNames: ['n1'] }),
    task(1, { name: 'flaky', status: 'RUNNING', attempts: 5, restarts: 1, maxRestarts: 1, exitCodeRestarts: 3, startedAt: ago(580_000), nodeNames: ['n2', 'n3', 'n4'] }),
    task(2, { name: 'report' }),
  ], { restartCount: 1, exitCodeRestartCount: 3, currentTask: 1 });
  const single = job(3, [task(0, { status: 'FAILED', attempts: 2, restarts: 1, maxRestarts: 1, startedAt: ago(500_000), endedAt: ago(400_000), nodeNames: ['c1', 'c2'] })], {
    name: 'one', owner: 'mia', status: 'FAILED', endedAt: ago(400_000), totalDurationMs: 200_000, jobDurationMs: 100_000, restartCount: 1, recoveryCount: 2,
  });

  it('a job row, then one indented row per task of a pipeline; a one-task job is one row; restarts by cause; where each task runs', () => {
    const rows = queueRows([pipeline, single], NOW);
    expect(rows).toEqual([
      ['12', '', 'job-12', '10 minutes ago', '10m 0s', '9m 0s', '1 (+3 on exit code)', '500', 'RUNNING', '', '', '-', 'n2 +2'],
      [' ↳', '0', 'prepare', '10 minutes ago', '15s', '5s', '0', '', 'SUCCEEDED', '', '', '', 'n1'],
      [' ↳', '1', 'flaky', '10 minutes ago', '10m 0s', '9m 40s', '1 (+3 on exit code)', '', 'RUNNING', '', '', '', 'n2 +2'],
      [' ↳', '2', 'report', '10 minutes ago', '-', '-', '0', '', 'PENDING', '', '', '', '-'],
      ['3', '-', 'one', '10 minutes ago', '3m 20s', '1m 40s', '1 (+2 recov.)', '500', 'FAILED', '', '', 'mia', 'c1,c2'],
    ]);
    expect(restartsCell(0, 10, 1)).toBe('0 (+10 on exit code, +1 recov.)');
    expect(nodesCell(undefined)).toBe('-');
  });

  it('shows why a PENDING job waits (short form), "in line" before a pass read it, and its place', () => {
    const waiting = (id: number, pendingReason: string | null, place: JobSummary['place'] = null) =>
      job(id, [task(0, {})], { status: 'PENDING', startedAt: null, jobDurationMs: null, priority: 900, pendingReason, place });
    const rows = queueRows([waiting(5, '3 jobs ahead at priority ≥ 500', { position: 4, queuePosition: 2, ahead: { jobs: 3, cpus: 3, gpus: 0 } }), waiting(6, null), waiting(7, 'queue a-very-long-queue-name at its limit (2 of 2 running)', { position: null, queuePosition: 7, ahead: null })], NOW);
    expect(rows.map((r) => [r[7], r[8], r[9], r[10]])).toEqual([
      ['900', 'PENDING', '#4 · q2', '3 jobs ahead at priority ≥ 500'],
      ['900', 'PENDING', '', 'in line'],
      ['900', 'PENDING', 'q7', 'queue a-very-long-queue-name at its lim…'],
    ]);
    // A restart waiting out its backoff says when it starts.
    const restarting = job(11, [task(0, {})], { status: 'RUNNING', pendingReason: null, nextAttemptAt: new Date(NOW.getTime() + 29_500).toISOString() });
    expect(queueRows([restarting], NOW)[0][10]).toBe('restart in 30 s');
    // The note on the start timeout is left out of the column; a job Slurm holds shows Slurm's reason.
    const held = job(8, [task(0, {})], { status: 'RUNNING', priority: 500, pendingReason: 'Slurm: Resources' });
    const running = job(9, [task(0, {})], { status: 'RUNNING', priority: 500, pendingReason: null });
    expect(queueRows([waiting(10, 'needs 4 CPUs, 2 of 8 free · start timeout in 12 min'), held, running], NOW).map((r) => [r[8], r[10]])).toEqual([
      ['PENDING', 'needs 4 CPUs, 2 of 8 free'],
      ['RUNNING', 'Slurm: Resources'],
      ['RUNNING', ''],
    ]);
  });

  it('renders aligned columns with the SkyPilot headers', () => {
    const text = renderQueueTable([pipeline, single], NOW);
    const lines = text.split('\n');
    expect(lines[0].split(/\s{2,}/)).toEqual([...QUEUE_COLUMNS]);
    expect(lines).toHaveLength(6);
    // STATUS starts at the same column in every line.
    const col = lines[0].indexOf('STATUS');
    for (const l of lines.slice(1)) expect(l.slice(col)).toMatch(/^[A-Z_]+(\s|$)/);
    expect(text).not.toContain('\u001b[');
    expect(renderQueueTable([single], NOW, colors(true))).toContain('\u001b[31mFAILED');
  });

  it('--json is the API JobSummary list', () => {
    const parsed = JSON.parse(queueJson([pipeline])) as JobSummary[];
    expect(parsed[0].id).toBe(12);
    expect(parsed[0].tasks.map((t) => [t.index, t.name, t.status, t.attempts, t.exitCodeRestarts, t.nodeNames])).toEqual([
      [0, 'prepare', 'SUCCEEDED', 1, 0, ['n1']],
      [1, 'flaky', 'RUNNING', 5, 3, ['n2', 'n3', 'n4']],
      [2, 'report', 'PENDING', 0, 0, []],
    ]);
    expect(parsed[0].exitCodeRestartCount).toBe(3);
    expect(queueJson([])).toBe('[]');
  });

  it('default view: live jobs and those finished in the last 24 h', () => {
    const old = job(1, [task(0)], { status: 'SUCCEEDED', endedAt: ago(25 * 3600_000) });
    const recent = job(2, [task(0)], { status: 'FAILED', endedAt: ago(3600_000) });
    const live = job(3, [task(0)], { status: 'PENDING' });
    expect(defaultView([old, recent, live], NOW).map((j) => j.id)).toEqual([2, 3]);
  });

  it('-s accepts any case and commas, and names the valid statuses otherwise', () => {
    expect(parseStatuses(['running', 'Failed,pending', 'RUNNING'])).toEqual(['RUNNING', 'FAILED', 'PENDING']);
    expect(() => parseStatuses(['nope'])).toThrow(/unknown status "nope"; valid statuses: PENDING, STARTING/);
  });
});

describe('exit codes: one table for code, help and docs', () => {
  it('codes and names are unique; job statuses map to their codes', () => {
    expect(new Set(EXIT_CODE_TABLE.map((r) => r.code)).size).toBe(EXIT_CODE_TABLE.length);
    expect(new Set(EXIT_CODE_TABLE.map((r) => r.name)).size).toBe(EXIT_CODE_TABLE.length);
    expect(EXIT.OK).toBe(0);
    const byStatus = Object.fromEntries(JOB_STATUSES.filter((s) => ['SUCCEEDED', 'CANCELLED'].includes(s) || s.startsWith('FAILED')).map((s) => [s, exitCodeForStatus(s)]));
    expect(byStatus).toEqual({ SUCCEEDED: 0, CANCELLED: 3, FAILED: 1, FAILED_SETUP: 8, FAILED_PRECHECKS: 9, FAILED_NO_RESOURCE: 9, FAILED_CONTROLLER: 9 });
    expect(new Set([EXIT.JOB_FAILED, EXIT.JOB_CANCELLED, EXIT.NOT_FOUND, EXIT.STOPPED_FOLLOWING, EXIT.USAGE]).size).toBe(5);
  });

  it('--help lists every code', () => {
    // Wide enough that no meaning wraps.
    const help = exitCodesText(400);
    for (const r of EXIT_CODE_TABLE) expect(help).toContain(`${String(r.code).padStart(2)}  ${r.meaning}`);
  });

  it('docs/cli.md carries exactly the table', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../docs/cli.md'), 'utf8');
    const m = /<!-- exit-codes:begin -->\n([\s\S]*?)\n<!-- exit-codes:end -->/.exec(doc);
    expect(m?.[1]).toBe(exitCodesMarkdown());
  });
});

describe('connection settings', () => {
  it('URL: --url, then JOBDECK_URL, then HOST/PORT, then 127.0.0.1:3000', () => {
    expect(resolveUrl({ url: 'http://a:1/' }, env({ JOBDECK_URL: 'http://b:2' }))).toBe('http://a:1');
    expect(resolveUrl({}, env({ JOBDECK_URL: 'http://b:2', PORT: '9' }))).toBe('http://b:2');
    expect(resolveUrl({}, env({ PORT: '4123' }))).toBe('http://127.0.0.1:4123');
    expect(resolveUrl({}, env({ HOST: '0.0.0.0', PORT: '8080' }))).toBe('http://127.0.0.1:8080');
    expect(resolveUrl({}, env({}))).toBe('http://127.0.0.1:3000');
    expect(resolveUrl({ url: 'localhost:5000' }, env({}))).toBe('http://localhost:5000');
    expect(() => resolveUrl({ url: 'ftp://x' }, env({}))).toThrow(/--url: expected an http/);
  });

  it('token: --token, then JOBDECK_TOKEN, then the local token file', async () => {
    const local = async () => 'from-file';
    expect(await resolveToken({ token: 'flag' }, env({ JOBDECK_TOKEN: 'envtok' }), local)).toBe('flag');
    expect(await resolveToken({}, env({ JOBDECK_TOKEN: 'envtok' }), local)).toBe('envtok');
    expect(await resolveToken({}, env({}), local)).toBe('from-file');
    expect(await resolveToken({}, env({}), () => null)).toBeUndefined();
    expect(
      await resolveToken({}, env({}), () => {
        throw new Error('unreadable');
      }),
    ).toBeUndefined();
  });
});

describe('API errors', () => {
  it('maps HTTP statuses to exit codes', () => {
    expect([400, 401, 403, 404, 409, 422, 500, 503].map(exitCodeForHttp)).toEqual([2, 7, 12, 4, 10, 2, 11, 11]);
  });

  it('shows the problem+json detail', async () => {
    const res = new Response(JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'job 5 already finished (SUCCEEDED)' }), { status: 409 });
    const e = await errorFromResponse(res, 'cancel');
    expect(e.message).toBe('job 5 already finished (SUCCEEDED)');
    expect(e.exitCode).toBe(EXIT.REFUSED);
  });

  it('lists every spec issue with file:line and key path', async () => {
    const issues = [
      { file: 'job.yaml', line: 3, column: 8, path: 'resources.cpus', message: 'expected a number' },
      { file: 'job.yaml', line: null, column: null, path: '', message: 'no run' },
    ];
    const res = new Response(JSON.stringify({ title: 'Invalid job spec', status: 400, detail: 'job.yaml:3 resources.cpus: expected a number', issues }), { status: 400 });
    const e = await errorFromResponse(res, 'submit');
    expect(e.exitCode).toBe(EXIT.USAGE);
    expect(e.message).toBe('invalid job spec (2 problems):');
    expect(e.details).toEqual(['job.yaml:3 resources.cpus: expected a number', 'job.yaml: no run']);
    expect(formatIssues([{ path: 'ids[0]', message: 'x' }])).toEqual([]);
  });

  it('a non-JSON answer still says something', async () => {
    const e = await errorFromResponse(new Response('Bad Gateway', { status: 502, statusText: 'Bad Gateway' }), 'list jobs');
    expect(e.message).toBe('Bad Gateway');
    expect(e.exitCode).toBe(EXIT.INTERNAL);
  });
});

describe('arguments', () => {
  it('--env K=V and K from this shell', () => {
    expect(parseEnvs(['A=1', 'B=x=y', 'C='], env({}))).toEqual({ A: '1', B: 'x=y', C: '' });
    expect(parseEnvs(['HOME_DIR'], env({ HOME_DIR: '/h' }))).toEqual({ HOME_DIR: '/h' });
    expect(parseEnvs([], env({}))).toBeUndefined();
    expect(() => parseEnvs(['UNSET_X'], env({}))).toThrow(/UNSET_X is not set in this shell/);
    expect(() => parseEnvs(['1A=2'], env({}))).toThrow(/expected NAME=VALUE/);
  });

  it('--secret NAME=V and NAME from this shell; an error names the secret, never its value', () => {
    expect(parseEnvs(['HF_TOKEN', 'B=v'], env({ HF_TOKEN: 'hf_x' }), '--secret')).toEqual({ HF_TOKEN: 'hf_x', B: 'v' });
    expect(() => parseEnvs(['UNSET_S'], env({}), '--secret')).toThrow('--secret UNSET_S: UNSET_S is not set in this shell; give a value with --secret UNSET_S=VALUE');
    let msg = '';
    try {
      parseEnvs(['BAD-NAME=topsecret'], env({}), '--secret');
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toMatch(/^--secret "BAD-NAME": expected NAME=VALUE/);
    expect(msg).not.toContain('topsecret');
  });

  it('TASK by index or name', () => {
    const j = { id: 7, tasks: [{ index: 0, name: 'prep' }, { index: 1, name: 'train' }] } as Parameters<typeof resolveTask>[0];
    expect(resolveTask(j, '1')).toBe(1);
    expect(resolveTask(j, 'prep')).toBe(0);
    expect(() => resolveTask(j, '2')).toThrow('job 7 has tasks 0–1 (tasks are numbered from 0); there is no task 2');
    expect(() => resolveTask({ id: 8, tasks: [{ index: 0, name: null }] } as Parameters<typeof resolveTask>[0], '1')).toThrow('job 8 has only task 0 (tasks are numbered from 0); there is no task 1');
    expect(() => resolveTask(j, 'nope')).toThrow(/no task "nope"; its tasks: 0 \(prep\), 1 \(train\)/);
  });

  it('an ambiguous name lists the jobs', () => {
    const lines = listForError([job(12, [task(0)], { status: 'RUNNING' }), job(3, [task(0)], { status: 'FAILED' })], NOW);
    expect(lines).toEqual(['  ID 12  RUNNING  submitted 10 minutes ago', '  ID 3   FAILED   submitted 10 minutes ago']);
  });
});
