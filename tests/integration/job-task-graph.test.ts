/**
 * A job's tasks as a graph (docs/design.md §17 "Task graphs and job groups") against a real
 * database (both kinds), a real monitor and real processes on the local executor: a job group
 * (`execution: parallel`) whose tasks run together and talk over TCP by their documented names,
 * stopped when the primary ends; a group task restarted by its own job_recovery; a group failed
 * by a task whose budget is spent; a cancel of a running group; a DAG of four tasks whose middle
 * two run side by side; a cycle refused at submit with file:line. Order is proven by events and
 * by gates the tasks wait on, never by the clock.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { storeOf } from '../helpers/store';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { submitJobSpec } from '../../lib/control/submit';
import { requestCancel } from '../../lib/control/cancel';
import { SpecError } from '../../lib/jobs/spec';
import { Fixture, jobTree, story, submit, waitFor, waitStatus, waitTerminal, wrapExecutor } from './monitor-helpers';

/** A port nothing listens on right now (the OS picks it). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** A bash loop that waits for `file` (a gate the test or another task writes). */
const waitFile = (file: string) => `while [ ! -f ${file} ]; do sleep 0.05; done`;

/** The first index of `line` in a story (-1 when absent). */
const at = (s: string[], line: string) => s.indexOf(line);

describe.each(DB_KINDS)('task graphs on %s', (kind) => {
  const t = useDatabase(kind, `task-graph-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  let dir: string;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a 3-task job group: the tasks run together, reach each other over TCP by name, and the others are stopped when the primary ends', async () => {
    fx = new Fixture();
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-group-'));
    const port = await freePort();
    const client = (then: string) => `|
  python3 -u - <<'PY'
  import os, socket, time
  while True:
      try:
          c = socket.create_connection((os.environ['JOBDECK_TASK_SERVER_HOST'], int(os.environ['PORT'])))
          break
      except OSError:
          time.sleep(0.05)
  c.sendall(('hello from ' + os.environ['JOBDECK_TASK_NAME']).encode())
  c.close()
  PY
  echo "tasks: $JOBDECK_GROUP_TASKS"
  ${then}`;
    const yaml = `name: trio
execution: parallel
primary_tasks: [driver]
---
name: server
envs: {PORT: "${port}"}
run: |
  python3 -u - <<'PY'
  import os, socket
  s = socket.socket()
  s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  s.bind((os.environ['JOBDECK_TASK_SERVER_HOST'], int(os.environ['PORT'])))
  s.listen(8)
  while True:
      c, _ = s.accept()
      print('got: ' + c.recv(100).decode(), flush=True)
      c.close()
  PY
---
name: worker
envs: {PORT: "${port}"}
run: ${client(waitFile(`${dir}/never`))}
---
name: driver
envs: {PORT: "${port}"}
run: ${client(waitFile(`${dir}/gate`))}
`;
    // Where each attempt runs is not known until the driver's end is written (as a Slurm attempt
    // before its batch script wrote its hosts): no step of the running tasks can record it, and
    // the tasks the group stops get their nodes with their end (docs/design.md "Replicas").
    let placed = false;
    const executor = wrapExecutor(fx.executor, { nodes: (h) => (placed ? fx.executor.nodes!(h) : null) });
    const m = fx.monitor(db, { executor, hooks: { beforeWrite: (ctx) => void (ctx.phase === 'settle' && (placed = true)) } });
    await m.start();
    const id = await submit(db, yaml);
    // The server heard both others: all three ran at once (the server never ends on its own).
    const serverLog = await waitFor(async () => {
      const j = await jobTree(db, id);
      const p = j?.tasks[0].attempts[0]?.logPath;
      const text = p && existsSync(p) ? readFileSync(p, 'utf8') : '';
      return text.includes('got: hello from worker') && text.includes('got: hello from driver') ? text : null;
    }, 'the server to hear the worker and the driver');
    expect(serverLog).toContain('got: hello from driver');
    const running = await jobTree(db, id);
    expect(running!.tasks.map((x) => x.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    expect(running!.tasks.map((x) => x.attempts[0].nodes)).toEqual([null, null, null]);
    writeFileSync(`${dir}/gate`, '');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => x.status)).toEqual(['CANCELLED', 'CANCELLED', 'SUCCEEDED']);
    // The two the group stopped (the driver's end was written before its place was known).
    expect(j.tasks.slice(0, 2).map((x) => x.attempts[0].nodes)).toEqual([[os.hostname()], [os.hostname()]]);
    expect(j.tasks[0].statusReason).toBe('stopped: primary task 2 ended');
    expect(j.tasks.map((x) => x.attempts.length)).toEqual([1, 1, 1]);
    expect(readFileSync(j.tasks[2].attempts[0].logPath!, 'utf8')).toContain('tasks: server,worker,driver');
    const s = await story(db, id);
    // Overlap by events: every task was RUNNING before any task ended.
    const firstEnd = Math.min(...['t0 RUNNING>CANCELLED', 't1 RUNNING>CANCELLED', 't2 RUNNING>SUCCEEDED'].map((l) => at(s, l)));
    for (const i of [0, 1, 2]) expect(at(s, `t${i} STARTING>RUNNING`)).toBeGreaterThanOrEqual(0);
    for (const i of [0, 1, 2]) expect(at(s, `t${i} STARTING>RUNNING`)).toBeLessThan(firstEnd);
    expect(at(s, 't2 RUNNING>SUCCEEDED')).toBeLessThan(at(s, 't0 RUNNING>CANCELLED'));
    expect(s[s.length - 1]).toBe('job RUNNING>SUCCEEDED');
    // The job's CPUs are the sum of its tasks' (admitted as a gang).
    expect(j.cpus).toBe(3);
  });

  it('a failed task of a group is restarted by its own job_recovery while the others keep running', async () => {
    fx = new Fixture();
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-group-'));
    const yaml = `name: duo
execution: parallel
---
name: flaky
run: |
  if [ ! -f ${dir}/tried ]; then touch ${dir}/tried; exit 3; fi
  touch ${dir}/second
job_recovery: {max_restarts_on_errors: 1}
---
name: steady
run: ${waitFile(`${dir}/second`)}
`;
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, yaml);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.restartCount).toBe(1);
    expect(j.tasks.map((x) => [x.status, x.attempts.length])).toEqual([
      ['SUCCEEDED', 2],
      ['SUCCEEDED', 1],
    ]);
    expect(j.tasks[0].attempts.map((a) => [a.status, a.cause])).toEqual([
      ['FAILED', 'first'],
      ['SUCCEEDED', 'restart'],
    ]);
    const s = await story(db, id);
    // steady kept its one attempt through flaky's restart: it could end only after the restart
    // ran (its gate is the second attempt's mark), and nothing stopped it meanwhile.
    expect(at(s, 't1a1 >STARTING')).toBeGreaterThanOrEqual(0);
    expect(at(s, 't1 RUNNING>SUCCEEDED')).toBeGreaterThan(at(s, 't0a2 >STARTING'));
    expect(s.filter((l) => l.startsWith('t1') && l.includes('CANCEL'))).toEqual([]);
  });

  it('a group task whose budget is spent fails the group; the others are stopped', async () => {
    fx = new Fixture();
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-group-'));
    const yaml = `name: doomed
execution: parallel
---
name: bad
run: ${waitFile(`${dir}/up`)}; exit 2
---
name: long
run: touch ${dir}/up; ${waitFile(`${dir}/never`)}
`;
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, yaml);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    expect(j.tasks.map((x) => x.status)).toEqual(['FAILED', 'CANCELLED']);
    expect(j.tasks[1].statusReason).toBe('stopped: task 0 ended FAILED');
    expect(j.tasks[1].attempts[0].status).toBe('CANCELLED');
  });

  it('a cancel of a running group stops every task', async () => {
    fx = new Fixture();
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-group-'));
    const yaml = `name: stop-all
execution: parallel
---
name: one
run: touch ${dir}/one; ${waitFile(`${dir}/never`)}
---
name: two
run: touch ${dir}/two; ${waitFile(`${dir}/never`)}
`;
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, yaml);
    await waitFor(async () => existsSync(`${dir}/one`) && existsSync(`${dir}/two`), 'both tasks to run');
    await waitStatus(db, id, 'RUNNING');
    await requestCancel(storeOf(db), [id]);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('CANCELLED');
    expect(j.tasks.map((x) => [x.status, x.attempts[0].status])).toEqual([
      ['CANCELLED', 'CANCELLED'],
      ['CANCELLED', 'CANCELLED'],
    ]);
  });

  it('a DAG of four tasks: the middle two run side by side, the last after both', async () => {
    fx = new Fixture();
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-dag-'));
    // b and c each wait for the other's mark: they can only both end when they ran together.
    const yaml = `name: diamond
---
name: a
run: echo a
---
name: b
depends_on: {tasks: [a]}
run: touch ${dir}/b; ${waitFile(`${dir}/c`)}
---
name: c
depends_on: {tasks: [a]}
run: touch ${dir}/c; ${waitFile(`${dir}/b`)}
---
name: d
depends_on: {tasks: [b, c]}
run: echo d
`;
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, yaml);
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks.map((x) => x.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const s = await story(db, id);
    expect(at(s, 't0 RUNNING>SUCCEEDED')).toBeLessThan(at(s, 't1 PENDING>STARTING'));
    expect(at(s, 't0 RUNNING>SUCCEEDED')).toBeLessThan(at(s, 't2 PENDING>STARTING'));
    // b and c both started before either ended.
    const firstMiddleEnd = Math.min(at(s, 't1 RUNNING>SUCCEEDED'), at(s, 't2 RUNNING>SUCCEEDED'));
    expect(at(s, 't1 PENDING>STARTING')).toBeLessThan(firstMiddleEnd);
    expect(at(s, 't2 PENDING>STARTING')).toBeLessThan(firstMiddleEnd);
    // d only after both.
    expect(at(s, 't3 PENDING>STARTING')).toBeGreaterThan(Math.max(at(s, 't1 RUNNING>SUCCEEDED'), at(s, 't2 RUNNING>SUCCEEDED')));
    expect(j.cpus).toBe(4);
  });

  it('a failed task of a DAG cancels the tasks that wait for it; a cycle and an unknown name are refused at submit with file:line', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, 'name: a\nrun: exit 1\n---\nname: b\ndepends_on: {tasks: [a]}\nrun: echo b\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED');
    expect(j.tasks.map((x) => [x.status, x.attempts.length])).toEqual([
      ['FAILED', 1],
      ['CANCELLED', 0],
    ]);
    const text = 'name: a\ndepends_on: {tasks: [c]}\nrun: echo a\n---\nname: b\ndepends_on: {tasks: [a]}\nrun: echo b\n---\nname: c\ndepends_on:\n  tasks: [b, z]\nrun: echo c\n';
    const err = await submitJobSpec(storeOf(db), { source: { kind: 'yaml', text, filename: 'loop.yaml' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpecError);
    expect((err as SpecError).message.split('\n')).toEqual([
      'loop.yaml:6 task[1].depends_on.tasks[0]: a cycle: a → c → b → a (a task cannot wait for itself)',
      'loop.yaml:11 task[2].depends_on.tasks[1]: no task named "z" in this job; its tasks: a, b, c',
    ]);
  });
});
