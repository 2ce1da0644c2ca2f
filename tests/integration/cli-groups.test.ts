/**
 * A sweep as a user runs it (docs/design.md §17 "Groups"): one `jobdeck launch --param … --param …`
 * of 50 jobs against a real server, which runs them all at once (0.1 CPU each). The group is one
 * row in the folded list and in `jobdeck queue`; every job's own log shows its rank and its
 * parameters; `jobdeck groups cancel` stops every one of them (each attempt CANCELLED). One
 * database (PGlite, the default): the store's side of groups runs on both in job-arrays.test.ts.
 * On the same server: `--num-jobs` and `--depends-on/--after` of launch, and `jobdeck schedules` from create to delete (the fires themselves:
 * schedules.test.ts and schedules-servers.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { EXIT } from '../../lib/cli/exit-codes';
import type { ScheduleView } from '../../lib/api/types';
import type { GroupSummary, JobDetail, JobList, LogRange } from '../../lib/api/types';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { runCli, show, waitTerminal } from './cli-run';
import { waitFor } from './monitor-helpers';

const LRS = ['1e-3', '3e-4', '1e-4', '3e-5', '1e-5'];
const SEEDS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'];

describe('jobdeck launch --param: a 50-job sweep (pglite)', () => {
  const database = useServerDatabase('pglite', 'cli-groups');
  let server: ServerProcess;
  const get = async <T>(p: string): Promise<T> => {
    const r = await server.api(p);
    expect(r.status, p).toBe(200);
    return (await r.json()) as T;
  };

  beforeAll(async () => {
    server = await database.start({ env: { JOBDECK_CPUS: '8', JOBDECK_USAGE_INTERVAL_MS: '0' } });
  });
  afterAll(async () => {
    await server?.api('/api/jobs/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ all: true }) }).catch(() => undefined);
  });

  it('is one group in the list and in jobdeck queue, each job saw its own rank and values, and a group cancel stops them all', async () => {
    const spec = path.join(server.home, 'sweep.yaml');
    writeFileSync(spec, ['name: sweep', 'resources: {cpus: 0.1}', 'run: |', '  echo "rank=$SKYPILOT_JOB_RANK of=$SKYPILOT_NUM_JOBS index=$JOBDECK_ARRAY_INDEX count=$JOBDECK_ARRAY_COUNT lr=$lr seed=$seed"', '  exec sleep 600', ''].join('\n'));
    const launched = await runCli(server, ['launch', spec, '--param', `lr=${LRS.join(',')}`, '--param', `seed=${SEEDS.join(',')}`]);
    expect(launched.code, show(launched)).toBe(EXIT.OK);
    const m = /^Group submitted, ID: (\d+) \(50 jobs: (\d+)–(\d+)\)$/m.exec(launched.stdout);
    expect(m, show(launched)).not.toBeNull();
    const groupId = Number(m![1]);

    // Every job running, and its own first line in its log.
    const running = await waitFor(async () => {
      const l = await get<JobList>(`/api/jobs?group=${groupId}&status=RUNNING&limit=200`);
      return l.jobs.length === 50 ? l.jobs : null;
    }, 'the 50 jobs to run');
    const seen = new Map<number, string>();
    for (const j of running) {
      const line = await waitFor(async () => {
        const r = await get<LogRange>(`/api/jobs/${j.id}/logs?task=0&attempt=1`);
        return r.data.includes('\n') ? r.data.trim() : null;
      }, `job ${j.id}'s line`);
      seen.set(j.group!.index, `${j.name} ${line}`);
    }
    expect(seen.size).toBe(50);
    for (let rank = 0; rank < 50; rank++) {
      const lr = LRS[Math.floor(rank / SEEDS.length)];
      const seed = SEEDS[rank % SEEDS.length];
      expect(seen.get(rank)).toBe(`sweep[lr=${lr} seed=${seed}] rank=${rank} of=50 index=${rank} count=50 lr=${lr} seed=${seed}`);
    }

    // One row: the folded list holds its first job alone, with the group's counts.
    const folded = await get<JobList>('/api/jobs?fold=groups&limit=200');
    expect(folded.jobs.filter((j) => j.group?.id === groupId).map((j) => j.group!.lead)).toEqual([true]);
    expect(folded.groups?.find((g: GroupSummary) => g.id === groupId)).toMatchObject({ size: 50, done: 0, counts: { RUNNING: 50 } });
    const queue = await runCli(server, ['queue']);
    expect(queue.code, show(queue)).toBe(EXIT.OK);
    const rows = queue.stdout.split('\n').filter((l) => /\bsweep\b/.test(l));
    expect(rows, queue.stdout).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^g${groupId}\\s+-\\s+sweep \\(50 jobs\\)\\s.*0/50 done · RUNNING 50`));
    expect(queue.stderr).toMatch(/Showing 50 jobs in 1 group folded/);

    // The group cancel stops every running job.
    const cancel = await runCli(server, ['groups', 'cancel', String(groupId)]);
    expect(cancel.code, show(cancel)).toBe(EXIT.OK);
    expect(cancel.stdout).toBe(`Group ${groupId}: 0 job(s) cancelled, 50 being cancelled.\n`);
    await waitFor(async () => (await get<GroupSummary>(`/api/groups/${groupId}`)).counts.CANCELLED === 50, 'the 50 jobs to be CANCELLED');
    for (const j of running) {
      const d = await get<JobDetail>(`/api/jobs/${j.id}`);
      expect([d.status, d.tasks[0].attemptList.map((a) => a.status)]).toEqual(['CANCELLED', ['CANCELLED']]);
    }
    const shown = await runCli(server, ['groups', 'show', String(groupId)]);
    expect(shown.stdout).toMatch(/\[#{20}\] 50\/50 done · 50 CANCELLED/);
  });

  it('jobdeck schedules: a bad spec refused at its line; create, run now, show, pause, list, delete', async () => {
    const bad = path.join(server.home, 'nightly-bad.yaml');
    writeFileSync(bad, 'name: nightly\nrun: "true"\nresources: {cpus: lots}\n');
    const refused = await runCli(server, ['schedules', 'create', 'nightly', '--cron', '0 3 * * *', '-f', bad]);
    expect(refused.code, show(refused)).toBe(EXIT.USAGE);
    expect(refused.stderr).toMatch(/nightly-bad\.yaml:3 task\[0\]\.resources\.cpus: /);
    const spec = path.join(server.home, 'nightly.yaml');
    writeFileSync(spec, 'name: nightly\nresources: {cpus: 0.1}\nrun: "true"\n');
    const created = await runCli(server, ['schedules', 'create', 'nightly', '--cron', '0 3 * * *', '--tz', 'Europe/Berlin', '-f', spec, '--overlap', 'allow']);
    expect(created.code, show(created)).toBe(EXIT.OK);
    expect(created.stdout).toMatch(/^Schedule nightly created: next fire \d{4}-\d\d-\d\dT0[12]:00:00\.000Z\.\n$/);
    const ran = await runCli(server, ['schedules', 'run', 'nightly']);
    expect(ran.code, show(ran)).toBe(EXIT.OK);
    const jobId = Number(/^Job submitted, ID: (\d+) \(schedule nightly, run now\)$/m.exec(ran.stdout)?.[1]);
    expect(jobId, show(ran)).toBeGreaterThan(0);
    const shown = await runCli(server, ['schedules', 'show', 'nightly']);
    expect(shown.stdout).toMatch(new RegExp(`Fires \\(newest first\\):\\n  \\S+  manual    submitted  job ${jobId}  run now\\n`));
    expect((await runCli(server, ['schedules', 'pause', 'nightly'])).stdout).toBe('Schedule nightly paused.\n');
    const list = await runCli(server, ['schedules', 'list']);
    expect(list.stdout).toMatch(new RegExp(`^nightly  "0 3 \\* \\* \\*" Europe/Berlin  a spec  overlap allow, catch-up last  paused  last \\S+ \\(job ${jobId}\\)  by admin$`, 'm'));
    expect((await get<ScheduleView>('/api/schedules/nightly')).paused).toBe(true);
    expect((await runCli(server, ['schedules', 'delete', 'nightly'])).stdout).toBe('Schedule nightly deleted (its jobs stay).\n');
    expect((await server.api('/api/schedules/nightly')).status).toBe(404);
    expect((await server.api(`/api/jobs/${jobId}`)).status).toBe(200);
  });

  it('launch --num-jobs N is a group of N; --depends-on refuses an unknown name (exit 2) and waits as --after says', async () => {
    const gate = path.join(server.home, 'shards-gate');
    const arr = await runCli(server, ['launch', '--cmd', `while [ ! -f ${gate} ]; do sleep 0.05; done; exit $SKYPILOT_JOB_RANK`, '-n', 'shards', '--num-jobs', '3']);
    expect(arr.code, show(arr)).toBe(EXIT.OK);
    const m = /^Group submitted, ID: (\d+) \(3 jobs: (\d+)–(\d+)\)$/m.exec(arr.stdout);
    expect(m, show(arr)).not.toBeNull();
    const [first, last] = [Number(m![2]), Number(m![3])];
    const unknown = await runCli(server, ['launch', '--cmd', 'true', '-n', 'orphan', '--depends-on', 'no-such-job', '-d']);
    expect(unknown.code, show(unknown)).toBe(EXIT.USAGE);
    expect(unknown.stderr).toMatch(/no job or group named "no-such-job"/);
    // Rank 0 exits 0, the last rank exits 2 (once the gate opens, after both are submitted):
    // `failed` on the last runs, `ok` on it is cancelled; `ok` on it after it failed is refused.
    const onFail = await runCli(server, ['launch', '--cmd', 'true', '-n', 'on-fail', '--depends-on', String(last), '--after', 'failed', '-d']);
    const onOk = await runCli(server, ['launch', '--cmd', 'true', '-n', 'on-ok', '--depends-on', `${first},${last}`, '-d']);
    const id = (r: typeof onOk) => Number(/^Job submitted, ID: (\d+)/m.exec(r.stdout)?.[1]);
    expect([onFail.code, onOk.code], `${show(onFail)}\n${show(onOk)}`).toEqual([EXIT.OK, EXIT.OK]);
    writeFileSync(gate, '');
    expect((await waitTerminal(server, id(onFail))).status).toBe('SUCCEEDED');
    const cancelled = await waitTerminal(server, id(onOk));
    expect([cancelled.status, cancelled.statusReason]).toEqual(['CANCELLED', `job ${last} ended FAILED; this job waited for it to succeed (after: ok)`]);
    const late = await runCli(server, ['launch', '--cmd', 'true', '-n', 'late', '--depends-on', String(last), '-d']);
    expect(late.code, show(late)).toBe(EXIT.USAGE);
    expect(late.stderr).toContain(`depends_on.jobs[0]: job ${last} ended FAILED; this job would wait for it to succeed (after: ok): it can never start`);
  });
});
