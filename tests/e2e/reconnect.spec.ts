import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, expectNoReload, login, markNoReload, submitSpec, test } from './fixtures';

/**
 * The server dies (kill -9) while a job page follows a running job: the page shows it is
 * reconnecting, comes back by itself when the server is up again (same address, same data),
 * and the log ends with every line exactly once — resumed by task/attempt/offset, no reload.
 */
test('server killed and restarted: the page reconnects and resumes the log with nothing lost or doubled', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let server: ServerProcess | null = await startServerProcess({ env: E2E_SERVER_ENV, timeoutMs: 120_000 });
  const { home, token } = server;
  const port = Number(new URL(server.url).port);
  try {
    await login(page, server);
    const id = await submitSpec(`name: survive-restart\nrun: |\n  for i in $(seq 1 150); do echo "tick $i"; sleep 0.1; done\n`, server);
    await page.goto(`${server.url}/jobs/${id}`);
    await markNoReload(page);
    const log = page.getByTestId('log-viewer');
    await expect(log.getByText('tick 20', { exact: true })).toBeVisible();
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');

    await server.kill9();
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', /reconnecting|connecting/);
    await expect(page.getByTestId('connection')).toContainText(/Reconnecting/);
    await expect(page.getByTestId('stream-status')).toHaveAttribute('data-state', /reconnecting|connecting/);

    server = await startServerProcess({ env: E2E_SERVER_ENV, home, token, port, timeoutMs: 120_000 });
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 60_000 });
    await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible({ timeout: 60_000 });

    // 150 lines + attempt start + attempt end + job end: anything lost or doubled changes this.
    await expect(log).toHaveAttribute('data-rows', '153');
    await expect(log.locator('.logs-foot')).toContainText('150 lines');
    const last = page.getByTestId('log-line').last();
    await expect(last).toContainText('tick 150');
    await expect(last.locator('.log-ln')).toHaveText('150');
    await expectNoReload(page);
    expect(errors).toEqual([]);
  } finally {
    await server?.dispose();
  }
});
