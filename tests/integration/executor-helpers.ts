import path from 'node:path';
import type { Executor, AttemptHandle, LaunchRequest, ProbeResult } from '../../lib/executors/types';

/** Waits (no fixed sleep) for the attempt's end as `ex.watch()` reports it; rejects after `limitMs`. */
export function ended(ex: Executor, h: AttemptHandle, limitMs = 30_000): Promise<Exclude<ProbeResult, { state: 'running' }>> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`attempt ${h.ref} did not end within ${limitMs} ms`)), limitMs);
    ex.watch(h, (r) => {
      clearTimeout(t);
      resolve(r);
    });
  });
}

/** Polls `cond` every 20 ms until it holds; throws naming `what` after `limitMs`. */
export async function waitFor(what: string, cond: () => boolean, limitMs = 30_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A launch request of a test attempt in its own folder `dir` (attempt folder `dir/attempt`, log
 * `dir/logs/attempt.log`): job 7, task 1, attempt 2, 1 CPU, nothing to run unless `over` says so.
 */
export function testLaunchRequest(dir: string, over: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    jobId: 7,
    taskIndex: 1,
    attempt: 2,
    setup: null,
    run: null,
    envs: {},
    workdir: null,
    cpus: 1,
    attemptDir: path.join(dir, 'attempt'),
    logPath: path.join(dir, 'logs', 'attempt.log'),
    ...over,
  };
}
