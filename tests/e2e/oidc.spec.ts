/**
 * Single sign-on in the browser (Chromium): a jobdeck server of its own, configured for a REAL
 * OpenID Connect provider (tests/helpers/oidc-provider.mjs, the oidc-provider package). The user
 * clicks "Sign in with …" on /login, signs in on the provider's own login page, and lands on the
 * dashboard as the role its group maps to: a member sees its own jobs ("Your jobs", none yet, not
 * the admin's job nor "No jobs yet") and the toggle shows everyone's.
 */
import { expect, test } from '@playwright/test';
import { freePort, startOidcProvider, type OidcProvider } from '../helpers/oidc';
import { startServerProcess, type ServerProcess } from '../helpers/server';

test.describe.configure({ mode: 'serial' });

let provider: OidcProvider;
let server: ServerProcess;

test.beforeAll(async () => {
  const port = await freePort();
  provider = await startOidcProvider({
    clients: [{ client_id: 'jobdeck', client_secret: 'e2e-client-secret', redirect_uris: [`http://127.0.0.1:${port}/api/auth/oidc/callback`] }],
    accounts: { dana: { password: 'dana-pw', groups: ['devs'] } },
  });
  server = await startServerProcess({
    port,
    timeoutMs: 120_000,
    env: { JOBDECK_OIDC_ISSUER: provider.issuer, JOBDECK_OIDC_CLIENT_ID: 'jobdeck', JOBDECK_OIDC_CLIENT_SECRET: 'e2e-client-secret', JOBDECK_OIDC_ROLES: 'devs=member,*=viewer', JOBDECK_OIDC_LABEL: 'Test IdP' },
  });
});

test.afterAll(async () => {
  await server?.dispose();
  await provider?.stop();
});

test('a provider user signs in with one click and lands on the dashboard as a member', async ({ page }) => {
  const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'true', name: 'admins-job' }) });
  expect(res.status).toBe(201);
  const adminsJob = ((await res.json()) as { id: number }).id;
  await page.goto(`${server.url}/login`);
  await page.getByTestId('sso-login').click();
  // The provider's own page.
  await expect(page.getByRole('heading', { name: 'Test provider sign-in' })).toBeVisible();
  expect(page.url().startsWith(provider.url)).toBe(true);
  await page.getByLabel('Username').fill('dana');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('wrong username or password');
  await page.getByLabel('Username').fill('dana');
  await page.getByLabel('Password').fill('dana-pw');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${server.url}/`);
  const me = await page.evaluate(async () => (await fetch('/api/users/me')).json());
  expect(me).toMatchObject({ name: 'dana', role: 'member' });
  await expect(page.getByTestId('owner-filter')).toContainText('Your jobs');
  await expect(page.getByText('No jobs match these filters.')).toBeVisible();
  await expect(page.getByTestId('empty-state')).toHaveCount(0);
  await page.getByTestId('owner-toggle').click();
  await expect(page.locator(`a[href="/jobs/${adminsJob}"]`).first()).toBeVisible();
});

test('a refused single sign-on comes back to the login page with a message', async ({ page }) => {
  await page.goto(`${server.url}/api/auth/oidc/callback?code=forged&state=forged`);
  await expect(page).toHaveURL(`${server.url}/login?error=sso`);
  await expect(page.getByText('Single sign-on did not complete.')).toBeVisible();
  await expect(page.getByTestId('sso-login')).toHaveText('Sign in with Test IdP');
});
