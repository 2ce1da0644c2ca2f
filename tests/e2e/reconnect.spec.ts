import { startServerProcess, type ServerProcess } from '../helpers/server';
import { E2E_SERVER_ENV } from './global-setup';
import { expect, expectNoReload, jobGate, login, markNoReload, submitSpec, test, expectShownPast } from './fixtures';

/**
 * The server dies (kill -9) while a job page follows a running job: the page shows it is
 * reconnecting, comes back by itself when the server is up again (same address, same data),
 * and the log ends with every line exactly once — resumed by task/attempt/offset, no reload.
 */
test('server killed and restarted: the page reconnects and resumes the log with nothing lost or doubled', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let server: ServerProcess | null = await startServerProcess({ env: E2E_SERVER_ENV });
  const { home, token } = server;
  const port = Number(new URL(server.url).port);
  try {
    await login(page, server);
    // Ticks every 100 ms while the server dies and comes back; the rest at once when the page is live again.
    const gate = jobGate(home, 0.1);
    const id = await submitSpec(`name: survive-restart\nrun: |\n  for i in $(seq 1 150); do echo "tick $i"; ${gate.pace}; done\n`, server);
    await page.goto(`${server.url}/jobs/${id}`);
    await markNoReload(page);
    const log = page.getByTestId('log-viewer');
    await expectShownPast(log, 'tick', 20);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');

    await server.kill9();
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', /reconnecting|connecting/);
    await expect(page.getByTestId('connection')).toContainText(/Reconnecting/);
    await expect(page.getByTestId('stream-status')).toHaveAttribute('data-state', /reconnecting|connecting/);

    server = await startServerProcess({ env: E2E_SERVER_ENV, home, token, port });
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 60_000 });
    gate.open();
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

/**
 * A planned restart (SIGTERM, then a new server on the same data and port): the page says the
 * server is restarting — no close code — keeps knocking at least once a second, and is live
 * again right after the new server listens (the time from "listening" to "Live" is printed),
 * with every log line exactly once.
 */
test('planned restart: "server restarting", back live within 2 s of listening, the log complete', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let server: ServerProcess | null = await startServerProcess({ env: E2E_SERVER_ENV });
  const { home, token } = server;
  const port = Number(new URL(server.url).port);
  try {
    await login(page, server);
    const gate = jobGate(home, 0.1);
    const id = await submitSpec(`name: planned-restart\nrun: |\n  for i in $(seq 1 250); do echo "tick $i"; ${gate.pace}; done\n`, server);
    await page.goto(`${server.url}/jobs/${id}`);
    await markNoReload(page);
    const log = page.getByTestId('log-viewer');
    const conn = page.getByTestId('connection');
    await expectShownPast(log, 'tick', 20);
    await expect(conn).toHaveAttribute('data-state', 'live');
    // Every change of the indicator, with the page's clock (the same machine's as the test's).
    await page.evaluate(() => {
      const el = document.querySelector('[data-testid="connection"]')!;
      const seen: { state: string | null; text: string; title: string | null; at: number }[] = [];
      (window as unknown as { __jdConn: typeof seen }).__jdConn = seen;
      new MutationObserver(() => seen.push({ state: el.getAttribute('data-state'), text: el.textContent ?? '', title: el.getAttribute('title'), at: Date.now() })).observe(el, { attributes: true, childList: true, subtree: true, characterData: true });
    });

    await server.stop();
    await expect(conn).toHaveAttribute('data-restarting', 'true');
    await expect(conn).toContainText('Server restarting — reconnecting…');
    await expect(page.getByTestId('stream-status')).toHaveText('Server restarting — reconnecting…');
    await page.waitForTimeout(4000); // a restart that takes a while
    server = await startServerProcess({ env: E2E_SERVER_ENV, home, token, port });
    const listening = Date.now();
    await expect(conn).toHaveAttribute('data-state', 'live');
    const seen = await page.evaluate(() => (window as unknown as { __jdConn: { state: string | null; text: string; title: string | null; at: number }[] }).__jdConn);
    const live = seen.find((s) => s.state === 'live' && s.at >= listening - 50);
    const ms = (live?.at ?? Date.now()) - listening;
    console.log(`[restart] from the new server's "listening" to the page's "Live": ${ms} ms`);
    test.info().annotations.push({ type: 'restart', description: `listening → Live: ${ms} ms` });
    // The capped restart backoff itself (at most RESTART_MAX_MS between tries) is held by
    // tests/unit/ui-backoff.test.ts on a fake clock; here the time is only printed.
    // Never a close code while it restarted.
    for (const s of seen) expect(`${s.text} ${s.title ?? ''}`).not.toMatch(/\(100\d\)|code 100\d/);
    // Live again: the job prints the rest of its lines at once.
    gate.open();

    await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible({ timeout: 60_000 });
    await expect(log).toHaveAttribute('data-rows', '253');
    await expect(log.locator('.logs-foot')).toContainText('250 lines');
    await expect(page.getByTestId('log-line').last().locator('.log-ln')).toHaveText('250');
    // The status history tells the restart: jobdeck stopped, then re-adopted the job — in the
    // page as it is (no reload), every time to the millisecond.
    await page.getByText(/^Status history \(\d+\)$/).click();
    const server_ = page.locator('[data-testid="history-event"][data-entity="server"]');
    await expect(server_).toHaveCount(2);
    await expect(server_.nth(0)).toContainText('jobdeck stopped');
    await expect(server_.nth(1)).toContainText(/jobdeck restarted, re-adopted the job — jobdeck started again after \d+\.\d s down/);
    for (const t of await page.getByTestId('history-event').locator('.mono').allTextContents()) expect(t).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    await expectNoReload(page);
    expect(errors).toEqual([]);
  } finally {
    await server?.dispose();
  }
});
