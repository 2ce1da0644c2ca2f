/**
 * The `jobdeck` command as a user runs it: a real child process (bin/jobdeck.mjs) against a real
 * server process (tests/helpers/server.ts) that runs real jobs, on PGlite and on PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-cli npx next build`, and the same
 * JOBDECK_NEXT_DIST when running vitest.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSummary } from '../../lib/api/types';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { runCli, show, startCli, submittedId, waitJob, waitStatus, waitTerminal } from './cli-run';

const TWO_TASKS = `name: two-step
---
name: first
run: echo "first task output"
---
name: second
run: echo "second task output"
`;

const SLOW_FIRST = `name: slow-first
---
name: sleeper
run: echo "sleeping"; sleep 60
---
name: after
run: echo "after"
`;

describe.each(DB_KINDS)('jobdeck CLI against a server (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'cli-commands');
  let dir: string;
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-cli-'));
    server = await database.start();
  });

  afterAll(async () => {
    if (server) await runCli(server, ['cancel', '-a', '-y']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('launch of the seed pipeline: two failed attempts of task 1, one restart, nothing of task 2, FAILED, exit 1', async () => {
    const r = await runCli(server, ['launch', 'examples/seed-retry-pipeline.yaml']);
    expect(r.code, show(r)).toBe(EXIT.JOB_FAILED);
    const id = submittedId(r.stderr);
    expect(r.stdout).toBe('task 1, attempt 1\ntask 1, attempt 2\n');
    expect(r.stdout + r.stderr).not.toContain('should never run');
    expect(r.stderr.match(/Task 0 attempt \d failed with exit code 1/g), show(r)).toEqual([
      'Task 0 attempt 1 failed with exit code 1',
      'Task 0 attempt 2 failed with exit code 1',
    ]);
    expect(r.stderr.match(/Restarting/g), show(r)).toHaveLength(1);
    expect(r.stderr).toContain('↻ Restarting task 0 (attempt 2 of 2)');
    expect(r.stderr).not.toMatch(/Task 1[^\n]*attempt 1 started/);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`✗ Job ${id} finished (status: FAILED)`);
    // In order: attempt 1 start, its output, its failure, the restart, attempt 2 …
    const order = ['attempt 1 started', 'attempt 1 failed', 'Restarting task 0', 'attempt 2 started', 'attempt 2 failed', `Job ${id} finished`];
    const pos = order.map((s) => r.stderr.indexOf(s));
    expect(pos.every((p) => p >= 0) && [...pos].sort((a, b) => a - b).join() === pos.join(), show(r)).toBe(true);
  });

  it('launch --cmd follows to SUCCEEDED (exit 0); setup failure exits 8', async () => {
    const ok = await runCli(server, ['launch', '--cmd', 'echo "hello $GREETING"', '--env', 'GREETING=there', '-n', 'hello-cli']);
    expect(ok.code, show(ok)).toBe(EXIT.OK);
    expect(ok.stdout).toBe('hello there\n');
    expect(ok.stderr).toMatch(/✓ Job \d+ finished \(status: SUCCEEDED\)/);
    // rerun: the same command with the same -n and --env, as a new job, followed to its end.
    const first = Number(/✓ Job (\d+) finished/.exec(ok.stderr)![1]);
    const again = await runCli(server, ['rerun', String(first)]);
    expect(again.code, show(again)).toBe(EXIT.OK);
    expect(again.stdout).toBe('hello there\n');
    expect(again.stderr).toMatch(new RegExp(`Job submitted, ID: \\d+ \\(a re-run of job ${first}\\)`));
    const newId = Number(/Job submitted, ID: (\d+)/.exec(again.stderr)![1]);
    expect(await waitTerminal(server, newId)).toMatchObject({ name: 'hello-cli', origin: 'cli', launch: { name: 'hello-cli', envs: { GREETING: 'there' } } });
    const gone = await runCli(server, ['rerun', '99999', '-d']);
    expect(gone.code, show(gone)).toBe(EXIT.NOT_FOUND);
    const setup = await runCli(server, ['launch', 'examples/setup-fails.yaml']);
    expect(setup.code, show(setup)).toBe(EXIT.JOB_FAILED_SETUP);
    expect(setup.stderr).toMatch(/attempt 1 setup failed with exit code 2/);
    expect(setup.stderr).toMatch(/✗ Job \d+ finished \(status: FAILED_SETUP\)/);
  });

  it('launch prints the spec\'s warnings on stderr (file:line, key, what jobdeck does instead), stdout only the id', async () => {
    const spot = file('spot.yaml', 'resources:\n  use_spot: true\n  ports: 8080\nrun: echo spot\n');
    const d = await runCli(server, ['launch', '-d', spot]);
    expect(d.code).toBe(EXIT.OK);
    expect(d.stdout).toMatch(/^Job submitted, ID: \d+\n$/);
    expect(d.stderr.split('\n').filter((l) => l.startsWith('warning:')).map((l) => l.replace(spot, 'spot.yaml'))).toEqual([
      'warning: spot.yaml:2 task[0].resources.use_spot: use_spot: not used by jobdeck: there are no spot instances; failed attempts restart as job_recovery says',
      'warning: spot.yaml:3 task[0].resources.ports: ports: not managed by jobdeck; the job binds ports directly',
    ]);
  });

  it('launch -d prints the id on stdout; logs of the finished 2-task pipeline replays both tasks in order', async () => {
    const d = await runCli(server, ['launch', '-d', file('two.yaml', TWO_TASKS)]);
    expect(d.code, show(d)).toBe(EXIT.OK);
    expect(d.stdout).toMatch(/^Job submitted, ID: \d+\n$/);
    const id = submittedId(d.stdout);
    expect((await waitTerminal(server, id)).status).toBe('SUCCEEDED');

    const r = await runCli(server, ['logs', String(id)]);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('first task output\nsecond task output\n');
    expect(r.stderr).toContain('├── Task 0 (first) succeeded; moving on to task 1 (second)');
    expect(r.stderr.indexOf('Task 0 (first), attempt 1 started')).toBeLessThan(r.stderr.indexOf('Task 1 (second), attempt 1 started'));
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`✓ Job ${id} finished (status: SUCCEEDED)`);

    // One task, by index and by name; and --no-follow of a finished job.
    const t1 = await runCli(server, ['logs', String(id), '1']);
    expect(t1.code, show(t1)).toBe(EXIT.OK);
    expect(t1.stdout).toBe('second task output\n');
    expect(t1.stderr).toContain('✓ Task 1 (second) finished (status: SUCCEEDED)');
    const byName = await runCli(server, ['logs', '-n', 'two-step', 'first', '--no-follow']);
    expect(byName.code, show(byName)).toBe(EXIT.OK);
    expect(byName.stdout).toBe('first task output\n');
    const noTask = await runCli(server, ['logs', String(id), '7']);
    expect(noTask.code, show(noTask)).toBe(EXIT.NOT_FOUND);
    expect(noTask.stderr).toContain(`job ${id} has tasks 0–1 (tasks are numbered from 0); there is no task 7`);
  });

  it('--no-follow on a task that has not started returns at once; cancel of a running job', async () => {
    const d = await runCli(server, ['launch', '-d', file('slow.yaml', SLOW_FIRST)]);
    const id = submittedId(d.stdout);
    await waitStatus(server, id, (s) => s === 'RUNNING');
    const r = await runCli(server, ['logs', String(id), '1', '--no-follow']);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Task 1 (after) has not ended (status: PENDING); not following');
    // It returned while task 0 still sleeps (60 s): it did not wait for task 1.
    const now = (await (await server.api(`/api/jobs/${id}`)).json()) as { tasks: { status: string }[] };
    expect(now.tasks.map((t) => t.status)).toEqual(['RUNNING', 'PENDING']);

    const c = await runCli(server, ['cancel', String(id)]);
    expect(c.code, show(c)).toBe(EXIT.OK);
    expect(c.stdout).toMatch(new RegExp(`Job ${id} (is being cancelled|cancelled)`));
    expect((await waitTerminal(server, id)).status).toBe('CANCELLED');
    // Following a cancelled job: exit 3.
    const f = await runCli(server, ['logs', String(id)]);
    expect(f.code, show(f)).toBe(EXIT.JOB_CANCELLED);
    expect(f.stdout.startsWith('sleeping\n'), show(f)).toBe(true);
  });

  it('queue: the columns, a row per task of a pipeline, --json, -s', async () => {
    const q = await runCli(server, ['queue', '-a']);
    expect(q.code, show(q)).toBe(EXIT.OK);
    const lines = q.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s{2,}/)).toEqual(['ID', 'TASK', 'NAME', 'SUBMITTED', 'TOT. DURATION', 'JOB DURATION', '#RESTARTS', 'PRIORITY', 'STATUS', 'PLACE', 'WAITING', 'OWNER', 'NODES']);
    const pipelineRow = lines.findIndex((l) => /^\d+\s+two-step\s/.test(l));
    expect(pipelineRow, q.stdout).toBeGreaterThan(0);
    // NODES: where each task ran (this machine).
    const host = os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(lines[pipelineRow + 1]).toMatch(new RegExp(`^ ↳\\s+0\\s+first\\s.*SUCCEEDED\\s+${host}$`));
    expect(lines[pipelineRow + 2]).toMatch(new RegExp(`^ ↳\\s+1\\s+second\\s.*SUCCEEDED\\s+${host}$`));
    expect(q.stdout).toMatch(new RegExp(`^\\d+\\s+-\\s+hello-cli\\s.*SUCCEEDED\\s+admin\\s+${host}$`, 'm'));
    expect(q.stdout).toMatch(new RegExp(`^\\d+\\s+\\s*retry-each-task\\s.*\\s1\\s+500\\s+FAILED\\s+admin\\s+${host}$`, 'm'));

    const j = await runCli(server, ['queue', '-a', '--json']);
    expect(j.code, show(j)).toBe(EXIT.OK);
    const jobs = JSON.parse(j.stdout) as JobSummary[];
    const seed = jobs.find((x) => x.name === 'retry-each-task')!;
    expect(seed.status).toBe('FAILED');
    expect(seed.tasks.map((t) => [t.index, t.status, t.attempts])).toEqual([[0, 'FAILED', 2], [1, 'CANCELLED', 0]]);

    const failed = JSON.parse((await runCli(server, ['queue', '-s', 'failed', '--json'])).stdout) as JobSummary[];
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((x) => x.status === 'FAILED')).toBe(true);
    const bad = await runCli(server, ['queue', '-s', 'nope']);
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('unknown status "nope"');
  });

  it('queue --metadata key=value: only jobs whose metadata holds every pair; a malformed or an unbounded one exits 2', async () => {
    for (const [name, metadata] of [['meta-a', { team: 'vision', stage: 'train' }], ['meta-b', { team: 'vision', stage: 'eval=x' }], ['meta-c', { team: 'nlp' }]] as const) {
      const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'true', name, metadata }) });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const names = async (...args: string[]) => {
      const r = await runCli(server, ['queue', ...args, '--json']);
      expect(r.code, show(r)).toBe(EXIT.OK);
      return (JSON.parse(r.stdout) as JobSummary[]).map((j) => j.name).sort();
    };
    expect(await names('--metadata', 'team=vision')).toEqual(['meta-a', 'meta-b']);
    expect(await names('--metadata', 'team=vision', '--metadata', 'stage=train')).toEqual(['meta-a']);
    // Split at the first "=": the value may hold more.
    expect(await names('--metadata', 'stage=eval=x')).toEqual(['meta-b']);
    expect(await names('--metadata', 'team=nlp', '--name', 'meta')).toEqual(['meta-c']);
    const bad = await runCli(server, ['queue', '--metadata', 'team']);
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('--metadata: expected key=value, got "team"');
    const many = await runCli(server, ['queue', ...Array.from({ length: 9 }, (_, i) => ['--metadata', `k${i}=v`]).flat()]);
    expect(many.code, show(many)).toBe(EXIT.USAGE);
    expect(many.stderr).toContain('metadata: at most 8 key:value pairs');
  });

  it('cancel of a finished job, unknown ids, delete, names matching several jobs', async () => {
    const jobs = JSON.parse((await runCli(server, ['queue', '-a', '--json'])).stdout) as JobSummary[];
    const done = jobs.find((x) => x.name === 'hello-cli')!;
    const c = await runCli(server, ['cancel', String(done.id)]);
    expect(c.code, show(c)).toBe(EXIT.REFUSED);
    expect(c.stderr).toContain(`job ${done.id} already finished (status: SUCCEEDED); nothing to cancel`);

    expect((await runCli(server, ['cancel', '999999'])).code).toBe(EXIT.NOT_FOUND);
    const lg = await runCli(server, ['logs', '999999']);
    expect(lg.code, show(lg)).toBe(EXIT.NOT_FOUND);
    expect(lg.stderr).toMatch(/999999/);
    expect((await runCli(server, ['status', '999999'])).code).toBe(EXIT.NOT_FOUND);

    const st = await runCli(server, ['status', String(done.id)]);
    expect(st.code, show(st)).toBe(EXIT.OK);
    expect(st.stdout).toContain(`Job ${done.id} (hello-cli): SUCCEEDED`);
    const del = await runCli(server, ['delete', String(done.id)]);
    expect(del.code, show(del)).toBe(EXIT.OK);
    expect(del.stdout).toBe(`Job ${done.id} deleted.\n`);
    expect((await runCli(server, ['status', String(done.id)])).code).toBe(EXIT.NOT_FOUND);

    const a = submittedId((await runCli(server, ['launch', '-d', '--cmd', 'true', '-n', 'twin'])).stdout);
    const b = submittedId((await runCli(server, ['launch', '-d', '--cmd', 'true', '-n', 'twin'])).stdout);
    const amb = await runCli(server, ['logs', '-n', 'twin']);
    expect(amb.code, show(amb)).toBe(EXIT.USAGE);
    expect(amb.stderr).toContain('2 jobs are named "twin"; give the job id instead:');
    expect(amb.stderr).toMatch(new RegExp(`ID ${a}\\s+\\w+\\s+submitted `));
    expect(amb.stderr).toMatch(new RegExp(`ID ${b}\\s+\\w+\\s+submitted `));
    const none = await runCli(server, ['logs', '-n', 'no-such-job-name']);
    expect(none.code, show(none)).toBe(EXIT.NOT_FOUND);
    expect(none.stderr).toContain('no job named "no-such-job-name"');
  });

  it('queues: set, list, delete; a job waits at its queue limit with the reason shown; set-priority while PENDING only; launch --priority', async () => {
    const set = await runCli(server, ['queues', 'set', 'hold', '--max-running', '1', '--default-priority', '300', '--member-max-priority', '700']);
    expect(set.code, show(set)).toBe(EXIT.OK);
    expect(set.stdout.split('\n')[0].split(/\s{2,}/)).toEqual(['QUEUE', 'MAX RUNNING', 'MAX CPUS', 'MAX GPUS', 'START TIMEOUT', 'DEFAULT PRIORITY', 'MEMBER CAP', 'PENDING', 'RUNNING', 'CPUS', 'GPUS']);
    expect(set.stdout.split('\n')[1].split(/\s{2,}/)).toEqual(['hold', '1', '-', '-', '-', '300', '700', '0', '0', '0', '0']);
    const runner = submittedId((await runCli(server, ['launch', '-d', file('hold1.yaml', 'name: hold-runner\nqueue: hold\nrun: sleep 600\n')])).stdout);
    await waitStatus(server, runner, (st) => st === 'RUNNING');
    const waiter = submittedId((await runCli(server, ['launch', '-d', '--priority', '42', file('hold2.yaml', 'name: hold-waiter\nqueue: hold\nrun: echo w\n')])).stdout);
    const reason = 'queue hold at its limit (1 of 1 running)';
    // The waiting reason is written by the monitor's next admission pass, not by the submit.
    await waitJob(server, waiter, (j) => String(j.pendingReason ?? '').startsWith(reason));
    const q = (await runCli(server, ['queue'])).stdout;
    expect(q).toMatch(new RegExp(`^${waiter}\\s+-\\s+hold-waiter\\s.*\\s42\\s+PENDING\\s+#\\d+ · q1\\s+queue hold at its limit \\(1 of 1 running\\)\\s+admin\\s+-$`, 'm'));
    const st = await runCli(server, ['status', String(waiter)]);
    // No start timeout by default: a job waits as long as it must.
    expect(st.stdout.split('\n')[1]).toBe(`  waiting: ${reason} (priority 42, queue hold)`);
    expect(st.stdout.split('\n')[2]).toMatch(/^  place: \d+(st|nd|rd|th) in line \(1st in queue hold\); /);
    const list = await runCli(server, ['queues']);
    expect(list.stdout.trimEnd().split('\n').slice(1).map((l) => l.split(/\s{2,}/))).toEqual([
      ['default', '-', '-', '-', '-', '-', '-', expect.any(String), expect.any(String), expect.any(String), expect.any(String)],
      ['hold', '1', '-', '-', '-', '300', '700', '1', '1', '1', '0'],
    ]);

    const sp = await runCli(server, ['set-priority', String(waiter), '900']);
    expect(sp.code, show(sp)).toBe(EXIT.OK);
    expect(sp.stdout).toBe(`Job ${waiter} priority 900.\n`);
    const running = await runCli(server, ['set-priority', String(runner), '900']);
    expect(running.code, show(running)).toBe(EXIT.REFUSED);
    expect(running.stderr).toContain(`job ${runner} is RUNNING: only a PENDING job's priority can change`);
    expect((await runCli(server, ['set-priority', String(waiter), '1001'])).code).toBe(EXIT.USAGE);

    const busy = await runCli(server, ['queues', 'delete', 'hold']);
    expect(busy.code, show(busy)).toBe(EXIT.REFUSED);
    expect(busy.stderr).toContain('queue hold holds 2 jobs that did not finish');
    const unknown = await runCli(server, ['launch', '-d', file('nope.yaml', 'queue: nope\nrun: echo\n')]);
    expect(unknown.code, show(unknown)).toBe(EXIT.USAGE);
    expect(unknown.stderr).toContain('task[0].queue: queue "nope" is not defined; the queues are: default, hold');
    // --queue wins over the file's queue; the server refuses one it does not have, with the list.
    const byFlag = await runCli(server, ['launch', '-d', '--queue', 'nope', '--cmd', 'echo']);
    expect(byFlag.code, show(byFlag)).toBe(EXIT.USAGE);
    expect(byFlag.stderr).toContain('overrides.queue: queue "nope" is not defined; the queues are: default, hold');
    const badName = await runCli(server, ['launch', '-d', '--queue', 'Hold!', '--cmd', 'echo']);
    expect(badName.code, show(badName)).toBe(EXIT.USAGE);
    expect(badName.stderr).toContain('--queue "Hold!": expected a queue name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit)');
    const flagged = submittedId((await runCli(server, ['launch', '-d', '--queue', 'hold', file('flag.yaml', 'name: by-flag\nqueue: default\nrun: echo f\n')])).stdout);
    // The waiting reason is written by the monitor's next admission pass, not by the submit.
    await waitJob(server, flagged, (j) => j.pendingReason != null);
    const flaggedStatus = await runCli(server, ['status', String(flagged)]);
    expect(flaggedStatus.stdout.split('\n')[1]).toMatch(/^  waiting: .* \(priority 300, queue hold\)$/);
    await runCli(server, ['cancel', String(runner), String(waiter), String(flagged)]);
    await waitTerminal(server, runner);
    await waitTerminal(server, waiter);
    await waitTerminal(server, flagged);
    const del = await runCli(server, ['queues', 'delete', 'hold']);
    expect(del.code, show(del)).toBe(EXIT.OK);
    expect(del.stdout).toBe('Queue hold deleted.\n');
  });

  it('bad input: a YAML error with file:line and key path, a missing file, bad usage, a wrong token, no server', async () => {
    const bad = file('bad.yaml', 'name: bad\nrun: echo hi\nresources:\n  cpus: lots\n');
    const r = await runCli(server, ['launch', bad]);
    expect(r.code, show(r)).toBe(EXIT.USAGE);
    expect(r.stderr).toMatch(/invalid job spec/);
    expect(r.stderr).toContain(`${bad}:4 task[0].resources.cpus: expected a CPU count`);

    const missing = await runCli(server, ['launch', 'nope/missing.yaml']);
    expect(missing.code).toBe(EXIT.USAGE);
    expect(missing.stderr).toContain('file not found: nope/missing.yaml');
    expect((await runCli(server, ['launch'])).code).toBe(EXIT.USAGE);
    const all = await runCli(server, ['cancel', '-a']); // no TTY, no -y
    expect(all.code, show(all)).toBe(EXIT.USAGE);
    expect(all.stderr).toContain('add -y/--yes');

    const tok = await runCli(server, ['queue'], { env: { JOBDECK_TOKEN: 'jd_definitely-not-the-token' } });
    expect(tok.code, show(tok)).toBe(EXIT.UNAUTHORIZED);
    const down = await runCli(null, ['queue', '--url', 'http://127.0.0.1:47']);
    expect(down.code, show(down)).toBe(EXIT.UNREACHABLE);
    expect(down.stderr).toContain('cannot reach jobdeck at http://127.0.0.1:47');
    expect(down.stderr).toContain('is the server running? (jobdeck server / npm start)');
  });

  it('Ctrl-C stops following (exit 5) and the job keeps running', async () => {
    const p = startCli(server, ['launch', '--cmd', 'echo started; sleep 60', '-n', 'ctrl-c']);
    await p.waitFor(/started\n/);
    const id = submittedId(p.stderr());
    p.proc.kill('SIGINT');
    const r = await p.done;
    expect(r.code, show(r)).toBe(EXIT.STOPPED_FOLLOWING);
    expect(r.stderr).toContain(`Stopped following job ${id}`);
    const job = (await (await server.api(`/api/jobs/${id}`)).json()) as { status: string };
    expect(['STARTING', 'RUNNING']).toContain(job.status);
    const c = await runCli(server, ['cancel', '-a', '-y']);
    expect(c.code, show(c)).toBe(EXIT.OK);
    expect((await waitTerminal(server, id)).status).toBe('CANCELLED');
  });
});
