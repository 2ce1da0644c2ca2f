/**
 * Several real `node server.ts` processes on one PostgreSQL and one shared data folder
 * (docs/design.md "Replicas"): job leases, the fence of the guarded write, failover after kill -9
 * and after SIGSTOP. PostgreSQL only (PGlite has one holder: db-lock.test.ts). Needs a built app:
 * `JOBDECK_NEXT_DIST=.next-replicas npx next build`, then run with that JOBDECK_NEXT_DIST.
 * REPLICAS_PIPELINES sets the pipeline count of the first test (default 300).
 */
import { appendFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { groupAlive, waitFor } from './monitor-helpers';
import { StreamClient } from './ws-fixtures';
import { runCli } from './cli-run';

const LEASE_MS = 1500;
const ENV = { JOBDECK_RECONCILE_MS: '200', JOBDECK_LOST_CONFIRM_MS: '200', JOBDECK_CPUS: '64', JOBDECK_LEASE_MS: String(LEASE_MS) };
const PIPELINES = Number(process.env.REPLICAS_PIPELINES || 300);

describe('replicas on postgresql', () => {
  const t = useServerDatabase('postgresql', 'replicas', { isolation: 'test' });
  const servers: ServerProcess[] = [];
  let home: string | undefined;

  afterEach(async () => {
    for (const s of servers.splice(0)) {
      try {
        s.proc.kill('SIGCONT');
      } catch {
        /* gone */
      }
      await s.dispose({ keepHome: true });
    }
    if (home) killAttempts(home);
    if (home) rmSync(home, { recursive: true, force: true });
    home = undefined;
  });

  function killAttempts(h: string): void {
    const jobs = path.join(h, 'jobs');
    if (!existsSync(jobs)) return;
    for (const j of readdirSync(jobs))
      for (const tk of readdirSync(path.join(jobs, j)))
        for (const at of readdirSync(path.join(jobs, j, tk))) {
          const hf = path.join(jobs, j, tk, at, 'handle.json');
          if (!existsSync(hf)) continue;
          try {
            process.kill(-JSON.parse(readFileSync(hf, 'utf8')).pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
  }

  async function startN(n: number, env: Record<string, string> = {}): Promise<ServerProcess[]> {
    const first = await t.start({ env: { ...ENV, ...env } });
    servers.push(first);
    home = first.home;
    const rest = await Promise.all(Array.from({ length: n - 1 }, () => t.start({ home: first.home, env: { ...ENV, ...env } })));
    servers.push(...rest);
    return [first, ...rest];
  }

  async function submit(s: ServerProcess, yaml: string): Promise<number> {
    const r = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: number }).id;
  }

  /** A two-task pipeline; each task appends "<job> <task>" to the marker; task 2 prints numbered lines around a gate. */
  function pipeline(marker: string, gate: string | null): string {
    const wait = gate ? `while [ ! -f ${gate} ]; do sleep 0.05; done\n  ` : '';
    return (
      `name: replica\n---\nname: one\nrun: echo "$JOBDECK_JOB_ID 0" >> ${marker}\n---\nname: two\nrun: |\n` +
      `  echo "$JOBDECK_JOB_ID 1" >> ${marker}\n  for i in 1 2 3 4 5; do echo "line $i"; done\n  ${wait}for i in 6 7 8 9 10; do echo "line $i"; done\n`
    );
  }

  const prisma = () => t.db!.prisma;
  const serverIds = async () => (await prisma().server.findMany({ orderBy: { startedAt: 'asc' } })).map((s) => s.id);
  const markerLines = (marker: string) => (existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').filter(Boolean) : []);

  async function allTask2Running(ids: number[]): Promise<void> {
    await waitFor(async () => (await prisma().attempt.count({ where: { jobId: { in: ids }, status: 'RUNNING', task: { index: 1 } } })) === ids.length, 'every task 2 running', 60_000);
  }

  async function allSucceeded(ids: number[], timeoutMs = 120_000): Promise<void> {
    await waitFor(async () => (await prisma().job.count({ where: { id: { in: ids }, status: 'SUCCEEDED' } })) === ids.length, 'every job SUCCEEDED', timeoutMs);
  }

  function expectEachTaskOnce(marker: string, ids: number[]): void {
    const lines = markerLines(marker).sort();
    const want = ids.flatMap((id) => [`${id} 0`, `${id} 1`]).sort();
    expect(lines).toEqual(want);
  }

  it(`three servers, ${PIPELINES} two-task pipelines round-robin: every task once, all SUCCEEDED, each job claimed once`, async () => {
    // The default lease: this test is about claims without takeovers, and with the file's short
    // lease a server that a loaded machine keeps from its heartbeat for a second is taken over,
    // as it should be (CI saw one job at epoch 2 with other tests running).
    const ss = await startN(3, { JOBDECK_LEASE_MS: '10000' });
    const marker = path.join(home!, 'marker');
    const ids: number[] = [];
    for (let i = 0; i < PIPELINES; i++) ids.push(await submit(ss[i % 3], pipeline(marker, null)));
    await allSucceeded(ids, 170_000);
    expectEachTaskOnce(marker, ids);
    const jobs = await prisma().job.findMany({ where: { id: { in: ids } }, select: { ownerId: true, leaseEpoch: true } });
    const live = new Set(await serverIds());
    // One owner each (one claim: epoch 1), no takeover, and the work spread over the servers.
    for (const j of jobs) expect(j).toMatchObject({ leaseEpoch: 1 });
    for (const j of jobs) expect(live.has(j.ownerId!)).toBe(true);
    expect(await prisma().jobEvent.count({ where: { jobId: { in: ids }, entity: 'server', to: 'TAKEN_OVER' } })).toBe(0);
    const per = new Map<string, number>();
    for (const j of jobs) per.set(j.ownerId!, (per.get(j.ownerId!) ?? 0) + 1);
    expect(per.size).toBeGreaterThanOrEqual(2);
    // Each server counts the jobs and attempts it ended itself, not the others' it heard of
    // through the relay: summed over the servers, each one once.
    const sample = (text: string, series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1] ?? 0);
    const scrapes = await Promise.all(ss.map(async (s) => (await s.api('/metrics')).text()));
    expect(scrapes.reduce((n, m) => n + sample(m, 'jobdeck_jobs_finished_total{status="SUCCEEDED"}'), 0)).toBe(PIPELINES);
    expect(scrapes.reduce((n, m) => n + sample(m, 'jobdeck_attempts_finished_total{outcome="SUCCEEDED"}'), 0)).toBe(2 * PIPELINES);
    // The operator view on any server lists all three.
    const mon = (await (await ss[1].api('/api/monitor')).json()) as { servers?: Array<{ id: string; jobsOwned: number }> };
    expect(mon.servers?.map((s) => s.id).sort()).toEqual([...live].sort());
    // `jobdeck servers` on another one: all three, itself marked.
    const cli = await runCli(ss[2], ['servers']);
    expect(cli.code).toBe(0);
    for (const id of live) expect(cli.stdout).toContain(id);
    expect(cli.stdout.match(/ \*/g)).toHaveLength(1);
    expect(cli.stdout).toContain('TAKEOVERS');
  });

  it('kill -9 of one server while its jobs run: a survivor adopts them once the lease ends, reattached (same pid), nothing run twice, every log line once', async () => {
    const ss = await startN(3);
    const marker = path.join(home!, 'marker');
    const gate = path.join(home!, 'gate');
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await submit(ss[i % 3], pipeline(marker, gate)));
    await allTask2Running(ids);
    const victim = ss[0];
    const victimId = (await serverIds())[0];
    const theirs = (await prisma().job.findMany({ where: { ownerId: victimId }, select: { id: true } })).map((j) => j.id);
    expect(theirs.length).toBeGreaterThan(0);
    const pids = new Map((await prisma().attempt.findMany({ where: { jobId: { in: theirs }, task: { index: 1 } } })).map((a) => [a.jobId, a.pid]));
    await victim.kill9();
    // The lease is 1.5 s; the limit is only there to end a test whose failover never happens.
    await waitFor(async () => (await prisma().job.count({ where: { id: { in: theirs }, ownerId: victimId } })) === 0, 'every job of the victim adopted', 60_000);
    for (const pid of pids.values()) expect(groupAlive(pid!)).toBe(true);
    appendFileSync(gate, '');
    await allSucceeded(ids);
    expectEachTaskOnce(marker, ids);
    const attempts = await prisma().attempt.findMany({ where: { jobId: { in: theirs } } });
    expect(attempts).toHaveLength(theirs.length * 2);
    for (const a of attempts.filter((x) => pids.has(x.jobId) && x.pid === pids.get(x.jobId))) expect(a.cause).toBe('first');
    for (const id of theirs) {
      const att = attempts.find((a) => a.jobId === id && a.pid === pids.get(id));
      expect(att, `job ${id}: task 2's attempt kept its pid`).toBeTruthy();
      const log = readFileSync(att!.logPath!, 'utf8');
      expect(log.trim().split('\n')).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`));
      const ev = await prisma().jobEvent.findMany({ where: { jobId: id, entity: 'server', to: 'TAKEN_OVER' } });
      expect(ev).toHaveLength(1);
      expect(ev[0].reason).toContain(`from ${victimId}`);
    }
    const survivors = ss.slice(1).map((s) => s.output()).join('\n');
    expect(survivors).toContain(`from ${victimId} (its lease expired)`);
  });

  it('SIGSTOP until its leases expire, then SIGCONT: the paused server writes nothing for the jobs taken over and logs that it lost them', async () => {
    const ss = await startN(2);
    const marker = path.join(home!, 'marker');
    const gate = path.join(home!, 'gate');
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(ss[i % 2], pipeline(marker, gate)));
    await allTask2Running(ids);
    const [pausedId] = await serverIds();
    const paused = ss[0];
    const theirs = (await prisma().job.findMany({ where: { ownerId: pausedId }, select: { id: true } })).map((j) => j.id);
    expect(theirs.length).toBeGreaterThan(0);
    paused.proc.kill('SIGSTOP');
    await waitFor(async () => (await prisma().job.count({ where: { id: { in: theirs }, ownerId: pausedId } })) === 0, 'the jobs taken over', 60_000);
    // The jobs end while it sleeps: their exits are what the paused server would write on waking.
    writeFileSync(gate, '');
    await allSucceeded(ids);
    const eventsBefore = await prisma().jobEvent.count({ where: { jobId: { in: theirs } } });
    const outBefore = paused.output().length;
    paused.proc.kill('SIGCONT');
    await waitFor(async () => /lost the lease of \d+ job/.test(paused.output().slice(outBefore)), 'the paused server to log its lost leases', 120_000);
    await new Promise((r) => setTimeout(r, 1500));
    // From the database: no row of its after the takeover — no new event, epoch and owner kept.
    expect(await prisma().jobEvent.count({ where: { jobId: { in: theirs } } })).toBe(eventsBefore);
    const after = await prisma().job.findMany({ where: { id: { in: theirs } } });
    for (const j of after) expect(j.ownerId).not.toBe(pausedId);
    expect(await prisma().job.count({ where: { id: { in: ids }, status: 'SUCCEEDED' } })).toBe(ids.length);
    // Its own log: no status write applied for those jobs after waking.
    const woke = paused.output().slice(outBefore);
    for (const id of theirs) expect(woke).not.toMatch(new RegExp(`"msg":"job ${id}[^"]*: [A-Z_]+ → `));
    expectEachTaskOnce(marker, ids);
  });

  it('a client on the server that does not own a job follows it live, and its cancel reaches the owner at once (NOTIFY; poll and reconcile backstops slowed to 60 s)', async () => {
    const slow = { JOBDECK_RECONCILE_MS: '60000', JOBDECK_WS_EVENT_POLL_MS: '60000' };
    const ss = await startN(2, slow);
    const marker = path.join(home!, 'marker');
    const gate = path.join(home!, 'gate');
    const id = await submit(ss[0], pipeline(marker, gate));
    const owner = await waitFor(async () => (await prisma().job.findUnique({ where: { id } }))?.ownerId ?? null, 'an owner');
    const ids = await serverIds();
    const other = ss[ids.indexOf(owner) === 0 ? 1 : 0];
    const c = await StreamClient.connect(`${other.url.replace(/^http/, 'ws')}/ws/jobs/${id}?follow=1`, undefined, { authorization: `Bearer ${other.token}` });
    await c.until(() => c.messages.some((m) => m.type === 'attempt' && m.phase === 'start' && m.task === 1), 120_000, "task 2's start on the other server's stream");
    const r = await other.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    expect(r.status).toBe(200);
    await c.until(() => c.messages.some((m) => m.type === 'end'), 120_000, 'the end of the job on the other server\'s stream');
    expect(c.messages.find((m) => m.type === 'end')).toMatchObject({ status: 'CANCELLED' });
    expect((await prisma().job.findUniqueOrThrow({ where: { id } })).status).toBe('CANCELLED');
    // Task 2 was stopped, never finished: its marker line is there, the line after the gate is not.
    expect(markerLines(marker).sort()).toEqual([`${id} 0`, `${id} 1`]);
  });

  // A new job is claimed only by the server that accepted it; a dependent whose wait is already
  // over must still start at once there: with the reconcile pass (and with it the dependency
  // sweep) slowed to 60 s, only the submit's own path can.
  it('a dependent submitted after what it waits for ended starts at once on either server', async () => {
    const ss = await startN(2, { JOBDECK_RECONCILE_MS: '60000' });
    const first = await submit(ss[0], 'name: first\nrun: echo first\n');
    await allSucceeded([first], 30_000);
    const ids: number[] = [];
    for (const s of ss) ids.push(await submit(s, `name: after-first\ndepends_on:\n  jobs: [${first}]\nrun: echo after\n`));
    await allSucceeded(ids, 30_000);
  });

  // The host's admission lock (docs/design.md "Replicas", capacity): without it both servers'
  // passes read the CPUs free at once and two jobs overlap.
  it('two servers with JOBDECK_CPUS=1 on one host never run two 1-CPU jobs at once', async () => {
    const ss = await startN(2, { JOBDECK_CPUS: '1' });
    const marker = path.join(home!, 'spans');
    const yaml = `name: one-cpu\nresources:\n  cpus: 1\nrun: |\n  echo "start $(date +%s%N) $JOBDECK_JOB_ID" >> ${marker}\n  sleep 0.2\n  echo "end $(date +%s%N) $JOBDECK_JOB_ID" >> ${marker}\n`;
    const ids: number[] = [];
    for (let i = 0; i < 16; i++) ids.push(await submit(ss[i % 2], yaml));
    await allSucceeded(ids);
    // The spans, in the order they were written: every start follows the previous job's end.
    const lines = markerLines(marker).map((l) => l.split(' '));
    expect(lines).toHaveLength(ids.length * 2);
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i][0]).toBe('start');
      expect(lines[i + 1]).toEqual(['end', expect.any(String), lines[i][2]]);
      if (i > 0) expect(BigInt(lines[i][1])).toBeGreaterThanOrEqual(BigInt(lines[i - 1][1]));
    }
    const owners = new Set((await prisma().job.findMany({ where: { id: { in: ids } }, select: { ownerId: true } })).map((j) => j.ownerId));
    expect(owners.size).toBe(2);
  });

  it('a second server on the same database with another data folder is refused, naming both', async () => {
    await startN(1);
    const other = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-other-home-'));
    try {
      const err = await t.start({ home: other, env: ENV }).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(err).toMatch(/exited with 1 before listening/);
      expect(err).toContain(other);
      expect(err).toContain(home!);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('SIGTERM of one server releases its leases: the other adopts its jobs (no takeover), and only the stopped server\'s jobs say STOPPED', async () => {
    const ss = await startN(2);
    const marker = path.join(home!, 'marker');
    const gate = path.join(home!, 'gate');
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(ss[i % 2], pipeline(marker, gate)));
    await allTask2Running(ids);
    const [stoppedId, keptId] = await serverIds();
    const theirs = (await prisma().job.findMany({ where: { ownerId: stoppedId }, select: { id: true } })).map((j) => j.id);
    const kept = ids.filter((id) => !theirs.includes(id));
    expect(theirs.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    await ss[0].stop();
    expect(ss[0].proc.exitCode).toBe(0);
    await waitFor(async () => (await prisma().job.count({ where: { id: { in: theirs }, ownerId: keptId } })) === theirs.length, 'the released jobs adopted', 120_000);
    writeFileSync(gate, '');
    await allSucceeded(ids);
    expectEachTaskOnce(marker, ids);
    const server = await prisma().jobEvent.findMany({ where: { jobId: { in: ids }, entity: 'server' } });
    expect(server.filter((e) => e.to === 'STOPPED').map((e) => e.jobId).sort()).toEqual([...theirs].sort());
    expect(server.filter((e) => e.to !== 'STOPPED')).toEqual([]);
    expect(await prisma().attempt.count({ where: { jobId: { in: ids } } })).toBe(ids.length * 2);
  });
});
