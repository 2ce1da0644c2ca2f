/**
 * Helpers shared by the monitor-* and recovery-* suites: submit a YAML job, run a monitor
 * in-process against a real database and the real local executor, wait for a state, and read
 * the story a job's JobEvents tell.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createLocalExecutor } from '../../lib/executors/local/executor';
import { liveMembers } from '../../lib/executors/local/proc';
import { stopCgroup } from '../../lib/executors/local/cgroup-stop';
import type { AttemptHandle, Executor } from '../../lib/executors/types';
import { submitJobSpec } from '../../lib/control/submit';
import { createMonitor, type Monitor, type MonitorOptions } from '../../lib/monitor/monitor';
import { storeOf } from '../helpers/store';

export const ROOT = path.resolve(__dirname, '..', '..');

/** An example from examples/ (the spec teammate's files), as text. */
export function example(name: string): string {
  return readFileSync(path.join(ROOT, 'examples', `${name}.yaml`), 'utf8');
}

/** Submits YAML through the real submit path (spec validation included); returns the job id. */
export async function submit(db: PrismaClient, yaml: string): Promise<number> {
  const r = await submitJobSpec(storeOf(db), { source: { kind: 'yaml', text: yaml } });
  return r.result.id;
}

/**
 * Polls `fn` until it returns a truthy value — after 10 ms, then each wait half again as long, at
 * most 100 ms apart; throws with `what` after `timeoutMs` (a hang guard, default 120 s: a machine
 * whose cores are all busy is slow, not wrong). Not a fixed 25 ms: every poll is a database read
 * or a request, on the same cores (and, on PGlite in this process, the same thread) as what it
 * waits for — with four files waiting side by side the polls alone kept part of a core busy.
 */
export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  let pause = 10;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(100, Math.round(pause * 1.5));
  }
}

/** The job with its tasks (by index) and all their attempts (by number). */
export function jobTree(db: PrismaClient, id: number) {
  return db.job.findUnique({
    where: { id },
    include: { tasks: { orderBy: { index: 'asc' }, include: { attempts: { orderBy: { number: 'asc' } } } } },
  });
}

const TERMINAL = ['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'];

/** Waits until the job is terminal; returns its tree. */
export async function waitTerminal(db: PrismaClient, id: number, timeoutMs = 120_000) {
  return waitFor(async () => {
    const j = await jobTree(db, id);
    return j && TERMINAL.includes(j.status) ? j : null;
  }, `job ${id} to end`, timeoutMs);
}

/** Waits until the job has status `status`. */
export async function waitStatus(db: PrismaClient, id: number, status: string, timeoutMs = 120_000) {
  return waitFor(async () => {
    const j = await jobTree(db, id);
    return j && j.status === status ? j : null;
  }, `job ${id} to be ${status}`, timeoutMs);
}

/** The JobEvents as compact lines: "job PENDING>STARTING", "task0 RUNNING>FAILED", "t0a2 >STARTING". */
export async function story(db: PrismaClient, id: number): Promise<string[]> {
  const evs = await db.jobEvent.findMany({ where: { jobId: id }, orderBy: { id: 'asc' } });
  return evs.map((e) => {
    const who = e.entity === 'job' ? 'job' : e.entity === 'task' ? `t${e.taskIndex}` : `t${e.taskIndex}a${e.attemptNumber}`;
    return `${who} ${e.from ?? ''}>${e.to}`;
  });
}

/** A temporary data folder (attempt folders), removed by cleanup(). */
export function tempHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'jobdeck-monitor-'));
}

/**
 * True while any live process (not a zombie: a killed child of this test process stays a zombie
 * until Node reaps it) of the attempt's process group / session `pgid` exists (/proc scan).
 */
export function groupAlive(pgid: number): boolean {
  return liveMembers(pgid, 0).length > 0;
}

/** Test fixture: monitors and homes to clean up, process groups to kill if a test left them. */
export class Fixture {
  monitors: Monitor[] = [];
  homes: string[] = [];
  home = tempHome();
  executor = createLocalExecutor({ cpus: 4, pollMs: 200 });
  constructor() {
    this.homes.push(this.home);
  }

  /** A monitor on `db` (and its store: storeOf(db)) with the real local executor and fast settings (overridable). */
  monitor(db: PrismaClient, opts: Partial<MonitorOptions> = {}): Monitor {
    const m = createMonitor({
      store: storeOf(db),
      db,
      executor: this.executor,
      home: this.home,
      reconcileMs: 100,
      lostConfirmMs: 100,
      launchGraceMs: 1000,
      recoveryBackoffMs: 50,
      // Restarts at once unless a test asks for a backoff (monitor-restart-backoff.test.ts).
      restartBackoffMs: 0,
      cancelGraceMs: 2000,
      ...opts,
    });
    this.monitors.push(m);
    return m;
  }

  /** Stops every monitor, kills any process group of an attempt still alive, removes the homes. */
  async cleanup(db?: PrismaClient): Promise<void> {
    for (const m of this.monitors) await m.stop().catch(() => undefined);
    if (db) {
      const open = await db.attempt.findMany({ where: { pid: { not: null } }, select: { pid: true, logPath: true } }).catch(() => []);
      for (const a of open) {
        try {
          if (a.pid) process.kill(-a.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      // The killed attempts' control groups (a reap would have removed them).
      for (const a of open) if (a.logPath) await stopCgroup(path.dirname(a.logPath), 0);
    }
    // A killed group's last writes can land while the folder is removed (ENOTEMPTY): node tries
    // again; a folder still not empty after that is left in the OS temp folder, said on stderr,
    // and does not fail the test that used it (the test's own assertions ran before).
    for (const h of this.homes) {
      try {
        rmSync(h, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch (err) {
        console.warn(`monitor fixture: could not remove ${h}: ${(err as Error).message}`);
      }
    }
  }
}

/** An executor that delegates to `inner`, with overrides for some calls (probe faults…). */
export function wrapExecutor(inner: Executor, over: Partial<Executor>): Executor {
  return {
    name: inner.name,
    launch: over.launch ?? ((r) => inner.launch(r)),
    probe: over.probe ?? ((h) => inner.probe(h)),
    watch: over.watch ?? ((h, l) => inner.watch(h, l)),
    cancel: over.cancel ?? ((h, o) => inner.cancel(h, o)),
    capacity: over.capacity ?? (() => inner.capacity()),
    findHandle: over.findHandle ?? inner.findHandle,
    ...(over.held || inner.held ? { held: over.held ?? ((refs: readonly string[]) => inner.held!(refs)) } : {}),
    ...(over.nodes || inner.nodes ? { nodes: over.nodes ?? ((h: AttemptHandle) => inner.nodes!(h)) } : {}),
  };
}
