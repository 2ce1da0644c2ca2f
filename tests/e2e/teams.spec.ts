/**
 * Teams in the dashboard (Chromium, the run's server): a member an admin gave a password logs in
 * with it on /login, sees its role on the Tokens page, creates a token (shown once, then listed by
 * prefix) and revokes it; the Audit page is an admin's only; the job page shows who submitted it;
 * the job list shows a member its own jobs by default, everyone's after the toggle; the Queues and
 * Webhooks pages name who created each queue and webhook, the job page the token a job came through.
 */
import { expect, test } from '@playwright/test';
import { e2eServer, login } from './fixtures';

test.describe.configure({ mode: 'serial' });

const admin = (p: string, init: RequestInit = {}) => {
  const { url, token } = e2eServer();
  return fetch(`${url}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
};

test('a member logs in with a password, manages its tokens, is refused the audit log, and sees the owner of a job', async ({ page }) => {
  const { url } = e2eServer();
  const name = `e2e-${Date.now().toString(36)}`;
  const created = await admin('/api/users', { method: 'POST', body: JSON.stringify({ name, role: 'member', password: 'correct-horse-1' }) });
  expect(created.status).toBe(201);

  await page.goto(`${url}/login`);
  // Users have passwords here: the page leads with the password form.
  await page.getByTestId('login-username').fill(name);
  await page.getByTestId('login-password').fill('wrong-password');
  await page.getByTestId('password-login-submit').click();
  await expect(page.getByTestId('password-login-error')).toHaveText('That user name or password is not valid.');
  await page.getByTestId('login-password').fill('correct-horse-1');
  await page.getByTestId('password-login-submit').click();
  await expect(page).toHaveURL(`${url}/`);

  await page.goto(`${url}/tokens`);
  await expect(page.getByTestId('whoami')).toContainText(`${name} (member)`);
  await page.getByTestId('token-name').fill('laptop');
  await page.getByRole('button', { name: 'Create' }).click();
  const token = (await page.getByTestId('new-token').textContent()) ?? '';
  expect(token).toMatch(/^jdp_[A-Za-z0-9_-]{43}$/);
  const row = page.getByTestId('tokens').locator('tr', { hasText: 'laptop' });
  await expect(row).toContainText(token.slice(0, 12));
  // The token works until revoked, then fails.
  const asToken = () => fetch(`${url}/api/users/me`, { headers: { authorization: `Bearer ${token}` } });
  expect((await asToken()).status).toBe(200);
  await row.getByRole('button', { name: 'Revoke' }).click();
  await expect(row).toContainText('revoked');
  expect((await asToken()).status).toBe(401);

  await page.goto(`${url}/audit`);
  await expect(page.getByTestId('not-allowed')).toContainText('the Audit page is not open to that role');

  // A job the member submits (through the page's own session) shows its owner on the job page.
  const id = await page.evaluate(async () => {
    const res = await fetch('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'true', name: 'owned' }) });
    return ((await res.json()) as { id: number }).id;
  });
  await page.goto(`${url}/jobs/${id}`);
  await expect(page.getByTestId('job-owner')).toHaveText(name);

  // The list shows a member its own jobs by default; the toggle shows everyone's.
  const other = (await (await admin('/api/jobs', { method: 'POST', body: JSON.stringify({ cmd: 'true', name: `admins-${name}` }) })).json()) as { id: number };
  await page.goto(`${url}/`);
  await expect(page.getByTestId('owner-filter')).toContainText('Your jobs');
  await expect(page.locator(`a[href="/jobs/${id}"]`).first()).toBeVisible();
  await expect(page.locator(`a[href="/jobs/${other.id}"]`)).toHaveCount(0);
  await page.getByTestId('owner-toggle').click();
  await expect(page).toHaveURL(/owner=all/);
  await expect(page.locator(`a[href="/jobs/${other.id}"]`).first()).toBeVisible();
});

test('the Queues and Webhooks pages name their creator; the job page the token a job came through', async ({ page }) => {
  const { url } = e2eServer();
  const name = `ops-${Date.now().toString(36)}`;
  const user = (await (await admin('/api/users', { method: 'POST', body: JSON.stringify({ name, role: 'admin' }) })).json()) as { id: number };
  const { token } = (await (await admin('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'e2e', userId: user.id }) })).json()) as { token: string };
  const asOps = (p: string, init: RequestInit) => fetch(`${url}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
  expect((await asOps(`/api/queues/${name}`, { method: 'PUT', body: JSON.stringify({ maxRunning: 2 }) })).status).toBe(200);
  expect((await asOps('/api/webhooks', { method: 'POST', body: JSON.stringify({ name, url: 'http://127.0.0.1:9/hook', events: ['job.succeeded'], namedOnly: true }) })).status).toBe(201);
  const job = (await (await asOps('/api/jobs', { method: 'POST', body: JSON.stringify({ cmd: 'true', name: 'via-token' }) })).json()) as { id: number };

  await login(page);
  await page.goto(`${url}/queues`);
  await expect(page.getByRole('columnheader', { name: 'Owner' })).toBeVisible();
  await expect(page.locator(`tr[data-queue="${name}"]`).getByTestId('queue-owner')).toHaveText(name);
  await expect(page.locator('tr[data-queue="default"]').getByTestId('queue-owner')).toHaveText('–');
  await page.goto(`${url}/webhooks`);
  await expect(page.locator('li.webhook-row', { hasText: name }).getByTestId('webhook-owner')).toHaveText(`by ${name}`);
  await page.goto(`${url}/jobs/${job.id}`);
  await expect(page.getByTestId('job-owner')).toHaveText(name);
  await expect(page.getByTestId('job-via-token')).toHaveText(`via token ${token.slice(0, 12)}`);

  expect((await admin(`/api/webhooks/${name}`, { method: 'DELETE' })).status).toBe(204);
  expect((await admin(`/api/queues/${name}`, { method: 'DELETE' })).status).toBe(204);
});
