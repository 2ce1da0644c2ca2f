/**
 * Everything a bench run creates (server processes, temp folders, databases) registers its own
 * undo here; run.ts calls runCleanups() at the end, after an error, and on SIGINT/SIGTERM, so
 * the bench leaves nothing behind whatever happens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { killProcessesUnder } from './proc';

type Cleanup = { label: string; fn: () => Promise<void> | void };
const cleanups: Cleanup[] = [];

/** Registers an undo step; returns a function that runs it now (once) and unregisters it. */
export function onCleanup(label: string, fn: () => Promise<void> | void): () => Promise<void> {
  const entry: Cleanup = { label, fn };
  cleanups.push(entry);
  return async () => {
    const i = cleanups.indexOf(entry);
    if (i < 0) return;
    cleanups.splice(i, 1);
    await entry.fn();
  };
}

/**
 * A fresh temp folder (`/tmp/jobdeck-bench-<label>-XXXX`). At cleanup, processes still running
 * under it (attempts a server left) are killed, then it is removed.
 */
export function tempDir(label: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `jobdeck-bench-${label}-`));
  onCleanup(`remove ${dir}`, () => {
    const n = killProcessesUnder(dir);
    if (n > 0) console.error(`bench cleanup: killed ${n} leftover process(es) under ${dir}`);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** A position in the undo list: runCleanups(mark) undoes only what was registered after it. */
export function cleanupMark(): number {
  return cleanups.length;
}

/**
 * Runs the undo steps registered after `mark` (default: all), newest first; errors are
 * printed, never thrown.
 */
export async function runCleanups(mark = 0): Promise<void> {
  while (cleanups.length > mark) {
    const c = cleanups.pop()!;
    try {
      await c.fn();
    } catch (err) {
      console.error(`bench cleanup "${c.label}" failed: ${(err as Error).message}`);
    }
  }
}
