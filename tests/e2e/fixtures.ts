import { test as base, expect, type Locator, type Page } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/server';

/**
 * Shared pieces of the dashboard's browser tests: the server the global setup started, logging a
 * page in with the login URL (`/login?token=…`, lib/auth), submitting specs over the API, and a
 * guard that fails a test on any uncaught page error or console error (a 404 favicon, a failed
 * fetch, a React warning…), except the known-harmless ones in HARMLESS_CONSOLE.
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
export async function submitSpec(yaml: string, server = e2eServer(), extra: { name?: string; envs?: Record<string, string>; metadata?: Record<string, unknown>; origin?: string } = {}): Promise<number> {
  const res = await fetch(`${server.url}/api/jobs`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ yaml, ...extra }) });
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
export async function waitForStatus(id: number, statuses: string[], timeoutMs = 180_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await getJob(id);
    if (statuses.includes(status)) return status;
    if (Date.now() > end) throw new Error(`job ${id} still ${status} after ${timeoutMs} ms (wanted ${statuses.join('/')})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A gate a job's own loop looks at: `pace` is a shell snippet for the loop's body that sleeps
 * `seconds` while the gate is closed and nothing once it is open, so a job keeps printing at a
 * steady pace for as long as the test needs it running, then finishes its fixed number of lines
 * at once instead of the test waiting for the clock (docs/testing.md, "Time"). The file lives in
 * `home`, a server's data folder (removed with it); the jobs of the end-to-end servers run as this
 * machine's user (JOBDECK_ISOLATION=off), so they see it.
 */
export function jobGate(home: string, seconds: number): { pace: string; open(): void } {
  const file = path.join(home, `e2e-gate-${randomBytes(6).toString('hex')}`);
  return { pace: `[ -e ${file} ] || sleep ${seconds}`, open: () => writeFileSync(file, '') };
}

/** The data folder of this run's server (tests/e2e/global-setup.ts). */
export function e2eHome(): string {
  const home = process.env.JOBDECK_E2E_HOME;
  if (!home) throw new Error('JOBDECK_E2E_HOME missing: run through playwright.config.ts (globalSetup)');
  return home;
}

/** An example spec from examples/. */
export function example(name: string): string {
  return readFileSync(path.join(ROOT, 'examples', `${name}.yaml`), 'utf8');
}

/**
 * Waits until the log view shows a `<word> N` line with N ≥ `n` (default timeout: expect's). A
 * followed view renders only its tail, and on a busy machine a page may open when the log is long
 * past a given line: "reached line n" is the largest number shown, not line n itself. Answers
 * the largest number shown then.
 */
export async function expectShownPast(log: Locator, word: string, n: number, timeout?: number): Promise<number> {
  const shown = async () => Math.max(0, ...(await log.getByText(new RegExp(`^${word} \\d+$`)).allTextContents()).map((t) => Number(t.slice(word.length + 1))));
  await expect.poll(shown, { timeout }).toBeGreaterThanOrEqual(n);
  return shown();
}

/** Marks the document so a later check proves the page was never reloaded. */
export async function markNoReload(page: Page): Promise<void> {
  await page.evaluate(() => ((window as unknown as { __jdMark: number }).__jdMark = 42));
}
export async function expectNoReload(page: Page): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __jdMark?: number }).__jdMark)).toBe(42);
}

/**
 * Console errors that are not the page's fault: `text` (and, when given, the source `url`) of
 * each excused message, with a comment saying why. None so far — the whole suite runs without a
 * console error (a missing /favicon.ico was the last one); add an entry only with a reason.
 */
export const HARMLESS_CONSOLE: { text: RegExp; url?: RegExp }[] = [];

/** Collects uncaught page errors and console errors (minus HARMLESS_CONSOLE) of a page. */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${String(e)}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const url = m.location().url ?? '';
    if (HARMLESS_CONSOLE.some((h) => h.text.test(m.text()) && (!h.url || h.url.test(url)))) return;
    errors.push(`console.error: ${m.text()}${url ? ` (${url})` : ''}`);
  });
  return errors;
}

/**
 * `test` with a logged-in `app` page on the jobs list; fails the test on uncaught errors or
 * console errors in the page. The run's one admin session (tests/e2e/global-setup.ts) is put in
 * the page's context (like a storage state) instead of a login per test; tests of logging in
 * use `page` and login().
 */
export const test = base.extend<{ app: Page }>({
  app: async ({ page }, use) => {
    const errors = watchPageErrors(page);
    const server = e2eServer();
    const session = process.env.JOBDECK_E2E_SESSION;
    if (session) {
      const eq = session.indexOf('=');
      await page.context().addCookies([{ name: session.slice(0, eq), value: session.slice(eq + 1), url: server.url, httpOnly: true, sameSite: 'Strict' }]);
      await page.goto(`${server.url}/`);
      await expect(page).toHaveURL(`${server.url}/`);
    } else {
      await login(page, server);
    }
    await use(page);
    expect(errors, 'errors in the page (uncaught or console.error)').toEqual([]);
  },
});

export { expect };
