import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startServerProcess } from '../helpers/server';

/**
 * Playwright global setup: builds the Next.js app when JOBDECK_NEXT_DIST (default `.next`) has
 * no build, starts ONE real jobdeck server for the run (fresh JOBDECK_HOME, known token, capacity
 * check off so parallel test jobs never queue, a short cancel grace) and hands its address to
 * the tests as JOBDECK_E2E_URL / JOBDECK_E2E_TOKEN / JOBDECK_E2E_HOME. Returns the teardown.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const dist = process.env.JOBDECK_NEXT_DIST || '.next';
  if (!existsSync(path.join(ROOT, dist, 'BUILD_ID'))) {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], { cwd: ROOT, stdio: 'inherit' });
  }
  const server = await startServerProcess({ env: E2E_SERVER_ENV, timeoutMs: 120_000 });
  process.env.JOBDECK_E2E_URL = server.url;
  process.env.JOBDECK_E2E_TOKEN = server.token;
  process.env.JOBDECK_E2E_HOME = server.home;
  return async () => {
    await server.dispose();
  };
}

/** Server settings for browser tests (also used by tests that start a second server). */
export const E2E_SERVER_ENV: Record<string, string> = {
  JOBDECK_CAPACITY_CHECK: '0',
  JOBDECK_CANCEL_GRACE_MS: '2000',
  JOBDECK_RECONCILE_MS: '250',
  // Resource usage sampled often enough for short test jobs to have a series.
  JOBDECK_USAGE_INTERVAL_MS: '250',
};
