/**
 * Multi-node tasks (`num_nodes`) on a real, emulated multi-node Slurm cluster
 * (scripts/slurm-multi-up.sh: three slurmd, each in its own network namespace with its own
 * hostname and address; started here when not up). A real jobdeck server process
 * (tests/helpers/server.ts) with `JOBDECK_EXECUTOR=slurm` submits through its API; logs are read
 * back through the API and the real `jobdeck logs`. Every wait is "until it happens" with a limit.
 * docs/slurm.md ("Multi-node tasks") is what these check.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail, LogRange } from '../../lib/api/types';
import type { MonitorState } from '../../lib/monitor/state';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/server';
import { runCli, show } from './cli-run';
import { waitFor } from './monitor-helpers';
import { useSlurmClusters } from '../helpers/slurm-lock';

useSlurmClusters();

const BASE = process.env.SLURM_MULTI_BASE || '/var/lib/jobdeck-slurm-multi';
const SLURM_CONF = path.join(BASE, 'slurm.conf');
const NODES = 3;
const ENV = {
  JOBDECK_EXECUTOR: 'slurm',
  SLURM_CONF,
  JOBDECK_RECONCILE_MS: '200',
  JOBDECK_LOST_CONFIRM_MS: '500',
  JOBDECK_RECOVERY_BACKOFF_MS: '200',
};

let server: ServerProcess;
let home: string;

function clusterUp(): void {
  // Idempotent: ~0.1 s when up; restarts a killed slurmd (the node-failure test relies on it).
  execFileSync('bash', [path.join(ROOT, 'scripts', 'slurm-multi-up.sh'), String(NODES)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
}

beforeAll(async () => {
  clusterUp();
  server = await startServerProcess({ env: ENV });
  home = server.home;
}, 600_000);

afterAll(async () => {
  clusterUp();
  // Nothing of these jobs may outlive the suite, whatever a test did.
  try {
    const ids = execFileSync('squeue', ['-h', '-o', '%i %j'], { encoding: 'utf8', env: { ...process.env, SLURM_CONF } })
      .split('\n')
      .filter((l) => / jobdeck-/.test(l))
      .map((l) => l.split(' ')[0]);
    if (ids.length) execFileSync('scancel', ids, { env: { ...process.env, SLURM_CONF } });
  } catch {
    /* the cluster is gone: nothing left */
  }
  await server?.dispose();
});

async function submit(yaml: string): Promise<number> {
  const r = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
  expect(r.status, await r.clone().text()).toBe(201);
  return ((await r.json()) as { id: number }).id;
}

async function detail(id: number, s: ServerProcess = server): Promise<JobDetail> {
  const r = await s.api(`/api/jobs/${id}`);
  expect(r.status).toBe(200);
  return (await r.json()) as JobDetail;
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'CANCELLED', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER', 'FAILED_PRECHECKS'];
function ended(id: number, timeoutMs = 90_000, s: ServerProcess = server): Promise<JobDetail> {
  return waitFor(async () => {
    const d = await detail(id, s);
    return TERMINAL.includes(d.status) ? d : null;
  }, `job ${id} to end`, timeoutMs);
}

async function log(id: number, attempt: number, rank: number): Promise<string> {
  const r = await server.api(`/api/jobs/${id}/logs?task=0&attempt=${attempt}&rank=${rank}&limit=1048576`);
  expect(r.status).toBe(200);
  const range = (await r.json()) as LogRange;
  expect(range.rank).toBe(rank);
  return range.data;
}

/** The nodes' UTS namespaces (one per emulated node), to say which node a process runs on. */
function nodeNamespaces(): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 1; i <= NODES; i++) {
    const pid = readFileSync(path.join(BASE, 'run', `slurmd-jdn${i}.pid`), 'utf8').trim();
    out.set(readlinkSync(`/proc/${pid}/ns/uts`), `jdn${i}`);
  }
  return out;
}

/**
 * Processes of job `id` still alive on any node of this cluster (they carry JOBDECK_JOB_ID and
 * run in a node's UTS namespace), as `node:pid`. Processes outside the nodes are not this
 * suite's: job ids are per database, and test files running beside this one on the local
 * executor (this machine's own namespace) have jobs with the same ids.
 */
function jobProcesses(id: number): string[] {
  const ns = nodeNamespaces();
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      if (!env.includes(`JOBDECK_JOB_ID=${id}`) || !env.some((e) => e.startsWith('JOBDECK_NODE_RANK='))) continue;
      const node = ns.get(readlinkSync(`/proc/${pid}/ns/uts`));
      if (node) out.push(`${node}:${pid}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

describe('multi-node tasks on an emulated Slurm cluster', () => {
  it('a 3-node task: each rank its own node, hostname and address, head first; SUCCEEDED; three logs', async () => {
    const id = await submit(
      [
        'name: gang',
        'num_nodes: 3',
        'resources:',
        '  cpus: 1',
        'setup: echo "setup on $(hostname) setup-rank=$SKYPILOT_SETUP_NODE_RANK"',
        'run: |',
        '  echo "rank=$JOBDECK_NODE_RANK of $JOBDECK_NUM_NODES host=$(hostname) addr=$(hostname -I | tr -d " ")"',
        '  echo "sky=$SKYPILOT_NODE_RANK/$SKYPILOT_NUM_NODES task=$SKYPILOT_TASK_ID gpus=$SKYPILOT_NUM_GPUS_PER_NODE"',
        '  [ "$SKYPILOT_SETUP_NODE_IPS" = "$JOBDECK_NODE_IPS" ] && echo same-setup-ips',
        '  echo "ips=$(echo "$JOBDECK_NODE_IPS" | paste -sd,)"',
        '  [ "$SKYPILOT_NODE_IPS" = "$JOBDECK_NODE_IPS" ] && echo same-ips',
      ].join('\n'),
    );
    const d = await ended(id);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    expect(d.tasks[0]).toMatchObject({ nodes: 3, attempts: 1 });
    expect(d.tasks[0].attemptList[0]).toMatchObject({ status: 'SUCCEEDED', exitCode: 0 });
    const logs = await Promise.all([0, 1, 2].map((k) => log(id, 1, k)));
    const ranks = logs.map((text) => {
      const m = /rank=(\d) of 3 host=(\S+) addr=(\S+)/.exec(text);
      expect(m, text).not.toBeNull();
      expect(text).toContain(`setup on ${m![2]} setup-rank=${m![1]}`);
      expect(text).toContain(`sky=${m![1]}/3 task=jobdeck-job-${id}-task-0 gpus=0`);
      expect(text).toContain('same-ips');
      expect(text).toContain('same-setup-ips');
      return { rank: Number(m![1]), host: m![2], addr: m![3], ips: /ips=(\S+)/.exec(text)![1].split(',') };
    });
    expect(ranks.map((r) => r.rank)).toEqual([0, 1, 2]);
    expect(new Set(ranks.map((r) => r.host)).size).toBe(3);
    expect(new Set(ranks.map((r) => r.addr)).size).toBe(3);
    // Every rank sees the same list: the nodes' addresses in rank order, the head's first.
    for (const r of ranks) expect(r.ips).toEqual(ranks.map((x) => x.addr));
    expect(ranks[0].ips[0]).toBe(ranks[0].addr);
    // Where it ran (SkyPilot's node_names): the allocated nodes in rank order, on the attempt and
    // the task, and in `jobdeck queue` (NODES: the head, then how many more).
    expect(d.tasks[0].attemptList[0].nodes).toEqual(ranks.map((r) => r.host));
    expect(d.tasks[0].nodeNames).toEqual(ranks.map((r) => r.host));
    const q = await runCli(server, ['queue', '-a', '--limit', '200']);
    expect(q.stdout).toMatch(new RegExp(`^${id}\\s.*\\sSUCCEEDED\\s.*\\s${ranks[0].host} \\+2$`, 'm'));

    // The CLI: every rank's lines, each prefixed; or one rank's alone.
    const all = await runCli(server, ['logs', String(id), '--no-follow']);
    expect(all.code, show(all)).toBe(0);
    for (const r of ranks) expect(all.stdout).toContain(`[rank ${r.rank}] rank=${r.rank} of 3 host=${r.host}`);
    expect(all.stderr).toContain('attempt 1 started on 3 nodes');
    const one = await runCli(server, ['logs', String(id), '--no-follow', '--rank', '2']);
    expect(one.code, show(one)).toBe(0);
    expect(one.stdout).toBe(logs[2]);
    // Line times of every rank (each rank's log on the shared folder has its own time index): every
    // line the task wrote has its time. (slurmstepd may append a line of its own to rank 0's file
    // after the attempt's end — a line written after the end has no time.) And the whole-job
    // download: one section per rank, each that rank's bytes.
    const timed = await runCli(server, ['logs', String(id), '--no-follow', '-t']);
    const withTimes = new Set(timed.stdout.split('\n').flatMap((l) => {
      const m = /^(\[rank \d\] )\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (.*)$/.exec(l);
      return m ? [m[1] + m[2]] : [];
    }));
    const taskLines = all.stdout.trimEnd().split('\n').filter((l) => !/^\[rank \d\] slurmstepd/.test(l));
    for (const l of taskLines) expect(withTimes.has(l), `${l}\n${timed.stdout}`).toBe(true);
    const now = await Promise.all([0, 1, 2].map((k) => log(id, 1, k)));
    const whole = await (await server.api(`/api/jobs/${id}/logs/all`)).text();
    const label = `task 0${d.tasks[0].name ? ` ${d.tasks[0].name}` : ''}`;
    // A header starts a line of its own (a newline only after a log left without one).
    const sections = [0, 1, 2].map((k) => `${k > 0 && !now[k - 1].endsWith('\n') ? '\n' : ''}==> ${label} · attempt 1 · rank ${k} (exit 0) <==\n${now[k]}`);
    // slurmstepd's own complaints may land in rank 0's file at any moment after the end (between
    // the read and the download): they are Slurm's lines, not the task's, so both sides drop them.
    const task = (text: string) => text.replace(/^slurmstepd-\S+: .*\n?/gm, '');
    expect(task(whole)).toBe(task(sections.join('')));
    const none = await server.api(`/api/jobs/${id}/logs?task=0&attempt=1&rank=3`);
    expect(none.status).toBe(404);
    expect(JSON.stringify(await none.json())).toContain('runs on 3 nodes (ranks 0–2): no rank 3');
  });

  it('setup failing on one node is FAILED_SETUP naming the rank; run starts on no node', async () => {
    // Rank 2 fails after a pause: the other ranks are stopped when it fails, so they need the
    // time to print their own setup line first (on a loaded machine they may start late).
    const id = await submit(
      ['name: setup-fails', 'num_nodes: 3', 'setup: |', '  echo "setup rank $JOBDECK_NODE_RANK"', '  if [ "$JOBDECK_NODE_RANK" = 2 ]; then sleep 3; exit 4; fi', 'run: echo "run rank $JOBDECK_NODE_RANK"'].join('\n'),
    );
    const d = await ended(id);
    expect(d.status).toBe('FAILED_SETUP');
    expect(d.tasks[0].attemptList[0]).toMatchObject({ status: 'FAILED_SETUP', exitCode: 4, reason: 'rank 2: setup exited with code 4' });
    for (const k of [0, 1, 2]) {
      const text = await log(id, 1, k);
      expect(text).toContain(`setup rank ${k}`);
      expect(text).not.toContain('run rank');
    }
  });

  it('rank 1 exits 3 with max_restarts_on_errors: 1: each attempt fails naming rank 1 and code 3, the others are stopped, one restart, then FAILED', async () => {
    const id = await submit(
      [
        'name: rank-fails',
        'num_nodes: 3',
        'job_recovery:',
        '  max_restarts_on_errors: 1',
        'run: |',
        '  echo "attempt $JOBDECK_ATTEMPT rank $JOBDECK_NODE_RANK up"',
        '  if [ "$JOBDECK_NODE_RANK" = 1 ]; then sleep 1; exit 3; fi',
        '  sleep 300',
        '  echo "attempt $JOBDECK_ATTEMPT rank $JOBDECK_NODE_RANK not stopped"',
      ].join('\n'),
    );
    const d = await ended(id);
    expect(d.status).toBe('FAILED');
    expect(d.statusReason).toContain('rank 1: run exited with code 3');
    const t = d.tasks[0];
    expect(t).toMatchObject({ status: 'FAILED', restarts: 1, exitCode: 3 });
    expect(t.attemptList.map((a) => [a.number, a.cause, a.status, a.exitCode, a.reason])).toEqual([
      [1, 'first', 'FAILED', 3, 'rank 1: run exited with code 3'],
      [2, 'restart', 'FAILED', 3, 'rank 1: run exited with code 3'],
    ]);
    // No process of the job is left on any node.
    expect(await waitFor(async () => jobProcesses(id).length === 0, `no process of job ${id} left`, 120_000)).toBe(true);
    for (const attempt of [1, 2]) for (const k of [0, 2]) expect(await log(id, attempt, k)).not.toContain('not stopped');
    // The stream: both attempts of every rank, and the failing rank named.
    const cli = await runCli(server, ['logs', String(id), '--no-follow']);
    for (const attempt of [1, 2]) for (const k of [0, 1, 2]) expect(cli.stdout).toContain(`[rank ${k}] attempt ${attempt} rank ${k} up`);
    expect(cli.stderr).toContain('Task 0 attempt 1 failed with exit code 3 on rank 1');
    expect(cli.stderr).toContain('Restarting task 0 (attempt 2 of 2)');
  });

  it('two ranks talk TCP on their node addresses (a tiny all-reduce) and succeed', async () => {
    const port = 29_000 + Math.floor(Math.random() * 1000);
    const reduce = String.raw`
const net = require('node:net');
const rank = Number(process.env.JOBDECK_NODE_RANK);
const head = process.env.JOBDECK_NODE_IPS.split('\n')[0];
const mine = rank + 1;
const done = (sum, peer) => { console.log('rank ' + rank + ' sum=' + sum + ' peer=' + peer); process.exit(0); };
if (rank === 0) {
  const srv = net.createServer((c) => c.once('data', (b) => { const sum = mine + Number(String(b)); c.end(String(sum)); srv.close(); done(sum, c.remoteAddress); }));
  srv.listen(${port}, head);
} else {
  const tryConnect = (n) => {
    const c = net.connect(${port}, head, () => c.write(String(mine)));
    c.once('data', (b) => done(Number(String(b)), head));
    c.once('error', () => (n > 0 ? setTimeout(() => tryConnect(n - 1), 200) : process.exit(1)));
  };
  tryConnect(100);
}`;
    const indented = reduce.trim().split('\n').map((l) => `    ${l}`).join('\n');
    const id = await submit(`name: allreduce\nnum_nodes: 2\nenvs:\n  REDUCE: |\n${indented}\nrun: node -e "$REDUCE"\n`);
    const d = await ended(id);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    const [head, worker] = await Promise.all([log(id, 1, 0), log(id, 1, 1)]);
    const headAddr = /peer=(\S+)/.exec(worker)![1];
    expect(head).toMatch(/^rank 0 sum=3 peer=(\S+)$/m);
    expect(worker).toMatch(/^rank 1 sum=3 peer=\S+$/m);
    // The two talked across nodes: the head saw the worker's address, not its own.
    expect(/peer=(\S+)/.exec(head)![1]).not.toBe(headAddr);
  });

  it('a job asking more nodes than the cluster has ends FAILED_NO_RESOURCE saying so; num_nodes on infra: local is refused', async () => {
    const id = await submit('name: too-big\nnum_nodes: 4\nrun: echo never\n');
    const d = await ended(id, 120_000);
    expect(d.status).toBe('FAILED_NO_RESOURCE');
    expect(d.statusReason).toBe('asks for 4 nodes (num_nodes) but the slurm executor has 3 in all');
    const r = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'num_nodes: 2\nresources:\n  infra: local\nrun: echo x\n' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(await r.json())).toContain('num_nodes: 2 needs the Slurm executor (infra: slurm)');
  });

  it('cancel stops every node\'s processes', async () => {
    const id = await submit('name: cancel-gang\nnum_nodes: 3\nrun: |\n  echo "rank $JOBDECK_NODE_RANK up"\n  sleep 300\n');
    await waitFor(async () => jobProcesses(id).length >= 3 && new Set(jobProcesses(id).map((p) => p.split(':')[0])).size === 3, 'every rank running on its node', 60_000);
    const r = await server.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    expect(r.status).toBe(200);
    const d = await ended(id, 60_000);
    expect(d.status).toBe('CANCELLED');
    expect(jobProcesses(id)).toEqual([]);
  });

  it('kill -9 of jobdeck during a 3-node run: the restarted server reattaches the gang, no rank runs twice', async () => {
    const marks = path.join(home, 'runs-killed');
    const gate = path.join(home, 'gate-killed');
    const id = await submit(`name: survive\nnum_nodes: 3\nrun: |\n  echo "$JOBDECK_NODE_RANK $(hostname)" >> ${marks}\n  while [ ! -f ${gate} ]; do sleep 0.2; done\n  echo "rank $JOBDECK_NODE_RANK finished"\n`);
    await waitFor(async () => existsSync(marks) && readFileSync(marks, 'utf8').trim().split('\n').length === 3, 'every rank started', 60_000);
    await waitFor(async () => (await detail(id)).tasks[0].attemptList[0]?.status === 'RUNNING', 'the attempt RUNNING', 120_000);
    await server.kill9();
    server = await startServerProcess({ home, env: ENV });
    const mon = (await (await server.api('/api/monitor')).json()) as MonitorState;
    expect(mon).toMatchObject({ running: true, readopted: 1 });
    writeFileSync(gate, '');
    const d = await ended(id);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    expect(d.tasks[0].attemptList).toHaveLength(1);
    expect(d.recoveryCount).toBe(0);
    const lines = readFileSync(marks, 'utf8').trim().split('\n').sort();
    expect(lines).toHaveLength(3);
    expect(new Set(lines.map((l) => l.split(' ')[1])).size).toBe(3);
    for (const k of [0, 1, 2]) expect(await log(id, 1, k)).toContain(`rank ${k} finished`);
  });

  it('a node lost mid-run (its slurmd killed): a recovery of the whole gang, which then finishes; the restart budget untouched', async () => {
    const marks = path.join(home, 'runs-lost');
    const id = await submit(`name: node-lost\nnum_nodes: 3\nrun: |\n  echo "$JOBDECK_ATTEMPT $JOBDECK_NODE_RANK $(hostname)" >> ${marks}\n  if [ "$JOBDECK_ATTEMPT" = 1 ]; then sleep 300; fi\n  echo "attempt $JOBDECK_ATTEMPT rank $JOBDECK_NODE_RANK done"\n`);
    await waitFor(async () => existsSync(marks) && readFileSync(marks, 'utf8').trim().split('\n').length === 3, 'every rank of attempt 1 started', 60_000);
    const pid = Number(readFileSync(path.join(BASE, 'run', 'slurmd-jdn2.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    // Slurm notices after SlurmdTimeout and ends the job NODE_FAIL; jobdeck sees it lost.
    const lost = await waitFor(async () => {
      const x = await detail(id);
      return x.tasks[0].attemptList[0]?.status === 'LOST' ? x : null;
    }, 'attempt 1 LOST', 90_000);
    expect(lost.tasks[0].attemptList[0].reason).toMatch(/NODE_FAIL|recorded no exit status/);
    clusterUp(); // the node comes back; Slurm ends what its old slurmd left running
    const d = await ended(id, 120_000);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    expect(d.tasks[0].attemptList.map((a) => [a.number, a.cause, a.status])).toEqual([
      [1, 'first', 'LOST'],
      [2, 'recovery', 'SUCCEEDED'],
    ]);
    expect(d).toMatchObject({ restartCount: 0, recoveryCount: 1 });
    expect(d.tasks[0]).toMatchObject({ restarts: 0, recoveries: 1 });
    for (const k of [0, 1, 2]) expect(await log(id, 2, k)).toContain(`attempt 2 rank ${k} done`);
    expect(await waitFor(async () => jobProcesses(id).length === 0, 'nothing of attempt 1 left on any node', 60_000)).toBe(true);
  });
}, 600_000);
