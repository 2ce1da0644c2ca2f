/**
 * Job groups and task DAGs on a real, emulated multi-node Slurm cluster
 * (scripts/slurm-multi-up.sh: three slurmd, each in its own network namespace with its own
 * hostname and address; started here when not up), through a real jobdeck server process with
 * `JOBDECK_EXECUTOR=slurm`. docs/slurm.md "Job groups" is what these check: a group's first
 * attempts are one heterogeneous job (all started at once), each task finds the others by
 * `JOBDECK_TASK_<NAME>_HOST` — the node its component got — and talks to them over TCP across
 * nodes; the others are stopped when the primary ends; a task restarted alone runs as a job of its
 * own and still finds the others; a group Slurm holds back shows Slurm's reason and is cancelled
 * whole; a diamond DAG's middle tasks run side by side. Order is proven
 * by what the tasks saw of each other and by the job's events, never by the clock.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail } from '../../lib/api/types';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/server';
import { waitFor } from './monitor-helpers';
import { useSlurmClusters } from '../helpers/slurm-lock';

useSlurmClusters();

const BASE = process.env.SLURM_MULTI_BASE || '/var/lib/jobdeck-slurm-multi';
const SLURM_CONF = path.join(BASE, 'slurm.conf');
const NODES = 3;
const ENV = { JOBDECK_EXECUTOR: 'slurm', SLURM_CONF, JOBDECK_RECONCILE_MS: '200', JOBDECK_CANCEL_GRACE_MS: '2000' };
const slurmEnv = { ...process.env, SLURM_CONF };

let server: ServerProcess;

beforeAll(async () => {
  execFileSync('bash', [path.join(ROOT, 'scripts', 'slurm-multi-up.sh'), String(NODES)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  server = await startServerProcess({ env: ENV });
}, 600_000);

afterAll(async () => {
  // Nothing of these jobs may outlive the suite, whatever a test did.
  try {
    const ids = execFileSync('squeue', ['-h', '-o', '%A %j'], { encoding: 'utf8', env: slurmEnv })
      .split('\n')
      .filter((l) => / jobdeck-/.test(l))
      .map((l) => l.split(' ')[0]);
    if (ids.length) execFileSync('scancel', ids, { env: slurmEnv });
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

async function detail(id: number): Promise<JobDetail> {
  const r = await server.api(`/api/jobs/${id}`);
  expect(r.status).toBe(200);
  return (await r.json()) as JobDetail;
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'CANCELLED', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER', 'FAILED_PRECHECKS'];
function ended(id: number): Promise<JobDetail> {
  return waitFor(async () => {
    const d = await detail(id);
    return TERMINAL.includes(d.status) ? d : null;
  }, `job ${id} to end`, 180_000);
}

/** Task `k`'s attempt `n` log, from its file (the nodes share the server's data folder). */
const log = (id: number, k: number, n = 1) => readFileSync(path.join(server.home, 'jobs', String(id), `task-${k}`, `attempt-${n}`, 'run.log'), 'utf8');

/** The job's status changes as `t<k> FROM>TO` / `job FROM>TO` lines, in order. */
const story = (d: JobDetail) => d.events.filter((e) => e.entity !== 'attempt' && e.entity !== 'server').map((e) => `${e.entity === 'job' ? 'job' : `t${e.taskIndex}`} ${e.from ?? ''}>${e.to}`);

/** The Slurm jobs of jobdeck job `id` the controller still has active. */
const slurmJobsOf = (id: number) =>
  execFileSync('squeue', ['-h', '-o', '%A %j %T'], { encoding: 'utf8', env: slurmEnv })
    .split('\n')
    .filter((l) => new RegExp(` jobdeck-${id}-`).test(l));

describe('job groups and task DAGs on an emulated Slurm cluster', () => {
  it('a 3-task group: one heterogeneous job, each task on its own node, the clients reach the server over TCP by name; the others are stopped when the primary ends', async () => {
    // cpus: 2 each (a node has 2): Slurm places the three tasks on three nodes.
    const client = (name: string) => `name: ${name}
envs: {PORT: "47011"}
resources: {cpus: 2}
run: |
  echo "${name} on $(hostname) addr=$(hostname -I | tr -d ' ') server=$JOBDECK_TASK_SERVER_HOST tasks=$JOBDECK_GROUP_TASKS group=$SKYPILOT_JOBGROUP_NAME"
  python3 -u - <<'PY'
  import os, socket, time
  while True:
      try:
          c = socket.create_connection((os.environ['JOBDECK_TASK_SERVER_HOST'], int(os.environ['PORT'])))
          break
      except OSError:
          time.sleep(0.05)
  c.sendall(('${name} on ' + socket.gethostname()).encode())
  print('reply: ' + c.makefile().readline().strip(), flush=True)
  if os.environ['JOBDECK_TASK_NAME'] == 'worker':
      while True:
          time.sleep(0.2)
  PY`;
    const id = await submit(`name: trio
execution: parallel
primary_tasks: [driver]
---
name: server
envs: {PORT: "47011"}
resources: {cpus: 2}
max_duration: 30m
run: |
  echo "server on $(hostname) addr=$(hostname -I | tr -d ' ') me=$JOBDECK_TASK_SERVER_HOST worker=$JOBDECK_TASK_WORKER_HOST driver=$JOBDECK_TASK_DRIVER_HOST"
  python3 -u - <<'PY'
  import os, socket, time
  s = socket.socket()
  s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  s.bind((os.environ['JOBDECK_TASK_SERVER_HOST'], int(os.environ['PORT'])))
  s.listen(8)
  heard = []
  while len(heard) < 2:
      c, addr = s.accept()
      print('got: ' + c.recv(200).decode() + ' from ' + addr[0], flush=True)
      heard.append(c)
  # Both clients are connected now: only then may the driver (the primary) end.
  for c in heard:
      c.sendall(b'all here\\n')
  while True:
      time.sleep(0.2)
  PY
---
${client('worker')}
---
${client('driver')}
`);
    const d = await ended(id);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    expect(d.tasks.map((t) => t.status)).toEqual(['CANCELLED', 'CANCELLED', 'SUCCEEDED']);
    expect(d.tasks[0].statusReason).toBe('stopped: primary task 2 ended');
    expect(d.tasks.map((t) => t.attemptList.length)).toEqual([1, 1, 1]);

    // Where each ran, and what the others were told: the node its component got.
    const server0 = /server on (\S+) addr=(\S+) me=(\S+) worker=(\S+) driver=(\S+)/.exec(log(id, 0));
    expect(server0, log(id, 0)).not.toBeNull();
    const [, serverHost, serverAddr, me, workerSaid, driverSaid] = server0!;
    expect(me).toBe(serverAddr);
    const clients = [1, 2].map((k) => {
      const text = log(id, k);
      const m = /(\w+) on (\S+) addr=(\S+) server=(\S+) tasks=(\S+) group=(\S+)/.exec(text);
      expect(m, text).not.toBeNull();
      expect(m![4]).toBe(serverAddr);
      expect(m![5]).toBe('server,worker,driver');
      expect(m![6]).toBe('trio');
      expect(text).toContain('reply: all here');
      return { name: m![1], host: m![2], addr: m![3] };
    });
    expect(clients.map((c) => c.name)).toEqual(['worker', 'driver']);
    expect([workerSaid, driverSaid]).toEqual(clients.map((c) => c.addr));
    // Three nodes: each client reached the server from another node, over TCP.
    expect(new Set([serverHost, ...clients.map((c) => c.host)]).size).toBe(3);
    for (const c of clients) expect(log(id, 0)).toContain(`got: ${c.name} on ${c.host} from ${c.addr}`);
    expect(d.tasks.map((t) => t.attemptList[0].nodes)).toEqual([[serverHost], [clients[0].host], [clients[1].host]]);
    // All three joined the one heterogeneous job (each attempt's mark names the group's folder),
    // each task its own component with its own time limit: the server's 30 minutes (it is the
    // last component: a time limit is carried over to the later ones), the others none.
    const groupDir = path.join(server.home, 'jobs', String(id), 'group');
    for (const k of [0, 1, 2]) expect(readFileSync(path.join(server.home, 'jobs', String(id), `task-${k}`, 'attempt-1', 'group'), 'utf8').trim()).toBe(groupDir);
    const components = readFileSync(path.join(groupDir, 'ids'), 'utf8').trim().split('\n');
    const shown = components.map((c) => execFileSync('scontrol', ['-o', 'show', 'job', c], { encoding: 'utf8', env: slurmEnv }));
    expect(shown.map((l) => /HetJobOffset=(\d+)/.exec(l)?.[1])).toEqual(['2', '0', '1']);
    expect(shown.map((l) => /TimeLimit=(\S+)/.exec(l)?.[1])).toEqual(['00:30:00', 'UNLIMITED', 'UNLIMITED']);

    // Overlap by events: every task was RUNNING before any task ended; the primary ended first.
    const s = story(d);
    const at = (l: string) => s.indexOf(l);
    const firstEnd = Math.min(at('t0 RUNNING>CANCELLED'), at('t1 RUNNING>CANCELLED'), at('t2 RUNNING>SUCCEEDED'));
    for (const k of [0, 1, 2]) {
      expect(at(`t${k} STARTING>RUNNING`), s.join('\n')).toBeGreaterThanOrEqual(0);
      expect(at(`t${k} STARTING>RUNNING`)).toBeLessThan(firstEnd);
    }
    expect(at('t2 RUNNING>SUCCEEDED')).toBe(firstEnd);
    // Stopped on Slurm too: nothing of the group's heterogeneous job stays active.
    await waitFor(async () => (slurmJobsOf(id).length === 0 ? true : null), `job ${id}'s Slurm jobs to end`, 60_000);
  }, 240_000);

  it('a group task restarted alone runs as a job of its own and still finds the others', async () => {
    const dir = path.join(server.home, 'restart-marks');
    mkdirSync(dir, { recursive: true });
    const id = await submit(`name: duo
execution: parallel
---
name: flaky
job_recovery: {max_restarts_on_errors: 1}
run: |
  echo "flaky on $(hostname -I | tr -d ' ') me=$JOBDECK_TASK_FLAKY_HOST steady=$JOBDECK_TASK_STEADY_HOST"
  if [ ! -f ${dir}/tried ]; then touch ${dir}/tried; exit 3; fi
  touch ${dir}/second
---
name: steady
run: |
  echo "steady on $(hostname -I | tr -d ' ')"
  while [ ! -f ${dir}/second ]; do sleep 0.05; done
`);
    const d = await ended(id);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    expect(d.tasks.map((t) => [t.status, t.attemptList.length])).toEqual([
      ['SUCCEEDED', 2],
      ['SUCCEEDED', 1],
    ]);
    const steady = /steady on (\S+)/.exec(log(id, 1))![1];
    for (const n of [1, 2]) {
      const m = /flaky on (\S+) me=(\S+) steady=(\S+)/.exec(log(id, 0, n));
      expect(m, log(id, 0, n)).not.toBeNull();
      // Its own host is where this attempt runs; the steady task's is where that one runs.
      expect(m![2]).toBe(m![1]);
      expect(m![3]).toBe(steady);
    }
    // The first attempt joined the group's heterogeneous job (its mark names the group's folder);
    // the restart is a job of its own (no mark).
    const mark = (n: number) => path.join(server.home, 'jobs', String(id), 'task-0', `attempt-${n}`, 'group');
    expect(readFileSync(mark(1), 'utf8').trim()).toBe(path.join(server.home, 'jobs', String(id), 'group'));
    expect(existsSync(mark(2))).toBe(false);
  }, 240_000);

  it("a group Slurm holds back shows Slurm's reason; a cancel then cancels its heterogeneous job whole", async () => {
    // A job jobdeck does not know takes every CPU of the cluster: the group's job waits in Slurm.
    const filler = execFileSync('sbatch', ['--parsable', '--job-name=filler-groups', '--nodes=3', '--ntasks=3', '--ntasks-per-node=1', '--cpus-per-task=2', '--output=/dev/null', '--wrap=sleep 600'], { encoding: 'utf8', env: slurmEnv }).trim();
    try {
      await waitFor(async () => (/RUNNING/.test(execFileSync('squeue', ['-h', '-o', '%T', '-j', filler], { encoding: 'utf8', env: slurmEnv })) ? true : null), 'the filler to run', 60_000);
      const id = await submit('name: held\nexecution: parallel\n---\nname: a\nrun: echo a\n---\nname: b\nrun: echo b\n');
      const held = await waitFor(async () => {
        const d = await detail(id);
        return d.tasks.every((t) => t.status === 'RUNNING') && d.pendingReason?.startsWith('Slurm: ') ? d : null;
      }, "the group to wait in Slurm's queue with its reason", 60_000);
      expect(held.pendingReason).toMatch(/^Slurm: (Resources|Priority|pending)/);
      expect(slurmJobsOf(id).map((l) => l.split(' ')[2])).toEqual(['PENDING', 'PENDING']);
      const r = await server.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
      expect(r.status).toBe(200);
      const d = await ended(id);
      expect(d.status).toBe('CANCELLED');
      expect(d.tasks.map((t) => [t.status, t.attemptList.length])).toEqual([
        ['CANCELLED', 1],
        ['CANCELLED', 1],
      ]);
      // Neither task ran: no log line of theirs; the heterogeneous job is gone, nothing started later.
      for (const k of [0, 1]) expect(log(id, k)).toBe('');
      await waitFor(async () => (slurmJobsOf(id).length === 0 ? true : null), `job ${id}'s Slurm jobs to end`, 60_000);
    } finally {
      execFileSync('scancel', [filler], { env: slurmEnv });
    }
  }, 240_000);

  it('a diamond DAG: the two middle tasks run side by side on the cluster, the last after both', async () => {
    const dir = path.join(server.home, 'diamond-marks');
    mkdirSync(dir, { recursive: true });
    // b and c each wait for the other's mark: neither can end unless both run at once.
    const id = await submit(`name: diamond
---
name: a
run: echo a
---
name: b
depends_on: {tasks: [a]}
run: touch ${dir}/b; while [ ! -f ${dir}/c ]; do sleep 0.05; done; echo b saw c
---
name: c
depends_on: {tasks: [a]}
run: touch ${dir}/c; while [ ! -f ${dir}/b ]; do sleep 0.05; done; echo c saw b
---
name: d
depends_on: {tasks: [b, c]}
run: echo d after b and c
`);
    const d = await ended(id);
    expect(d.status, d.statusReason ?? '').toBe('SUCCEEDED');
    expect(d.tasks.map((t) => t.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(log(id, 1)).toContain('b saw c');
    expect(log(id, 2)).toContain('c saw b');
    const s = story(d);
    const at = (l: string) => s.indexOf(l);
    expect(at('t0 RUNNING>SUCCEEDED')).toBeLessThan(at('t1 PENDING>STARTING'));
    expect(at('t0 RUNNING>SUCCEEDED')).toBeLessThan(at('t2 PENDING>STARTING'));
    expect(Math.max(at('t1 RUNNING>SUCCEEDED'), at('t2 RUNNING>SUCCEEDED'))).toBeLessThan(at('t3 PENDING>STARTING'));
  }, 240_000);
});
