import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, startServerProcess } from '../helpers/server';

/**
 * Playwright global setup: builds the Next.js app when JOBDECK_NEXT_DIST (default `.next`) has
 * no build or the sources changed since it was made (scripts/build-if-stale.mjs), starts ONE
 * real jobdeck server for the run (fresh JOBDECK_HOME, known token, capacity check off so
 * parallel test jobs never queue, a short cancel grace) and hands its address to the tests as
 * JOBDECK_E2E_URL / JOBDECK_E2E_TOKEN / JOBDECK_E2E_HOME. Returns the teardown.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-stale.mjs')], { cwd: ROOT, stdio: 'inherit', env: { NEXT_TELEMETRY_DISABLED: '1', ...process.env } });
  const server = await startServerProcess({ env: E2E_SERVER_ENV });
  process.env.JOBDECK_E2E_URL = server.url;
  process.env.JOBDECK_E2E_TOKEN = server.token;
  process.env.JOBDECK_E2E_HOME = server.home;
  process.env.JOBDECK_E2E_SESSION = await adminSession(server.url, server.token);
  return async () => {
    await server.dispose();
  };
}

/**
 * One admin login for the whole run (`name=value` of the session cookie): the `app` fixture
 * (tests/e2e/fixtures.ts) puts it in each test's browser context instead of logging in again.
 * @throws when the login is refused.
 */
async function adminSession(url: string, token: string): Promise<string> {
  const res = await fetch(new URL('/api/auth/login', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  if (!res.ok || !cookie) throw new Error(`admin login for the browser tests failed: ${res.status} ${await res.text()}`);
  return cookie;
}

/** Server settings for browser tests (also used by tests that start a second server). */
export const E2E_SERVER_ENV: Record<string, string> = {
  JOBDECK_CAPACITY_CHECK: '0',
  JOBDECK_CANCEL_GRACE_MS: '2000',
  JOBDECK_RECONCILE_MS: '250',
  // The webhook tests' receiver listens on 127.0.0.1.
  JOBDECK_WEBHOOK_ALLOW_PRIVATE: '1',
  // Resource usage sampled often enough for short test jobs to have a series.
  JOBDECK_USAGE_INTERVAL_MS: '250',
};
