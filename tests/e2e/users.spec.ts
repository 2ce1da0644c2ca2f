import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { e2eServer, expect, login, test, watchPageErrors } from './fixtures';

/**
 * The Users and Audit pages (Chromium, the run's server): an admin creates a member with a
 * password and a pending quota on the Users page (the API's refusals show under the field they
 * name), changes its role to viewer and back and its CPU and GPU quotas, disables it — its password login
 * then fails — and enables it again; the member, logged in, has no Users link and is refused
 * /users. The Audit page filters by action, acting user and time range (kept in the URL), shows
 * exactly the matching rows with who, token prefix and address, and pages with `before`. Both
 * pages stay within a 390 px phone screen.
 */
test.describe.configure({ mode: 'serial' });

const SHOTS = path.join('test-results', 'screenshots');
const PASSWORD = 'correct-horse-1';
/** Rows per Audit page (lib/ui/audit-url.ts AUDIT_PAGE_SIZE). */
const PAGE = 50;

const admin = (p: string, init: RequestInit = {}) => {
  const { url, token } = e2eServer();
  return fetch(`${url}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
};

interface ApiUser {
  id: number;
  name: string;
  role: string;
  hasPassword: boolean;
  maxPendingJobs: number | null;
  maxRunningCpus: number | null;
  maxRunningGpus: number | null;
  disabled: boolean;
}
const apiUser = async (name: string): Promise<ApiUser | undefined> => ((await (await admin('/api/users')).json()) as { users: ApiUser[] }).users.find((u) => u.name === name);

/** Logs `name` in with its password in a fresh browser context; returns the page and whether it got in. */
async function passwordLogin(browser: Browser, name: string): Promise<{ page: Page; ok: boolean; close: () => Promise<void> }> {
  const { url } = e2eServer();
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  // Users have passwords here: the page leads with the password form.
  await page.getByTestId('login-username').fill(name);
  await page.getByTestId('login-password').fill(PASSWORD);
  const [res] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/api/auth/login'), page.getByTestId('password-login-submit').click()]);
  const ok = res.status() === 200;
  if (ok) await page.waitForURL(`${url}/`);
  return { page, ok, close: () => context.close() };
}

/** Console errors other than the failed requests a test provokes on purpose (the API's 4xx answers). */
const unexpected = (errors: string[]) => errors.filter((e) => !/^console\.error: Failed to load resource: the server responded with a status of (400|409)\b/.test(e));

const name = `mia-${Date.now().toString(36)}`;
/** Just before this spec's first audited action. */
const t0 = new Date(Date.now() - 1000).toISOString();
let id = 0;

test('an admin creates a member, changes its role and quotas, disables and enables it; the member is refused /users', async ({ page, browser }) => {
  const { url } = e2eServer();
  const errors = watchPageErrors(page);
  await login(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await expect(page).toHaveURL(`${url}/users`);
  const row = (n: string) => page.locator(`tr[data-user="${n}"]`);
  await expect(row('admin')).toContainText('first admin');
  await expect(row('admin').getByTestId('user-row-role')).toHaveText('admin');

  // The API's refusals, each under its field: the name rule and the password length in one answer.
  await page.getByTestId('user-name').fill('Not A Name');
  await page.getByTestId('user-password').fill('short');
  await page.getByTestId('user-save').click();
  await expect(page.getByTestId('user-name-error')).toContainText('must be lower-case letters');
  await expect(page.getByTestId('user-password-error')).toContainText('must be at least');
  await expect(page.getByTestId('user-name')).toHaveAttribute('aria-invalid', 'true');

  await page.getByTestId('user-name').fill(name);
  await page.getByTestId('user-password').fill(PASSWORD);
  await page.getByTestId('user-maxPendingJobs').fill('2');
  await page.getByTestId('user-save').click();
  await expect(page.getByTestId('user-notice')).toHaveText(`User ${name} created.`);
  await expect(page.getByTestId('user-name-error')).toHaveCount(0);
  await expect(row(name).getByTestId('user-row-role')).toHaveText('member');
  await expect(row(name).getByTestId('user-row-status')).toHaveText('enabled');
  await expect(row(name).getByTestId('user-row-login')).toHaveText('password');
  await expect(row(name).getByTestId('user-row-max-pending')).toHaveText('2');
  await expect(row(name).getByTestId('user-row-max-cpus')).toHaveText('—');
  const made = await apiUser(name);
  expect(made).toMatchObject({ role: 'member', hasPassword: true, maxPendingJobs: 2, maxRunningCpus: null, disabled: false });
  id = made!.id;

  // The name is taken now: the 409 shows under the name.
  await page.getByTestId('user-name').fill(name);
  await page.getByTestId('user-save').click();
  await expect(page.getByTestId('user-name-error')).toHaveText(`user ${name} exists`);

  // Viewer with a CPU and a GPU quota, then member again with both cleared.
  await row(name).getByRole('button', { name: `Edit user ${name}` }).click();
  await expect(page.getByRole('form', { name: `Edit user ${name}` })).toBeVisible();
  await expect(page.getByTestId('user-name')).toHaveValue(name);
  await page.getByTestId('user-role').selectOption('viewer');
  await page.getByTestId('user-maxRunningCpus').fill('1.5');
  await page.getByTestId('user-maxRunningGpus').fill('2');
  await page.getByTestId('user-save').click();
  await expect(page.getByTestId('user-notice')).toHaveText(`User ${name} changed.`);
  await expect(row(name).getByTestId('user-row-role')).toHaveText('viewer');
  await expect(row(name).getByTestId('user-row-max-cpus')).toHaveText('1.5');
  await expect(row(name).getByTestId('user-row-max-gpus')).toHaveText('2');
  expect(await apiUser(name)).toMatchObject({ role: 'viewer', maxPendingJobs: 2, maxRunningCpus: 1.5, maxRunningGpus: 2 });
  await row(name).getByRole('button', { name: `Edit user ${name}` }).click();
  await page.getByTestId('user-role').selectOption('member');
  await page.getByTestId('user-maxRunningCpus').fill('');
  await page.getByTestId('user-maxRunningGpus').fill('');
  await page.getByTestId('user-save').click();
  await expect(row(name).getByTestId('user-row-role')).toHaveText('member');
  await expect(row(name).getByTestId('user-row-max-cpus')).toHaveText('—');
  await expect(row(name).getByTestId('user-row-max-gpus')).toHaveText('—');
  expect(await apiUser(name)).toMatchObject({ role: 'member', maxPendingJobs: 2, maxRunningCpus: null, maxRunningGpus: null });

  // Disabled (asked once more): its password no longer logs in.
  await row(name).getByRole('button', { name: `Disable user ${name}` }).click();
  await row(name).getByRole('button', { name: 'Confirm disable?' }).click();
  await expect(row(name).getByTestId('user-row-status')).toHaveText('disabled');
  expect((await apiUser(name))?.disabled).toBe(true);
  const refused = await passwordLogin(browser, name);
  expect(refused.ok).toBe(false);
  await expect(refused.page.getByTestId('password-login-error')).toHaveText('That user name or password is not valid.');
  await refused.close();

  // Enabled: it logs in, sees no Users link and is refused the page.
  await row(name).getByRole('button', { name: `Enable user ${name}` }).click();
  await expect(row(name).getByTestId('user-row-status')).toHaveText('enabled');
  const member = await passwordLogin(browser, name);
  expect(member.ok).toBe(true);
  await expect(member.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tokens' })).toBeVisible();
  await member.page.goto(`${url}/tokens`);
  await expect(member.page.getByTestId('whoami')).toContainText(`${name} (member)`);
  await expect(member.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' })).toHaveCount(0);
  await member.page.goto(`${url}/users`);
  await expect(member.page.getByTestId('not-allowed')).toContainText(`You are signed in as ${name} (member), and the Users page is not open to that role.`);
  await expect(member.page.getByTestId('users-table')).toHaveCount(0);
  await member.close();
  expect(unexpected(errors)).toEqual([]);
});

test('the Audit page filters by action, user and time, in the URL, and pages with before', async ({ page }) => {
  const { url, token } = e2eServer();
  expect(id).toBeGreaterThan(1);
  const errors = watchPageErrors(page);
  await login(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
  await expect(page).toHaveURL(`${url}/audit`);
  const rows = page.getByTestId('audit').locator('tbody tr[data-audit-id]');

  // By action, from the select: exactly the user.create rows, ours among them.
  await page.getByTestId('audit-action').selectOption('user.create');
  await expect(page).toHaveURL(`${url}/audit?action=user.create`);
  await expect(rows.filter({ hasText: `user:${id}` })).toHaveCount(1);
  const actions = await rows.getByTestId('audit-row-action').allTextContents();
  expect(actions.length).toBeGreaterThan(0);
  expect(new Set(actions)).toEqual(new Set(['user.create']));
  // Until a minute before this spec began: ours is not there; from then on: it is, and only this spec's.
  const local = (iso: string) => {
    const d = new Date(iso);
    const p = (n: number) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
  };
  await page.getByTestId('audit-until').fill(local(new Date(Date.parse(t0) - 60_000).toISOString()));
  await expect(page).toHaveURL(/[?&]until=/);
  await expect(rows.filter({ hasText: `user:${id}` })).toHaveCount(0);
  await expect(page.locator('.alert-error')).toHaveCount(0);
  await page.getByTestId('audit-clear').click();
  await expect(page).toHaveURL(`${url}/audit`);

  // The URL is the view: exactly this spec's user.update rows (two edits, disable, enable), by the admin's token.
  await page.goto(`${url}/audit?action=user.update&since=${encodeURIComponent(t0)}`);
  await expect(rows).toHaveCount(4);
  expect(new Set(await rows.getByTestId('audit-row-target').allTextContents())).toEqual(new Set([`user:${id}`]));
  await expect(rows.first()).toContainText('disabled=false');
  await expect(page.getByTestId('audit-action')).toHaveValue('user.update');

  // By user: the member's own login, by password, from an address, with no token.
  await page.goto(`${url}/audit?since=${encodeURIComponent(t0)}`);
  await page.getByTestId('audit-user').selectOption({ label: name });
  await expect(page).toHaveURL(new RegExp(`[?&]user=${id}(&|$)`));
  await expect(rows).toHaveCount(1);
  await expect(rows.getByTestId('audit-row-action')).toHaveText('login');
  await expect(rows.getByTestId('audit-row-user')).toHaveText(`${name} #${id}`);
  await expect(rows).toContainText('via=password');
  await expect(rows.locator('td').nth(4)).toHaveText(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);

  // Paging: more user.update rows than a page; Older shows the rest (all older), Newer goes back.
  for (let i = 0; i < PAGE; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, k) => admin(`/api/users/${id}`, { method: 'PATCH', body: JSON.stringify({ maxRunningCpus: i + k + 1 }) }).then((r) => expect(r.status).toBe(200))));
  }
  await page.goto(`${url}/audit?action=user.update&since=${encodeURIComponent(t0)}`);
  await expect(rows).toHaveCount(PAGE);
  // These came with the admin token: its prefix shows.
  await expect(rows.first()).toContainText(`${token.slice(0, 12)}…`);
  const first = (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-audit-id'))))) as number[];
  await page.getByTestId('audit-older').click();
  await expect(page).toHaveURL(/[?&]before=\d+/);
  await expect(page.getByTestId('audit-page')).toHaveText('page 2');
  await expect(rows).toHaveCount(4);
  const second = (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-audit-id'))))) as number[];
  expect(Math.max(...second)).toBeLessThan(Math.min(...first));
  await expect(page.getByTestId('audit-older')).toBeDisabled();
  await page.getByTestId('audit-newer').click();
  await expect(page.getByTestId('audit-page')).toHaveText('page 1');
  await expect(rows).toHaveCount(PAGE);
  expect(unexpected(errors)).toEqual([]);
});

test('phone width: the Users and Audit pages stay within the screen', async ({ page }) => {
  const { url } = e2eServer();
  const errors = watchPageErrors(page);
  mkdirSync(SHOTS, { recursive: true });
  await login(page);
  const width = 390;
  await page.setViewportSize({ width, height: 844 });
  for (const p of ['/users', '/audit']) {
    await page.goto(`${url}${p}`);
    await expect(page.locator('tbody tr').first()).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth), p).toBeLessThanOrEqual(width);
    // The rows are small cards (no sideways scrolling inside the table either); every control is on the screen.
    expect(await page.locator('.table-wrap').evaluate((e) => e.scrollWidth - e.clientWidth), p).toBeLessThanOrEqual(0);
    for (const el of await page.locator('main input, main select, main button').all()) {
      if (!(await el.isVisible())) continue;
      const box = (await el.boundingBox())!;
      expect(box.x + box.width, `${p}: ${await el.evaluate((e) => e.outerHTML.slice(0, 80))}`).toBeLessThanOrEqual(width);
    }
    await page.screenshot({ path: path.join(SHOTS, `${p.slice(1)}-390.png`), fullPage: true });
  }
  expect(errors).toEqual([]);
});
