/**
 * Survive kill -9 of the real server (docs/design.md §5 rule 8): a real `node server.ts`
 * process (tests/helpers/server.ts) runs a 2-task pipeline; while task 2 runs, the server is
 * killed with SIGKILL (or stopped with SIGTERM) and started again on the same data folder (and,
 * for PostgreSQL, the same database). Jobs are submitted through POST /api/jobs and read through
 * GET /api/jobs/:id on both kinds (PGlite: one process owns the folder), and additionally from the
 * shared database on PostgreSQL. Needs a built app: run with JOBDECK_NEXT_DIST set to a built dist.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readExitRecord } from '../../lib/executors/attempt-record';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import type { JobDetail } from '../../lib/api/types';
import type { MonitorState } from '../../lib/monitor/state';
import { groupAlive, waitFor } from './monitor-helpers';

const ENV = { JOBDECK_RECONCILE_MS: '200', JOBDECK_LOST_CONFIRM_MS: '200', JOBDECK_CPUS: '4' };

describe.each(DB_KINDS)('server kill -9 and restart on %s', (kind) => {
  const t = useServerDatabase(kind, `recovery-server-${kind}`, { isolation: 'test' });
  const servers: ServerProcess[] = [];
  let home: string | undefined;
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.dispose({ keepHome: true });
    if (home) {
      // kill whatever attempt is left, then remove the folder
      const { readdirSync, rmSync } = await import('node:fs');
      const jobs = path.join(home, 'jobs');
      if (existsSync(jobs)) {
        for (const j of readdirSync(jobs)) {
          for (const tk of readdirSync(path.join(jobs, j))) {
            for (const at of readdirSync(path.join(jobs, j, tk))) {
              const hf = path.join(jobs, j, tk, at, 'handle.json');
              if (existsSync(hf)) {
                try {
                  process.kill(-JSON.parse(readFileSync(hf, 'utf8')).pid, 'SIGKILL');
                } catch {
                  /* gone */
                }
              }
            }
          }
        }
      }
      rmSync(home, { recursive: true, force: true });
      home = undefined;
    }
  });

  async function start(h?: string): Promise<ServerProcess> {
    const s = await t.start({ home: h, env: ENV });
    servers.push(s);
    home = s.home;
    return s;
  }

  async function detail(s: ServerProcess, id: number): Promise<JobDetail> {
    const r = await s.api(`/api/jobs/${id}`);
    expect(r.status).toBe(200);
    return (await r.json()) as JobDetail;
  }

  async function submitPipeline(s: ServerProcess, gate: string): Promise<number> {
    const yaml = `name: survive\n---\nname: one\nrun: echo one\n---\nname: two\nrun: |\n  while [ ! -f ${gate} ]; do sleep 0.05; done\n  echo two done\n`;
    const r = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: number }).id;
  }

  async function task2Running(s: ServerProcess, id: number): Promise<number> {
    await waitFor(async () => {
      const d = await detail(s, id);
      return d.tasks[1].status === 'RUNNING' && d.tasks[1].attemptList[0]?.status === 'RUNNING';
    }, 'task 2 running', 30_000);
    const hf = path.join(s.home, 'jobs', String(id), 'task-1', 'attempt-1', 'handle.json');
    return JSON.parse(readFileSync(hf, 'utf8')).pid as number;
  }

  // The status changes; the server's own entries are checked apart (serverStory).
  const story = (d: JobDetail) => d.events.filter((e) => e.entity !== 'server').map((e) => `${e.entity === 'job' ? 'job' : e.entity === 'task' ? `t${e.taskIndex}` : `t${e.taskIndex}a${e.attemptNumber}`} ${e.from ?? ''}>${e.to}`);

  const serverStory = (d: JobDetail) => d.events.filter((e) => e.entity === 'server').map((e) => `${e.to}: ${e.reason}`);

  it('kill -9 while task 2 runs: the restarted server reattaches it, task 1 is not re-run, the job SUCCEEDS', async () => {
    const s1 = await start();
    const gate = path.join(s1.home, 'gate');
    const id = await submitPipeline(s1, gate);
    const pid = await task2Running(s1, id);
    // One submit, one statement (lib/store submitJob group commit).
    expect(((await (await s1.api('/api/monitor')).json()) as MonitorState).submits).toEqual({ statements: 1, jobs: 1 });
    const before = story(await detail(s1, id));
    await s1.kill9();
    expect(groupAlive(pid)).toBe(true); // the attempt outlived the server

    const s2 = await start(s1.home);
    const mon = (await (await s2.api('/api/monitor')).json()) as MonitorState;
    expect(mon).toMatchObject({ running: true, readopted: 1, submits: { statements: 0, jobs: 0 } });
    // The server reports its own memory (bytes): RSS holds the JS heap.
    expect(mon.memory.rssBytes).toBeGreaterThan(mon.memory.heapUsedBytes);
    expect(mon.memory.heapUsedBytes).toBeGreaterThan(1e6);
    writeFileSync(gate, '');
    const d = await waitFor(async () => {
      const x = await detail(s2, id);
      return x.status === 'SUCCEEDED' ? x : null;
    }, 'job to succeed', 30_000);
    expect(d.tasks.map((x) => x.attemptList.length)).toEqual([1, 1]);
    expect(d.tasks[1].attemptList[0]).toMatchObject({ status: 'SUCCEEDED', exitCode: 0, cause: 'first' });
    // the story: everything before the crash, then task 2's end and the job's — nothing re-run
    expect(story(d)).toEqual([...before, 't1a1 RUNNING>SUCCEEDED', 't1 RUNNING>SUCCEEDED', 'job RUNNING>SUCCEEDED']);
    expect(before).toEqual(expect.arrayContaining(['t0a1 RUNNING>SUCCEEDED', 't1a1 >STARTING', 't1a1 STARTING>RUNNING']));
    if (t.db) {
      const attempts = await t.db.prisma.attempt.findMany({ where: { jobId: id } });
      expect(attempts).toHaveLength(2);
      expect(attempts.find((a) => a.number === 1 && a.pid === pid)).toBeTruthy();
    }
    expect(s2.output()).toContain('re-adopting 1 non-terminal job');
    // The history says the server restarted: no clean stop was recorded before it.
    const readoptedStory = ['READOPTED: jobdeck started again after an unclean stop (no shutdown was recorded) and re-adopted the job (RUNNING)'];
    // On PostgreSQL jobs are owned by lease (docs/design.md "Replicas"): the new server takes the
    // dead one's over at once, its process being gone from this host.
    if (kind === 'postgresql') readoptedStory.push(expect.stringMatching(/^TAKEN_OVER: server srv-\S+ took the job over from srv-\S+ \(its process is gone; epoch 2\)$/) as unknown as string);
    expect(serverStory(d)).toEqual(readoptedStory);
    const readopted = d.events.findLastIndex((e) => e.entity === 'server');
    expect(d.events[readopted + 1]).toMatchObject({ entity: 'attempt', to: 'SUCCEEDED' });
  });

  it('a task that exited 0 while the server was down ends SUCCEEDED after the restart', async () => {
    const s1 = await start();
    const gate = path.join(s1.home, 'gate');
    const id = await submitPipeline(s1, gate);
    const pid = await task2Running(s1, id);
    await s1.kill9();
    writeFileSync(gate, '');
    // The record, as the server reads it: at `exit`, or whole at `exit.tmp` when the launcher died
    // between the wrapper's look at its parent and the reap (docs/design.md §6).
    await waitFor(async () => readExitRecord(path.join(s1.home, 'jobs', String(id), 'task-1', 'attempt-1')) !== null, 'exit record while down');
    await waitFor(async () => !groupAlive(pid), 'the attempt to be gone while the server is down');
    const s2 = await start(s1.home);
    const d = await waitFor(async () => {
      const x = await detail(s2, id);
      return x.status === 'SUCCEEDED' ? x : null;
    }, 'job to succeed', 30_000);
    expect(d.tasks.map((x) => x.attemptList.length)).toEqual([1, 1]);
    expect(d.recoveryCount).toBe(0);
  });

  it('SIGTERM stops the server but leaves the job running; the next start re-adopts it', async () => {
    const s1 = await start();
    const gate = path.join(s1.home, 'gate');
    const id = await submitPipeline(s1, gate);
    const pid = await task2Running(s1, id);
    await s1.stop();
    expect(s1.proc.exitCode).toBe(0);
    expect(groupAlive(pid)).toBe(true);
    const s2 = await start(s1.home);
    writeFileSync(gate, '');
    const d = await waitFor(async () => {
      const x = await detail(s2, id);
      return x.status === 'SUCCEEDED' ? x : null;
    }, 'job to succeed', 30_000);
    expect(d.tasks.map((x) => x.attemptList.length)).toEqual([1, 1]);
    // The stop and the re-adoption in the job's history, with how long the server was down;
    // times carry milliseconds.
    const server = serverStory(d);
    expect(server).toHaveLength(2);
    expect(server[0]).toBe('STOPPED: jobdeck stopped while the job was RUNNING; a running attempt keeps running and is re-adopted at the next start');
    expect(server[1]).toMatch(/^READOPTED: jobdeck started again after \d+\.\d s down and re-adopted the job \(RUNNING\)$/);
    for (const e of d.events) expect(e.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(d.events.some((e) => !e.at.endsWith('.000Z'))).toBe(true);
  });
});
