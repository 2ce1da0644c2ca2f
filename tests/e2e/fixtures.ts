import { test as base, expect, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/server';

/**
 * Shared pieces of the dashboard's browser tests: the server the global setup started, logging a
 * page in with the login URL (`/login?token=…`, lib/auth), submitting specs over the API, and a
 * guard that fails a test on any uncaught page error.
 */

/** The server of this run (tests/e2e/global-setup.ts). */
export function e2eServer(): { url: string; token: string } {
  const url = process.env.JOBDECK_E2E_URL;
  const token = process.env.JOBDECK_E2E_TOKEN;
  if (!url || !token) throw new Error('JOBDECK_E2E_URL/JOBDECK_E2E_TOKEN missing: run through playwright.config.ts (globalSetup)');
  return { url, token };
}

/** Logs the page's browser context in with the login URL; lands on the jobs list. */
export async function login(page: Page, server = e2eServer()): Promise<void> {
  await page.goto(`${server.url}/login?token=${encodeURIComponent(server.token)}`);
  await expect(page).toHaveURL(`${server.url}/`);
}

/** POST /api/jobs with the token; returns the new job id. */
export async function submitSpec(yaml: string, server = e2eServer()): Promise<number> {
  const res = await fetch(`${server.url}/api/jobs`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ yaml }) });
  const body = (await res.json()) as { id?: number; detail?: string };
  if (!res.ok || typeof body.id !== 'number') throw new Error(`submit failed: ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

/** GET /api/jobs/:id (status etc.). */
export async function getJob(id: number, server = e2eServer()): Promise<{ status: string; tasks: { status: string; attemptList: { status: string; exitCode: number | null }[] }[] }> {
  const res = await fetch(`${server.url}/api/jobs/${id}`, { headers: { authorization: `Bearer ${server.token}` } });
  if (!res.ok) throw new Error(`GET job ${id}: ${res.status}`);
  return res.json() as never;
}

/** Waits (polling the API — test side only) until the job is in one of `statuses`. */
export async function waitForStatus(id: number, statuses: string[], timeoutMs = 60_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await getJob(id);
    if (statuses.includes(status)) return status;
    if (Date.now() > end) throw new Error(`job ${id} still ${status} after ${timeoutMs} ms (wanted ${statuses.join('/')})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An example spec from examples/. */
export function example(name: string): string {
  return readFileSync(path.join(ROOT, 'examples', `${name}.yaml`), 'utf8');
}

/** Marks the document so a later check proves the page was never reloaded. */
export async function markNoReload(page: Page): Promise<void> {
  await page.evaluate(() => ((window as unknown as { __jdMark: number }).__jdMark = 42));
}
export async function expectNoReload(page: Page): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __jdMark?: number }).__jdMark)).toBe(42);
}

/** `test` with a logged-in `app` page; fails the test on uncaught errors in the page. */
export const test = base.extend<{ app: Page }>({
  app: async ({ page }, use) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await login(page);
    await use(page);
    expect(errors, 'uncaught errors in the page').toEqual([]);
  },
});

export { expect };
