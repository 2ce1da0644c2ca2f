/**
 * Login and browser-side defences in Chromium, against a real server started WITHOUT
 * JOBDECK_TOKEN (so it generates a token and prints a login URL, as on a first start):
 * - an anonymous visitor lands on /login; a wrong token is refused with a visible error;
 * - the printed URL logs in; the session cookie is HttpOnly + SameSite=Strict and invisible to
 *   scripts; logout ends the session;
 * - the form logs in and returns to the page asked for;
 * - a page on another origin (same site: 127.0.0.1, another port — so the cookie IS sent) can
 *   neither submit a job nor open a WebSocket with the victim's session;
 * - a job printing an XSS payload renders as text.
 *
 * Needs a built app (`JOBDECK_NEXT_DIST=.next-security npx next build`) and Debian's Chromium.
 * Run: `JOBDECK_NEXT_DIST=.next-security npx playwright test tests/e2e/login.spec.ts` (starts
 * its own server; the launch options are repeated here so it also runs without the config).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';

test.use({
  launchOptions: {
    executablePath: process.env.JOBDECK_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  },
});
test.describe.configure({ mode: 'serial', timeout: 120_000 });

let server: ServerProcess;
let loginUrl: string;
let token: string;
let attacker: http.Server;
let attackerUrl: string;

const TERMINAL = new Set(['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);

async function jobCount(): Promise<number> {
  const res = await fetch(`${server.url}/api/jobs?limit=200`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { jobs: unknown[] }).jobs.length;
}

test.beforeAll(async () => {
  // Its own server, without JOBDECK_TOKEN: a first start that generates the token.
  server = await startServerProcess({ env: { ...E2E_SERVER_ENV, JOBDECK_TOKEN: '' } });
  const m = /to log in, open (http:\/\/127\.0\.0\.1:\d+\/login\?token=[^\s"]+)/.exec(server.output());
  if (!m) throw new Error(`no login URL printed:\n${server.output()}`);
  loginUrl = m[1];
  token = new URL(loginUrl).searchParams.get('token')!;

  // A hostile site on the same host, another port: same SITE as jobdeck (so even a
  // SameSite=Strict cookie is sent), different ORIGIN. /form auto-submits a job with a plain
  // HTML form (a CSRF: no preflight, text/plain body that parses as job YAML); /ws opens a
  // cross-site WebSocket with whatever cookie the browser attaches.
  attacker = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    if (req.url === '/form') {
      res.end(`<!doctype html><title>evil form</title>
        <form id="f" method="post" action="${server.url}/api/jobs" enctype="text/plain">
          <input type="hidden" name="run: echo pwned-by-csrf" value="1"></form>
        <script>document.getElementById('f').submit()</script>`);
      return;
    }
    res.end(`<!doctype html><title>evil ws</title><script>
      window.results = {};
      const ws = new WebSocket(${JSON.stringify(server.url.replace(/^http/, 'ws'))} + '/ws/jobs');
      ws.onopen = () => (window.results.ws = 'open');
      ws.onerror = () => (window.results.ws = 'refused');
    </script>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  await new Promise((resolve) => attacker?.close(resolve));
  await server?.dispose();
});

test('an anonymous visitor is sent to the login page, and a wrong token is refused', async ({ page }) => {
  await page.goto(`${server.url}/jobs`);
  await expect(page).toHaveURL(`${server.url}/login?next=%2Fjobs`);
  await expect(page.getByRole('heading', { name: 'Log in to jobdeck' })).toBeVisible();
  // No single sign-on configured on this server: no "Sign in with …" button.
  await expect(page.getByTestId('sso-login')).toHaveCount(0);
  // No user has a password here: the admin token leads, and the page says where it is.
  await expect(page.getByTestId('login-token')).toBeFocused();
  await expect(page.getByTestId('login-token')).toHaveAttribute('placeholder', 'jd_…');
  await expect(page.getByTestId('password-login')).toHaveCount(0);
  await page.getByTestId('login-token').fill('jd_not_the_right_token_0123456789');
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('login-error')).toContainText('not valid');
  await expect(page).toHaveURL(/\/login\?next=%2Fjobs$/);
  expect((await page.context().cookies()).filter((c) => c.name.startsWith('jobdeck_session_'))).toEqual([]);
});

test('the printed login URL logs in with an HttpOnly, SameSite=Strict cookie; logout ends the session', async ({ page }) => {
  await page.goto(loginUrl);
  await expect(page).toHaveURL(`${server.url}/`);
  const cookie = (await page.context().cookies()).find((c) => c.name.startsWith('jobdeck_session_'));
  expect(cookie).toBeTruthy();
  expect(cookie!.httpOnly).toBe(true);
  expect(cookie!.sameSite).toBe('Strict');
  expect(cookie!.path).toBe('/');
  expect(await page.evaluate(() => document.cookie)).not.toContain('jobdeck_session_');

  // The dashboard's own same-origin requests work with the cookie.
  const status = await page.evaluate(async () => (await fetch('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'true' }) })).status);
  expect(status).toBe(201);

  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto(`${server.url}/jobs`);
  await expect(page).toHaveURL(/\/login\?next=%2Fjobs$/);
  // The old cookie value is dead server-side, even if replayed.
  const replay = await fetch(`${server.url}/api/jobs`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
  expect(replay.status).toBe(401);
});

test('the login form logs in and returns to the page asked for', async ({ page }) => {
  await page.goto(`${server.url}/jobs/new`);
  await expect(page).toHaveURL(`${server.url}/login?next=%2Fjobs%2Fnew`);
  await page.getByTestId('login-token').fill(token);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(`${server.url}/jobs/new`);
});

test('a page on another origin cannot submit a job or open a WebSocket with the session', async ({ page }) => {
  await page.goto(loginUrl);
  await expect(page).toHaveURL(`${server.url}/`);
  const before = await jobCount();

  // The CSRF form post reaches jobdeck WITH the cookie and is refused by the Origin check.
  await page.goto(`${attackerUrl}form`);
  await expect(page).toHaveURL(`${server.url}/api/jobs`);
  await expect(page.locator('body')).toContainText('cross-origin request refused');
  await expect(page.locator('body')).toContainText('"status":403');

  await page.goto(`${attackerUrl}ws`);
  await expect.poll(() => page.evaluate(() => (window as unknown as { results: Record<string, string> }).results)).toEqual({ ws: 'refused' });
  expect(server.output()).toMatch(/WebSocket upgrade refused: cross-origin request refused/);

  expect(await jobCount()).toBe(before);
  // The session itself still works from jobdeck's own pages.
  await page.goto(`${server.url}/jobs/new`);
  await expect(page).toHaveURL(`${server.url}/jobs/new`);
});

test('a job printing an XSS payload renders as text', async ({ page }) => {
  const payload = ['<img src=x onerror="window.__xss=1">', '<script>window.__xss=2</script>', '<b>bold?</b>'];
  const run = `printf '%s\\n' ${payload.map((p) => `'${p}'`).join(' ')}`;
  const submit = await fetch(`${server.url}/api/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'xss', cmd: run }),
  });
  expect(submit.status).toBe(201);
  const { id } = (await submit.json()) as { id: number };
  await expect
    .poll(async () => TERMINAL.has(((await (await fetch(`${server.url}/api/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { status: string }).status), { timeout: 120_000 })
    .toBe(true);

  await page.goto(loginUrl);
  await page.goto(`${server.url}/jobs/${id}`);
  const log = page.getByTestId('log-scroller');
  for (const p of payload) await expect(log).toContainText(p);
  expect(await log.locator('img, script, b').count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
});
