/**
 * One Slurm test suite at a time: vitest runs two files at once (vitest.config.ts maxWorkers),
 * and the suites that use the test clusters count on their CPUs — one fills every CPU to make
 * Slurm hold jobs (slurm-pending-reason), another measures a job's usage, another times gangs.
 * `useSlurmClusters()` at the top of a file takes a lock shared by every worker process (an
 * atomically created directory holding the owner's pid; a lock left by a dead process is taken
 * over) before its first test and gives it back after its last. See docs/testing.md.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

const LOCK = path.join(os.tmpdir(), 'jobdeck-test-slurm.lock');
/** How long a suite waits for the clusters (ms): the longest Slurm suite runs a few minutes. */
const WAIT_MS = 15 * 60_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryTake(): boolean {
  try {
    mkdirSync(LOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    let pid = NaN;
    try {
      pid = Number(readFileSync(path.join(LOCK, 'pid'), 'utf8'));
    } catch {
      return false; // being created right now: its owner writes the pid next
    }
    if (!Number.isInteger(pid) || alive(pid)) return false;
    rmSync(LOCK, { recursive: true, force: true }); // its owner died holding it
    return tryTake();
  }
  writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
  return true;
}

/**
 * Registers beforeAll/afterAll hooks that hold the Slurm clusters' lock for the whole file.
 * @throws (in beforeAll) when the lock is not free within WAIT_MS.
 */
export function useSlurmClusters(): void {
  let held = false;
  beforeAll(async () => {
    const end = Date.now() + WAIT_MS;
    while (!tryTake()) {
      if (Date.now() > end) throw new Error(`the Slurm test clusters stayed taken for ${WAIT_MS / 60_000} min (${LOCK})`);
      await new Promise((r) => setTimeout(r, 250));
    }
    held = true;
  }, WAIT_MS + 10_000);
  afterAll(() => {
    if (held) rmSync(LOCK, { recursive: true, force: true });
  });
}
