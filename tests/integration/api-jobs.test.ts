/**
 * The job API's lib layer (lib/api/jobs.ts, lib/api/request.ts, lib/control/submit.ts,
 * lib/api/views.ts) in-process, against both databases: submission and idempotency (20
 * concurrent submits with one submissionId), list filters and keyset paging (3 pages, and a deep
 * page among 10,000 jobs), detail shape with attempts, log sizes, events and masked secrets.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { ApiError } from '../../lib/api/errors';
import { cancelMany, cancelOne, deleteOne, detail, list, patchOne, submit, validateSpec, type DeleteDeps } from '../../lib/api/jobs';
import { createExecutors } from '../../lib/executors';
import { monitorSettingsFromEnv } from '../../lib/monitor/config';
import { parseCancelRequest, parseListQuery, parsePatchRequest, parseSubmitRequest } from '../../lib/api/request';
import { jobDir } from '../../lib/jobs/paths';
import { MASKED_VALUE } from '../../lib/auth/secrets';
import { decodeCursor, encodeCursor } from '../../lib/api/cursor';
import { getJobSummary, listJobs } from '../../lib/api/views';
import { SubmissionConflictError, submitJobSpec } from '../../lib/control';
import { startAttempt, transitionMany, type Store } from '../../lib/store';
import type { JobStatus } from '../../lib/jobs/status';

const PIPELINE = `name: two-steps
---
name: prepare
envs:
  GITHUB_TOKEN: ghp_secret123
  EPOCHS: "3"
run: echo prepare
---
name: train
job_recovery:
  max_restarts_on_errors: 2
resources:
  cpus: 2+
run: echo train
`;

function yamlRequest(text: string, query = ''): Request {
  return new Request(`http://x/api/jobs${query}`, { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: text });
}

async function apiError(p: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe.each(DB_KINDS)('job API (lib) on %s', (kind) => {
  // The nested groups below seed rows in their own beforeAll and read them in several tests.
  const t = useDatabase(kind, `api-jobs-${kind}`, { isolation: 'file' });
  let db: PrismaClient;
  let store: Store;
  let tmp: string;
  /** What the server's DELETE route hands deleteOne(): its data folder, executors and grace. */
  let deps: DeleteDeps;
  const savedHome = process.env.JOBDECK_HOME;
  beforeAll(async () => {
    ({ prisma: db, store } = t);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-api-'));
    // deleteJobs removes $JOBDECK_HOME/jobs/<id>: keep it inside this test's folder.
    process.env.JOBDECK_HOME = tmp;
    const executors = createExecutors();
    deps = { home: tmp, executor: (name) => executors.get(name), leftoverGraceMs: monitorSettingsFromEnv().leftoverGraceMs };
  });
  afterAll(async () => {
    rmSync(tmp, { recursive: true, force: true });
    if (savedHome === undefined) delete process.env.JOBDECK_HOME;
    else process.env.JOBDECK_HOME = savedHome;
  });

  it('submits a YAML pipeline: PENDING job, tasks stored as normalized specs, 201 semantics', async () => {
    const out = await submit(store, await parseSubmitRequest(yamlRequest(PIPELINE, '?name=renamed')));
    expect(out.created).toBe(true);
    expect(out.result).toMatchObject({ status: 'PENDING', submissionId: null });
    const job = await db.job.findUniqueOrThrow({ where: { id: out.result.id }, include: { tasks: { orderBy: { index: 'asc' } } } });
    expect(job.name).toBe('renamed');
    expect(job.specYaml).toBe(PIPELINE);
    expect(job.cpus).toBe(2);
    expect(job.taskCount).toBe(2);
    expect(job.tasks.map((x) => x.name)).toEqual(['prepare', 'train']);
    expect(job.tasks[1].spec).toMatchObject({ run: 'echo train', jobRecovery: { maxRestartsOnErrors: 2 }, resources: { cpus: 2, cpusAtLeast: true } });
  });

  it('submits JSON forms: cmd shortcut, spec object, yaml field, with name and env overrides and metadata', async () => {
    const cmd = await submit(
      store,
      await parseSubmitRequest(
        new Request('http://x/api/jobs', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ cmd: 'echo hi', name: 'one-cmd', envs: { A: '1' }, metadata: { by: 'test' } }),
        }),
      ),
    );
    const row = await db.job.findUniqueOrThrow({ where: { id: cmd.result.id }, include: { tasks: true } });
    expect(row).toMatchObject({ name: 'one-cmd', metadata: { by: 'test' } });
    expect(row.tasks[0].spec).toMatchObject({ run: 'echo hi', envs: { A: '1' } });
    expect(row.specYaml).toContain('echo hi');

    const spec = await submit(store, { source: { kind: 'spec', value: [{ name: 'hdr' }, { run: 'echo a' }, { run: 'echo b' }] } });
    expect(await db.job.findUniqueOrThrow({ where: { id: spec.result.id } })).toMatchObject({ taskCount: 2, executor: 'local' });
    const slurm = await submit(store, { source: { kind: 'yaml', text: 'resources:\n  infra: slurm\nrun: echo s\n' } });
    expect((await db.job.findUniqueOrThrow({ where: { id: slurm.result.id } })).executor).toBe('slurm');
  });

  it('answers a spec error with 400, every issue with line and key path, and a formatted detail', async () => {
    const bad = 'name: broken\nrun: echo hi\nresources:\n  cpus: lots\n';
    const err = await apiError(submit(store, { source: { kind: 'yaml', text: bad, filename: 'broken.yaml' } }));
    expect(err.status).toBe(400);
    expect(err.title).toBe('Invalid job spec');
    const issues = err.extra.issues as Array<{ file: string; line: number; path: string; message: string }>;
    expect(issues[0]).toMatchObject({ file: 'broken.yaml', line: 4, path: expect.stringContaining('resources.cpus') });
    expect(err.detail).toContain('broken.yaml:4');
    const before = await db.job.count();
    await apiError(submit(store, { source: { kind: 'yaml', text: 'run: [unclosed\n' } }));
    expect(await db.job.count()).toBe(before);
  });

  it('takes a priority from the query, the JSON body or the spec (the request wins; default 500), and refuses a bad one with a 400 naming the field', async () => {
    const plain = await submit(store, { source: { kind: 'cmd', cmd: 'echo p' } });
    const fromSpec = await submit(store, { source: { kind: 'yaml', text: 'priority: 700\nrun: echo p\n' } });
    const fromQuery = await submit(store, await parseSubmitRequest(yamlRequest('priority: 700\nrun: echo p\n', '?priority=42')));
    const json = (body: unknown) => new Request('http://x/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const fromBody = await submit(store, await parseSubmitRequest(json({ cmd: 'echo p', priority: 1000 })));
    const prio = async (id: number) => (await db.job.findUniqueOrThrow({ where: { id } })).priority;
    expect([await prio(plain.result.id), await prio(fromSpec.result.id), await prio(fromQuery.result.id), await prio(fromBody.result.id)]).toEqual([500, 700, 42, 1000]);
    expect((await getJobSummary(store, fromBody.result.id))!.priority).toBe(1000);
    for (const bad of [1001, -1, 2.5, '7']) {
      const err = await apiError(parseSubmitRequest(json({ cmd: 'echo p', priority: bad })));
      expect(err.status).toBe(400);
      expect(err.detail).toBe('request body: priority: expected a priority (an integer from 0 to 1000)');
    }
    const q = await apiError(parseSubmitRequest(yamlRequest('run: echo\n', '?priority=high')));
    expect(q.detail).toBe('query: priority: expected a priority (an integer from 0 to 1000)');
    const spec = await apiError(submit(store, { source: { kind: 'yaml', text: 'priority: 5000\nrun: echo\n' } }));
    expect(spec.detail).toBe('job.yaml:1 task[0].priority: expected a priority (an integer from 0 to 1000), got 5000');
  });

  it("changes a PENDING job's priority (PATCH): the summary answers it; 409 when not PENDING, 404 unknown, 400 naming the field", async () => {
    const out = await submit(store, { source: { kind: 'cmd', cmd: 'echo patch' } });
    const patch = (body: unknown) => new Request(`http://x/api/jobs/${out.result.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(await patchOne(store, out.result.id, await parsePatchRequest(patch({ priority: 10 })))).toMatchObject({ id: out.result.id, priority: 10 });
    expect((await db.job.findUniqueOrThrow({ where: { id: out.result.id } })).priority).toBe(10);
    for (const [body, detail] of [
      [{ priority: 2000 }, 'request body: priority: expected a priority (an integer from 0 to 1000)'],
      [{}, 'request body: priority: expected a priority (an integer from 0 to 1000)'],
      [{ priority: 1, name: 'x' }, 'request body: Unrecognized key: "name"'],
    ] as const) {
      const err = await apiError(parsePatchRequest(patch(body)));
      expect(err.status).toBe(400);
      expect(err.detail).toBe(detail);
    }
    expect((await apiError(patchOne(store, 999_999, { priority: 1 }))).status).toBe(404);
    await cancelOne(store, out.result.id);
    const err = await apiError(patchOne(store, out.result.id, { priority: 1 }));
    expect(err.status).toBe(409);
    expect(err.detail).toBe(`job ${out.result.id} is CANCELLED: only a PENDING job's priority can change`);
  });

  it('validateSpec answers ok/issues without saving', async () => {
    expect(validateSpec(PIPELINE)).toEqual({ ok: true, issues: [], warnings: [], required: [] });
    expect(validateSpec('queue: gpu\nrun: echo\n', 'q.yaml', ['batch']).issues.map((i) => i.message)).toEqual(['queue "gpu" is not defined; the queues are: default, batch']);
    expect(validateSpec('queue: gpu\nrun: echo\n', 'q.yaml', ['gpu']).ok).toBe(true);
    const v = validateSpec('run: echo\nbogus_key: 1\n', 'x.yaml');
    expect(v.ok).toBe(false);
    expect(v.issues[0]).toMatchObject({ file: 'x.yaml', line: 2 });
  });

  it('makes a repeated submissionId idempotent: same spec → same job, different spec → 409', async () => {
    const first = await submit(store, { source: { kind: 'cmd', cmd: 'echo idem' }, submissionId: 'idem-1' });
    expect(first.created).toBe(true);
    const again = await submit(store, { source: { kind: 'cmd', cmd: 'echo idem' }, submissionId: 'idem-1' });
    expect(again).toEqual({ created: false, result: first.result });
    // The same job submitted as YAML normalizes to the same spec (a --cmd job's task is named like the job).
    const asYaml = await submit(store, { source: { kind: 'yaml', text: 'name: echo idem\nrun: echo idem\n' }, submissionId: 'idem-1' });
    expect(asYaml.result.id).toBe(first.result.id);
    const err = await apiError(submit(store, { source: { kind: 'cmd', cmd: 'echo other' }, submissionId: 'idem-1' }));
    expect(err.status).toBe(409);
    expect(err.detail).toContain(`job ${first.result.id}`);
    // An override is part of the spec.
    await expect(submitJobSpec(store, { source: { kind: 'cmd', cmd: 'echo idem' }, envs: { X: '1' }, submissionId: 'idem-1' })).rejects.toBeInstanceOf(SubmissionConflictError);
    expect(await db.job.count({ where: { submissionId: 'idem-1' } })).toBe(1);
  });

  it('creates exactly one job for 20 concurrent submits with one submissionId', async () => {
    const outs = await Promise.all(Array.from({ length: 20 }, () => submitJobSpec(store, { source: { kind: 'yaml', text: 'name: race\nrun: echo race\n' }, submissionId: 'race-1' })));
    expect(outs.filter((o) => o.created)).toHaveLength(1);
    expect(new Set(outs.map((o) => o.result.id)).size).toBe(1);
    expect(await db.job.count({ where: { submissionId: 'race-1' } })).toBe(1);
    expect(await db.job.count({ where: { name: 'race' } })).toBe(1);
  });

  describe('list and detail', () => {
    const ids: number[] = [];
    beforeAll(async () => {
      await db.job.deleteMany({});
      // 7 jobs: names list-0 … list-6; list-3 and list-5 FAILED through the guarded store.
      for (let i = 0; i < 7; i++) {
        const out = await submitJobSpec(store, { source: { kind: 'yaml', text: `name: List-${i}\n---\nrun: echo a\n---\nrun: echo b\n` } });
        ids.push(out.result.id);
      }
      for (const i of [3, 5]) {
        const tasks = await db.task.findMany({ where: { jobId: ids[i] }, orderBy: { index: 'asc' } });
        const r = await transitionMany(store, [
          { entity: 'job', id: ids[i], from: 'PENDING', to: 'FAILED_PRECHECKS', reason: 'test' },
          { entity: 'task', id: tasks[0].id, from: 'PENDING', to: 'CANCELLED' },
          { entity: 'task', id: tasks[1].id, from: 'PENDING', to: 'CANCELLED' },
        ]);
        expect(r.outcome).toBe('applied');
      }
    });

    it('lists newest first with task summaries and pages with an opaque cursor across 3 pages', async () => {
      const p1 = await list(store, parseListQuery(new URL('http://x/api/jobs?limit=3')));
      expect(p1.jobs.map((j) => j.id)).toEqual([ids[6], ids[5], ids[4]]);
      expect(p1.jobs[0].tasks).toHaveLength(2);
      expect(p1.jobs[0]).toMatchObject({ name: 'List-6', status: 'PENDING', taskCount: 2, tasksSucceeded: 0, cancelRequested: false, jobDurationMs: null });
      expect(p1.nextCursor).toBe(encodeCursor(ids[4]));
      const p2 = await list(store, parseListQuery(new URL(`http://x/api/jobs?limit=3&cursor=${p1.nextCursor}`)));
      expect(p2.jobs.map((j) => j.id)).toEqual([ids[3], ids[2], ids[1]]);
      const p3 = await list(store, parseListQuery(new URL(`http://x/api/jobs?limit=3&cursor=${p2.nextCursor}`)));
      expect(p3.jobs.map((j) => j.id)).toEqual([ids[0]]);
      expect(p3.nextCursor).toBeNull();
    });

    it('filters by status (repeatable, comma list, any case) and by q (name substring or exact id)', async () => {
      const failed = await list(store, parseListQuery(new URL('http://x/api/jobs?status=failed_prechecks')));
      expect(failed.jobs.map((j) => j.id)).toEqual([ids[5], ids[3]]);
      const both = await list(store, parseListQuery(new URL('http://x/api/jobs?status=PENDING&status=FAILED_PRECHECKS,RUNNING')));
      expect(both.jobs).toHaveLength(7);
      const pendingPaged = await listJobs(store, { status: ['PENDING'], limit: 2, beforeId: ids[4] });
      expect(pendingPaged.jobs.map((j) => j.id)).toEqual([ids[2], ids[1]]);
      const byName = await list(store, parseListQuery(new URL('http://x/api/jobs?q=list-2')));
      expect(byName.jobs.map((j) => j.id)).toEqual([ids[2]]);
      const byId = await list(store, parseListQuery(new URL(`http://x/api/jobs?q=${ids[4]}`)));
      expect(byId.jobs.map((j) => j.id)).toContain(ids[4]);
      const none = await list(store, parseListQuery(new URL('http://x/api/jobs?q=nothing-like-this')));
      expect(none).toEqual({ jobs: [], nextCursor: null });
    });

    it('counts attempts per task in the summary (one groupBy per page)', async () => {
      const task = await db.task.findFirstOrThrow({ where: { jobId: ids[6], index: 0 } });
      const a = await startAttempt(store, { taskId: task.id, number: 1, cause: 'first', taskFrom: 'PENDING' });
      expect(a.outcome).toBe('applied');
      const s = await getJobSummary(store, ids[6]);
      expect(s?.tasks.map((x) => [x.index, x.status, x.attempts])).toEqual([
        [0, 'STARTING', 1],
        [1, 'PENDING', 0],
      ]);
    });

    it('answers the detail: tasks with attempts (log size from disk), events in order, secrets masked', async () => {
      const out = await submitJobSpec(store, { source: { kind: 'yaml', text: PIPELINE }, envs: { DB_URL: 'postgresql://u:hunter2@h/db' } });
      const tasks = await db.task.findMany({ where: { jobId: out.result.id }, orderBy: { index: 'asc' } });
      const logPath = path.join(tmp, `job-${out.result.id}.log`);
      writeFileSync(logPath, 'hello\nworld\n');
      const started = await startAttempt(store, { taskId: tasks[0].id, number: 1, cause: 'first', taskFrom: 'PENDING', logPath });
      expect(started.outcome).toBe('applied');
      const missing = await startAttempt(store, { taskId: tasks[1].id, number: 1, cause: 'first', taskFrom: 'PENDING', logPath: path.join(tmp, 'never-written.log') });
      expect(missing.outcome).toBe('applied');

      const d = await detail(store, out.result.id);
      expect(d.tasks).toHaveLength(2);
      const [t0, t1] = d.tasks;
      expect(t0).toMatchObject({ index: 0, name: 'prepare', status: 'STARTING', attempts: 1, run: 'echo prepare', maxRestarts: 0 });
      expect(t0.envs).toEqual({ GITHUB_TOKEN: MASKED_VALUE, EPOCHS: '3', DB_URL: `postgresql://u:${MASKED_VALUE}@h/db` });
      expect(t0.attemptList).toEqual([
        expect.objectContaining({ number: 1, status: 'STARTING', cause: 'first', exitCode: null, logBytes: 12, executor: 'local' }),
      ]);
      expect(t1.attemptList[0].logBytes).toBe(0);
      expect(t1).toMatchObject({ maxRestarts: 2, resources: { cpus: 2, cpusAtLeast: true, memoryGb: null, memoryAtLeast: false }, recoverOnExitCodes: [] });
      expect(d.specYaml).not.toContain('ghp_secret123');
      expect(d.specYaml).toContain(`GITHUB_TOKEN: ${MASKED_VALUE}`);
      expect(JSON.stringify(d)).not.toContain('hunter2');
      expect(JSON.stringify(d)).not.toContain('ghp_secret123');
      const eventIds = d.events.map((e) => e.id);
      expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
      expect(d.events[0]).toMatchObject({ entity: 'job', from: null, to: 'PENDING', reason: 'submitted' });
      expect(d.events.filter((e) => e.entity === 'attempt').map((e) => [e.taskIndex, e.attemptNumber, e.to])).toEqual([
        [0, 1, 'STARTING'],
        [1, 1, 'STARTING'],
      ]);
      expect(d).toMatchObject({ executor: 'local', metadata: null, taskCount: 2, currentTask: 0 });
    });

    it('answers 404 "job N not found" for an unknown id', async () => {
      const err = await apiError(detail(store, 999_999));
      expect(err.status).toBe(404);
      expect(err.detail).toBe('job 999999 not found');
    });
  });

  describe('cancel and delete', () => {
    const cancelBody = (body: unknown) =>
      parseCancelRequest(new Request('http://x/api/jobs/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));

    it('cancels a PENDING job at once, then answers 409 "already CANCELLED"; 404 for an unknown job', async () => {
      const { result } = await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'sleep 60' } });
      expect(await cancelOne(store, result.id)).toEqual({ cancelled: [result.id], cancelling: [], alreadyTerminal: [], notFound: [] });
      const again = await apiError(cancelOne(store, result.id));
      expect(again.status).toBe(409);
      expect(again.detail).toBe(`job ${result.id} is already CANCELLED`);
      const unknown = await apiError(cancelOne(store, 999_998));
      expect([unknown.status, unknown.detail]).toEqual([404, 'job 999998 not found']);
    });

    it('cancels a running job into CANCELLING (the monitor finishes it)', async () => {
      const { result } = await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'sleep 60' } });
      const moved = await transitionMany(store, [{ entity: 'job', id: result.id, from: 'PENDING', to: 'RUNNING' }]);
      expect(moved.outcome).toBe('applied');
      expect(await cancelOne(store, result.id)).toEqual({ cancelled: [], cancelling: [result.id], alreadyTerminal: [], notFound: [] });
      const d = await detail(store, result.id);
      expect(d).toMatchObject({ status: 'CANCELLING', cancelRequested: true });
      const refused = await apiError(deleteOne(store, result.id, deps));
      expect([refused.status, refused.detail]).toEqual([409, `job ${result.id} is CANCELLING: it is being cancelled; delete it once it is CANCELLED (only a terminal job can be deleted)`]);
    });

    it('refuses to delete a job that is not terminal; deletes a terminal one with its folder (204 semantics)', async () => {
      const { result } = await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'sleep 60' } });
      const refused = await apiError(deleteOne(store, result.id, deps));
      expect(refused.status).toBe(409);
      expect(refused.detail).toMatch(new RegExp(`^job ${result.id} is PENDING: cancel it first`));
      await cancelOne(store, result.id);
      const folder = jobDir(result.id);
      expect(folder.startsWith(tmp)).toBe(true);
      mkdirSync(path.join(folder, 'task-0'), { recursive: true });
      writeFileSync(path.join(folder, 'task-0', 'log'), 'bytes');
      await deleteOne(store, result.id, deps);
      expect(existsSync(folder)).toBe(false);
      expect((await apiError(detail(store, result.id))).status).toBe(404);
      const gone = await apiError(deleteOne(store, result.id, deps));
      expect([gone.status, gone.detail]).toEqual([404, `job ${result.id} not found`]);
    });

    it('cancels by ids (each id in one list) and by filter (only matching jobs not yet terminal)', async () => {
      const name = `filter-${kind}`;
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'sleep 60' }, name })).result.id);
      const other = (await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'sleep 60' }, name: 'unrelated' })).result.id;
      await cancelOne(store, ids[0]);
      const byFilter = await cancelMany(store, await cancelBody({ q: name.toUpperCase() }));
      expect(byFilter).toEqual({ cancelled: [ids[1], ids[2]], cancelling: [], alreadyTerminal: [], notFound: [] });
      expect((await detail(store, other)).status).toBe('PENDING');
      const byIds = await cancelMany(store, await cancelBody({ ids: [ids[0], other, 999_997] }));
      expect(byIds).toEqual({ cancelled: [other], cancelling: [], alreadyTerminal: [{ id: ids[0], status: 'CANCELLED' }], notFound: [999_997] });
      expect(await cancelMany(store, await cancelBody({ status: ['SUCCEEDED'] }))).toEqual({ cancelled: [], cancelling: [], alreadyTerminal: [], notFound: [] });
    });

    it('cancels every job not yet terminal with all: true', async () => {
      const a = (await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'sleep 60' } })).result.id;
      const r = await cancelMany(store, await cancelBody({ all: true }));
      expect(r.cancelled).toContain(a);
      expect(await db.job.count({ where: { status: 'PENDING' } })).toBe(0);
    });
  });

  describe('10,000 jobs', () => {
    let all: number[] = [];
    const statuses: JobStatus[] = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'];
    beforeAll(async () => {
      await db.job.deleteMany({});
      const N = 10_000;
      // Seeding only: bulk rows (the store is for status changes of live jobs, not fixtures),
      // made by the database itself in two statements — 10,000 rows of parameters through the
      // client cost more than every test of the group.
      const statusArray = `ARRAY[${statuses.map((st) => `'${st}'`).join(', ')}]`;
      await db.$executeRawUnsafe(
        `INSERT INTO "Job" ("name", "status", "specYaml", "spec", "specHash")
         SELECT 'bulk-' || lpad(i::text, 5, '0'), (${statusArray})[i % ${statuses.length} + 1]::"JobStatus", 'run: echo bulk' || chr(10), '{"name":"bulk","tasks":[]}'::jsonb, 'seed'
         FROM generate_series(0, ${N - 1}) AS i ORDER BY i`,
      );
      all = (await db.job.findMany({ select: { id: true }, orderBy: { id: 'desc' } })).map((r) => r.id);
      expect(all).toHaveLength(N);
      await db.$executeRawUnsafe(`INSERT INTO "Task" ("jobId", "index", "spec") SELECT "id", 0, '{"run":"echo bulk"}'::jsonb FROM "Job"`);
    });

    it('answers a deep page exactly (keyset: id < cursor, newest first)', async () => {
      const at = 9_000;
      const page = await list(store, parseListQuery(new URL(`http://x/api/jobs?limit=50&cursor=${encodeCursor(all[at - 1])}`)));
      expect(page.jobs.map((j) => j.id)).toEqual(all.slice(at, at + 50));
      expect(page.jobs.every((j) => j.tasks.length === 1)).toBe(true);
      expect(decodeCursor(page.nextCursor!)).toBe(all[at + 49]);
      const last = await list(store, parseListQuery(new URL(`http://x/api/jobs?limit=200&cursor=${encodeCursor(all[all.length - 101])}`)));
      expect(last.jobs.map((j) => j.id)).toEqual(all.slice(-100));
      expect(last.nextCursor).toBeNull();
    });

    it('answers a deep filtered page exactly', async () => {
      const failed = (await db.job.findMany({ where: { status: 'FAILED' }, select: { id: true }, orderBy: { id: 'desc' } })).map((r) => r.id);
      expect(failed).toHaveLength(2_500);
      const page = await list(store, parseListQuery(new URL(`http://x/api/jobs?status=FAILED&limit=100&cursor=${encodeCursor(failed[1_999])}`)));
      expect(page.jobs.map((j) => j.id)).toEqual(failed.slice(2_000, 2_100));
      expect(page.jobs.every((j) => j.status === 'FAILED')).toBe(true);
    });
  });
});
