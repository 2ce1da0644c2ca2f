import { expect, test as base, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { e2eServer, submitSpec, waitForStatus, watchPageErrors } from './fixtures';

/**
 * What each role sees and may press, page by page (docs/design.md §15: the dashboard draws its
 * controls and navigation from the rows of the authorization table GET /api/users/me answers), as
 * a member and as an admin; a page followed anyway shows "not open to your role"; no hydration
 * error over 20 fresh logins of a member on the jobs list; the theme toggle redraws Insights'
 * charts at once; the phone's navigation menu. One session per role for the file (a cookie put
 * in each browser context, as the `app` fixture does for the admin), a login per page load only
 * where fresh logins are the point.
 */
base.describe.configure({ mode: 'serial' });

const stamp = Date.now().toString(36);
const MEMBER = `mia-${stamp}`;
const PASSWORD = 'correct-horse-1';

const admin = (p: string, init: RequestInit = {}) => {
  const { url, token } = e2eServer();
  return fetch(`${url}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
};

/** A fresh session cookie (`name=value`) of a password login or a token login. */
async function session(body: Record<string, string>): Promise<string> {
  const res = await fetch(`${e2eServer().url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  if (!res.ok || !cookie) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return cookie;
}

/** A browser context holding `cookie` (a signed-in browser), and its page with an error watch. */
async function signedIn(browser: Browser, cookie: string, viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport });
  const eq = cookie.indexOf('=');
  await context.addCookies([{ name: cookie.slice(0, eq), value: cookie.slice(eq + 1), url: e2eServer().url, httpOnly: true, sameSite: 'Strict' }]);
  const page = await context.newPage();
  return { context, page, errors: watchPageErrors(page) };
}

let memberCookie = '';
let adminCookie = '';
/** The member's running job, the admin's running job, the member's finished one. */
let own = 0;
let others = 0;
let ownDone = 0;

const test = base.extend<{ member: Page; adminPage: Page }>({
  member: async ({ browser }, use) => {
    const s = await signedIn(browser, memberCookie);
    await use(s.page);
    expect(s.errors, 'errors in the page').toEqual([]);
    await s.context.close();
  },
  adminPage: async ({ browser }, use) => {
    const s = await signedIn(browser, adminCookie);
    await use(s.page);
    expect(s.errors, 'errors in the page').toEqual([]);
    await s.context.close();
  },
});

test.beforeAll(async () => {
  expect((await admin('/api/users', { method: 'POST', body: JSON.stringify({ name: MEMBER, role: 'member', password: PASSWORD }) })).status).toBe(201);
  memberCookie = await session({ username: MEMBER, password: PASSWORD });
  adminCookie = process.env.JOBDECK_E2E_SESSION ?? (await session({ token: e2eServer().token }));
  const asMember = (yaml: string) => fetch(`${e2eServer().url}/api/jobs`, { method: 'POST', headers: { cookie: memberCookie, origin: e2eServer().url, 'content-type': 'application/json' }, body: JSON.stringify({ yaml }) }).then(async (r) => ((await r.json()) as { id: number }).id);
  own = await asMember(`name: own-${stamp}\nrun: sleep 600\n`);
  ownDone = await asMember(`name: own-done-${stamp}\nrun: echo done\n`);
  others = await submitSpec(`name: others-${stamp}\nrun: sleep 600\n`);
  await Promise.all([waitForStatus(own, ['RUNNING']), waitForStatus(others, ['RUNNING']), waitForStatus(ownDone, ['SUCCEEDED'])]);
});

test.afterAll(async () => {
  await admin('/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [own, others] }) });
});

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
const navLinks = async (page: Page) => (await nav(page).getByRole('link').allInnerTexts()).map((t) => t.trim());

test('a member: navigation, jobs list, job pages, queues and tokens show only what it may do; admin pages say not open to its role', async ({ member: page }) => {
  const { url } = e2eServer();
  await page.goto(`${url}/?owner=all`);
  expect(await navLinks(page)).toEqual(['Jobs', 'New job', 'Queues', 'Schedules', 'Insights', 'Tokens']);
  await expect(page.getByRole('main').getByRole('link', { name: 'New job' })).toBeVisible();

  // Its own job: selectable, and its menu offers re-run and cancel. Another's: neither.
  const ownRow = page.locator(`tr[data-job-id="${own}"]`);
  const otherRow = page.locator(`tr[data-job-id="${others}"]`);
  await expect(ownRow.getByRole('checkbox')).toBeVisible();
  await expect(otherRow).toBeVisible();
  await expect(otherRow.getByRole('checkbox')).toHaveCount(0);
  await otherRow.getByRole('button', { name: `Actions for job ${others}` }).click();
  await expect(page.getByRole('menuitem', { name: `Open job ${others}` })).toBeVisible();
  await expect(page.getByRole('menuitem')).toHaveCount(1);
  await page.keyboard.press('Escape');
  await ownRow.getByRole('button', { name: `Actions for job ${own}` }).click();
  await expect(page.getByRole('menuitem', { name: `Cancel job ${own}` })).toBeVisible();
  await expect(page.getByRole('menuitem', { name: `Re-run job ${own}` })).toBeVisible();
  await page.keyboard.press('Escape');

  // Another's job page: no Cancel, Re-run or Delete — a copy it may submit as its own.
  await page.goto(`${url}/jobs/${others}`);
  const head = page.getByTestId('job-header');
  await expect(head).toContainText(`others-${stamp}`);
  await expect(head.getByRole('button', { name: 'Cancel job' })).toHaveCount(0);
  await expect(head.getByRole('button', { name: 'Re-run' })).toHaveCount(0);
  await expect(head.getByRole('link', { name: 'Submit a copy' })).toBeVisible();
  // Its own: Cancel job is there.
  await page.goto(`${url}/jobs/${own}`);
  await expect(page.getByTestId('job-header').getByRole('button', { name: 'Cancel job' })).toBeVisible();
  await page.goto(`${url}/jobs/${ownDone}`);
  await expect(page.getByTestId('job-header').getByRole('button', { name: 'Delete job' })).toBeVisible();

  // Queues: the table, no Edit, Delete or form.
  await page.goto(`${url}/queues`);
  await expect(page.locator('tr[data-queue="default"]')).toBeVisible();
  await expect(page.getByRole('button', { name: /^Edit queue/ })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^Delete queue/ })).toHaveCount(0);
  await expect(page.getByTestId('queue-form')).toHaveCount(0);

  // Tokens: its own, no "everyone's".
  await page.goto(`${url}/tokens`);
  await expect(page.getByTestId('whoami')).toContainText(`${MEMBER} (member)`);
  await expect(page.getByText('Everyone\u2019s tokens')).toHaveCount(0);

  // The admins' pages, followed anyway: said plainly, no raw refusal, no form.
  for (const [path, label] of [['/webhooks', 'Webhooks'], ['/users', 'Users'], ['/audit', 'Audit']] as const) {
    await page.goto(`${url}${path}`);
    await expect(page.getByTestId('not-allowed')).toContainText(`You are signed in as ${MEMBER} (member), and the ${label} page is not open to that role.`);
    await expect(page.getByRole('heading', { name: `${label}: not open to your role` })).toBeVisible();
    await expect(page.getByText(/needs the admin role/)).toHaveCount(0);
    await expect(page.getByRole('form')).toHaveCount(0);
  }
  // Insights is everyone's.
  await page.goto(`${url}/insights`);
  await expect(page.getByRole('heading', { name: 'Insights' })).toBeVisible();
});

test('an admin: every page in the navigation, and the controls on queues, webhooks and anyone’s jobs', async ({ adminPage: page }) => {
  const { url } = e2eServer();
  await page.goto(`${url}/`);
  expect(await navLinks(page)).toEqual(['Jobs', 'New job', 'Queues', 'Schedules', 'Insights', 'Webhooks', 'Tokens', 'Users', 'Audit']);
  await page.goto(`${url}/jobs/${own}`);
  await expect(page.getByTestId('job-header').getByRole('button', { name: 'Cancel job' })).toBeVisible();
  await expect(page.getByTestId('job-header').getByRole('button', { name: 'Re-run' })).toBeVisible();
  await page.goto(`${url}/queues`);
  await expect(page.getByTestId('queue-form')).toBeVisible();
  await page.goto(`${url}/webhooks`);
  await expect(page.getByRole('form', { name: 'New webhook' })).toBeVisible();
  await page.goto(`${url}/users`);
  await expect(page.getByTestId('users-table')).toBeVisible();
  await page.goto(`${url}/audit`);
  await expect(page.getByTestId('not-allowed')).toHaveCount(0);
  await expect(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
});

test('no hydration error on the jobs list over 20 fresh logins of a member', async ({ browser }) => {
  // A new session each time, the page loaded from nothing: what the server drew for the member
  // and what the browser draws first must match (React #418 otherwise).
  for (let i = 0; i < 20; i++) {
    const s = await signedIn(browser, await session({ username: MEMBER, password: PASSWORD }));
    await s.page.goto(`${e2eServer().url}/`);
    // Rows come from the browser's own fetch, after the list has hydrated.
    await expect(s.page.locator(`tr[data-job-id="${own}"]`)).toBeVisible();
    await expect(s.page.getByTestId('owner-filter')).toContainText('Your jobs');
    expect(s.errors, `login ${i + 1}`).toEqual([]);
    await s.context.close();
  }
});

/** The brightest pixel of the y axis' labels on the chart's canvas (0–255 luminance). */
const axisBrightness = (page: Page, chart: string) =>
  page.getByTestId(chart).locator('canvas').first().evaluate((c: HTMLCanvasElement) => {
    const d = c.getContext('2d')!.getImageData(0, 0, Math.min(40, c.width), c.height).data;
    let max = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 200) max = Math.max(max, 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2]);
    return max;
  });

test('the theme toggle on Insights: the charts’ axis labels take the new theme at once, and the first press changes the colours', async ({ adminPage: page }) => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`${e2eServer().url}/insights`);
  await expect(page.getByTestId('chart-wait').locator('canvas')).toBeVisible();
  // Light: the labels are dark — no bright pixel but the background's (transparent here).
  await expect.poll(() => axisBrightness(page, 'chart-wait')).toBeLessThan(120);
  const toggle = page.getByTestId('theme-toggle');
  await expect(toggle).toContainText('Auto');
  await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(toggle).toContainText('Dark');
  // Dark, without a reload: the labels are light.
  await expect.poll(() => axisBrightness(page, 'chart-wait')).toBeGreaterThan(180);
  await toggle.click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await expect.poll(() => axisBrightness(page, 'chart-wait')).toBeLessThan(120);
  await toggle.click();
  await expect(toggle).toContainText('Auto');
});

test('a phone: the navigation is a menu naming the page, the page never scrolls sideways, log lines wrap', async ({ browser }) => {
  for (const [cookie, pages] of [
    [memberCookie, ['Jobs', 'New job', 'Queues', 'Schedules', 'Insights', 'Tokens']],
    [adminCookie, ['Jobs', 'New job', 'Queues', 'Schedules', 'Insights', 'Webhooks', 'Tokens', 'Users', 'Audit']],
  ] as const) {
    const s = await signedIn(browser, cookie, { width: 390, height: 844 });
    const page = s.page;
    await page.goto(`${e2eServer().url}/`);
    await expect(nav(page)).toBeHidden();
    const button = page.getByTestId('nav-menu-button');
    await expect(button).toContainText('Jobs');
    await button.click();
    const menu = page.getByTestId('nav-menu');
    expect((await menu.getByRole('link').allInnerTexts()).map((t) => t.trim())).toEqual([...pages]);
    // Every item inside the screen.
    for (const link of await menu.getByRole('link').all()) expect((await link.boundingBox())!.x + (await link.boundingBox())!.width).toBeLessThanOrEqual(390);
    await menu.getByRole('link', { name: 'Queues' }).click();
    await expect(page).toHaveURL(/\/queues$/);
    await expect(menu).toBeHidden();
    await expect(button).toContainText('Queues');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // Long log lines wrap on a phone from the start.
    await page.goto(`${e2eServer().url}/jobs/${ownDone}`);
    await expect(page.getByTestId('log-viewer')).toHaveAttribute('data-wrap', 'true');
    expect(s.errors).toEqual([]);
    await s.context.close();
  }
});

test('the login page leads with user name and password when users have passwords; a token is one click away', async ({ page }) => {
  await page.goto(`${e2eServer().url}/login`);
  await expect(page.getByTestId('login-username')).toBeVisible();
  await expect(page.getByTestId('login-username')).toBeFocused();
  await expect(page.getByTestId('login-token')).toBeHidden();
  await page.getByTestId('token-login').locator('summary').click();
  await expect(page.getByTestId('login-token')).toHaveAttribute('placeholder', 'jdp_…');
  // Username first in the page's order.
  const [user, token] = await Promise.all([page.getByTestId('login-username').boundingBox(), page.getByTestId('login-token').boundingBox()]);
  expect(user!.y).toBeLessThan(token!.y);
});
