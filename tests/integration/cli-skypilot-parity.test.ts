/**
 * What a SkyPilot managed-jobs user checks, typed as they would type it (docs/spec.md "SkyPilot
 * keys"), against a real server on both databases: SKYPILOT_TASK_IDS in every task of a pipeline
 * (SkyPilot's newline-separated list, task 0 first); restarts on recover_on_exit_codes (one code
 * or a list) counted in `jobdeck queue` and the API apart from the budget's restarts and the
 * recoveries; resources.labels in `queue --json` and the job record, filtered by `queue --label`
 * and `?label=`; where each attempt ran (host and node names); `envs: {K: }` given as `--secret K`
 * refused with advice that names `secrets:`; `jobdeck rerun ID --env … -n … --priority …` and the
 * same through the API. (Links in uploaded folders: cli-upload.test.ts; logs removed by
 * retention: cli-log-search.test.ts.)
 *
 * Needs a built app (`npx next build`, or JOBDECK_NEXT_DIST as for the other server suites).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail, JobSummary } from '../../lib/api/types';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { runCli, show, submittedId, waitTerminal } from './cli-run';

describe.each(DB_KINDS)('what a SkyPilot user checks, through the CLI (%s)', (kind) => {
  const database = useServerDatabase(kind, `cli-skypilot-parity-${kind}`);
  let server: ServerProcess;
  let dir: string;
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const detail = async (id: number) => (await (await server.api(`/api/jobs/${id}`)).json()) as JobDetail;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-parity-'));
    server = await database.start();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SKYPILOT_TASK_IDS: every task of the job, newline-separated, task 0 first — the same in each task', async () => {
    const run = `run: printf 'ids=%s|\\n' "$SKYPILOT_TASK_IDS"; printf 'id=%s\\n' "$SKYPILOT_TASK_ID"\n`;
    const r = await runCli(server, ['launch', file('ids.yaml', `name: ids\n---\nname: a\n${run}---\nname: b\n${run}---\nname: c\n${run}`)]);
    expect(r.code, show(r)).toBe(EXIT.OK);
    const id = submittedId(r.stderr);
    const ids = `ids=jobdeck-job-${id}-task-0\njobdeck-job-${id}-task-1\njobdeck-job-${id}-task-2|\n`;
    expect(r.stdout).toBe([0, 1, 2].map((t) => `${ids}id=jobdeck-job-${id}-task-${t}\n`).join(''));
  });

  it('restarts on recover_on_exit_codes (a code, a list) are counted in queue and the job record, apart from the budget and recoveries', async () => {
    // Exits 3, then 4, then 3, then succeeds: three restarts, none spending the budget of 0.
    const state = path.join(dir, 'exit-code-state');
    const yaml = file(
      'codes.yaml',
      `name: codes\njob_recovery:\n  max_restarts_on_errors: 0\n  recover_on_exit_codes: [3, 4]\nrun: |\n  n=$(cat "${state}" 2>/dev/null || echo 0); echo $((n + 1)) > "${state}"\n  case $n in 0|2) exit 3 ;; 1) exit 4 ;; esac\n  echo done after $n restarts\n`,
    );
    const r = await runCli(server, ['launch', yaml]);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('done after 3 restarts\n');
    const id = submittedId(r.stderr);
    const q = await runCli(server, ['queue', '--name', 'codes']);
    expect(q.stdout).toMatch(new RegExp(`^${id}\\s+-\\s+codes\\s.*\\s0 \\(\\+3 on exit code\\)\\s+500\\s+SUCCEEDED\\s`, 'm'));
    const job = await detail(id);
    expect([job.restartCount, job.exitCodeRestartCount, job.recoveryCount]).toEqual([0, 3, 0]);
    expect([job.tasks[0].restarts, job.tasks[0].exitCodeRestarts, job.tasks[0].recoveries, job.tasks[0].attempts]).toEqual([0, 3, 0, 4]);
    // One code, not a list: the same rule (SkyPilot's two forms).
    const oneCode = file('one.yaml', `name: one-code\njob_recovery:\n  recover_on_exit_codes: 7\nrun: '[ -e "${state}-1" ] || { touch "${state}-1"; exit 7; }'\n`);
    const viaFile = await runCli(server, ['launch', oneCode]);
    expect(viaFile.code, show(viaFile)).toBe(EXIT.OK);
    const queued = JSON.parse((await runCli(server, ['queue', '--name', 'one-code', '--json'])).stdout) as JobSummary[];
    expect(queued.map((j) => [j.restartCount, j.exitCodeRestartCount, j.recoveryCount])).toEqual([[0, 1, 0]]);
    // Without the code listed, exit 7 is the user's failure: FAILED, nothing counted.
    const plain = await runCli(server, ['launch', '--cmd', 'exit 7', '-n', 'no-code']);
    expect(plain.code, show(plain)).toBe(EXIT.JOB_FAILED);
    expect((await detail(submittedId(plain.stderr))).exitCodeRestartCount).toBe(0);
  });

  it('resources.labels: shown in queue --json and the job record, filtered by queue --label and ?label=', async () => {
    const labelled = (team: string, run: string) => file(`l-${run}.yaml`, `name: labelled-${run}\nresources:\n  labels:\n    team: ${team}\n    run-id: ${run}\nrun: "true"\n`);
    const a = submittedId((await runCli(server, ['launch', labelled('vision', 'r1'), '-d'])).stdout);
    const b = submittedId((await runCli(server, ['launch', labelled('nlp', 'r2'), '-d'])).stdout);
    await waitTerminal(server, a);
    await waitTerminal(server, b);
    const vision = JSON.parse((await runCli(server, ['queue', '--label', 'team=vision', '--json'])).stdout) as JobSummary[];
    expect(vision.map((j) => [j.id, j.labels])).toEqual([[a, { 'run-id': 'r1', team: 'vision' }]]);
    const both = JSON.parse((await runCli(server, ['queue', '--label', 'team=nlp', '--label', 'run-id=r2', '--json'])).stdout) as JobSummary[];
    expect(both.map((j) => j.id)).toEqual([b]);
    expect(JSON.parse((await runCli(server, ['queue', '--label', 'team=nlp', '--label', 'run-id=r1', '--json'])).stdout)).toEqual([]);
    const job = await detail(a);
    expect([job.labels, job.tasks[0].labels]).toEqual([{ 'run-id': 'r1', team: 'vision' }, { 'run-id': 'r1', team: 'vision' }]);
    const api = (await (await server.api('/api/jobs?label=team=nlp')).json()) as { jobs: JobSummary[] };
    expect(api.jobs.map((j) => j.id)).toEqual([b]);
    expect((await server.api('/api/jobs/counts?label=team=vision').then((res) => res.json())) as unknown).toMatchObject({ total: 1 });
    const bad = await runCli(server, ['queue', '--label', 'team']);
    expect(bad.code, show(bad)).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('--label: expected key=value');
    expect((await server.api('/api/jobs?label=-x=1')).status).toBe(400);
    // SkyPilot's rule: values are strings.
    const num = await runCli(server, ['launch', file('num.yaml', 'resources:\n  labels:\n    replicas: 3\nrun: "true"\n')]);
    expect(num.code, show(num)).toBe(EXIT.USAGE);
    expect(num.stderr).toContain('num.yaml:3 task[0].resources.labels.replicas: expected a string value (quote it: replicas: "3"), got number 3');
  });

  it('where each attempt ran: the host name, per attempt and per task (SkyPilot node_names), in queue --json and the job record', async () => {
    const r = await runCli(server, ['launch', '--cmd', 'hostname', '-n', 'where']);
    expect(r.code, show(r)).toBe(EXIT.OK);
    const id = submittedId(r.stderr);
    const host = os.hostname();
    expect(r.stdout.trim()).toBe(host);
    const job = await detail(id);
    expect(job.tasks[0].attemptList.map((a) => a.nodes)).toEqual([[host]]);
    expect(job.tasks[0].nodeNames).toEqual([host]);
    const queued = JSON.parse((await runCli(server, ['queue', '--name', 'where', '--json'])).stdout) as JobSummary[];
    expect(queued.map((j) => j.tasks[0].nodeNames)).toEqual([[host]]);
  });

  it('envs: {K: } with --secret K is refused with advice that names secrets:', async () => {
    const yaml = file('wandb.yaml', 'envs:\n  WANDB_API_KEY:\nrun: echo "key is ${#WANDB_API_KEY} long"\n');
    const r = await runCli(server, ['launch', yaml, '--secret', 'WANDB_API_KEY=abc123']);
    expect(r.code, show(r)).toBe(EXIT.USAGE);
    expect(r.stderr).toContain('wandb.yaml:2 task[0].envs.WANDB_API_KEY: has no value: it was given as a secret (--secret WANDB_API_KEY), but the file declares it under envs, where only --env gives a value — to pass it as a secret, move it under secrets: (secrets: {WANDB_API_KEY: }); else give it with --env WANDB_API_KEY');
    expect(r.stderr).not.toContain('abc123');
    // Moved under secrets: as the advice says, the same flag works.
    const fixed = await runCli(server, ['launch', file('wandb-fixed.yaml', 'secrets:\n  WANDB_API_KEY:\nrun: echo "key is ${#WANDB_API_KEY} long"\n'), '--secret', 'WANDB_API_KEY=abc123']);
    expect(fixed.code, show(fixed)).toBe(EXIT.OK);
    expect(fixed.stdout).toBe('key is 6 long\n');
  });

  it('rerun ID --env K=V -n NAME --priority N: the submission again with those changed; the API takes the same', async () => {
    const first = await runCli(server, ['launch', '--cmd', 'echo "$GREETING, $WHO"', '--env', 'GREETING=hello', '--env', 'WHO=world', '-n', 'greet']);
    expect(first.stdout).toBe('hello, world\n');
    const id = submittedId(first.stderr);
    const again = await runCli(server, ['rerun', String(id), '--env', 'GREETING=goodbye', '-n', 'farewell', '--priority', '700']);
    expect(again.code, show(again)).toBe(EXIT.OK);
    expect(again.stdout).toBe('goodbye, world\n');
    const re = await detail(submittedId(again.stderr));
    expect([re.name, re.priority, re.launch.envs]).toEqual(['farewell', 700, { GREETING: 'goodbye', WHO: 'world' }]);
    // As it was, without options.
    const same = await runCli(server, ['rerun', String(id)]);
    expect([same.stdout, (await detail(submittedId(same.stderr))).name]).toEqual(['hello, world\n', 'greet']);
    const bad = await runCli(server, ['rerun', String(id), '--priority', '1001']);
    expect(bad.code, show(bad)).toBe(EXIT.USAGE);
    const res = await server.api(`/api/jobs/${id}/rerun`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ envs: { WHO: 'api' }, priority: 100, name: 'via-api' }) });
    expect(res.status).toBe(201);
    const viaApi = await detail(((await res.json()) as { id: number }).id);
    expect([viaApi.name, viaApi.priority, viaApi.launch.envs]).toEqual(['via-api', 100, { GREETING: 'hello', WHO: 'api' }]);
    const refused = await server.api(`/api/jobs/${id}/rerun`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ envs: { '1x': 'y' } }) });
    expect(refused.status).toBe(400);
  });
});
