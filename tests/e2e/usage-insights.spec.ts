import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * Resource usage on the job page (two uPlot sparklines per attempt and the seff-like figures)
 * and the charts page (/insights) with data from jobs run by this test, at desktop and phone
 * width. The server samples every 250 ms (tests/e2e/global-setup.ts E2E_SERVER_ENV).
 */

test('a finished job page shows the CPU and memory sparklines and the efficiency figures', async ({ app: page }) => {
  const id = await submitSpec('name: usage-page\nresources:\n  cpus: 2\n  memory: 1\nrun: |\n  end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done\n');
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const usage = page.getByTestId('usage-0-1');
  await expect(usage).toBeVisible();
  await expect(page.getByTestId('spark-cpu-0-1').locator('canvas')).toBeVisible();
  await expect(page.getByTestId('spark-mem-0-1').locator('canvas')).toBeVisible();
  await expect(page.getByTestId('usage-cpu-0-1')).toContainText(/CPU efficiency \d+ % of 2 CPUs/);
  await expect(page.getByTestId('usage-mem-0-1')).toContainText(/peak \d+(\.\d)? (KiB|MiB)/);
  await expect(page.getByTestId('usage-mem-0-1')).toContainText(/memory efficiency \d+ % of 1\.0 GiB/);
});

for (const width of [1440, 390]) {
  test(`the charts page renders seeded jobs at ${width} px`, async ({ app: page }) => {
    // Five of each: the table lists the ten names with the most jobs, and the other specs in this
    // run submit up to four jobs under one name.
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await submitSpec('name: insights-ok\nrun: "true"\n'));
      ids.push(await submitSpec('name: insights-bad\nrun: exit 2\n'));
    }
    for (const id of ids) await waitForStatus(id, ['SUCCEEDED', 'FAILED']);
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${e2eServer().url}/insights`);
    await expect(page.getByRole('heading', { name: 'Insights' })).toBeVisible();
    // A phone's navigation is the menu button, which names the page.
    if (width > 640) await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Insights' })).toHaveAttribute('aria-current', 'page');
    else await expect(page.getByTestId('nav-menu-button')).toContainText('Insights');
    for (const chart of ['chart-throughput', 'chart-wait', 'chart-run']) await expect(page.getByTestId(chart).locator('canvas')).toBeVisible();
    const busiest = page.getByTestId('busiest');
    await expect(busiest).toContainText('insights-ok');
    await expect(busiest).toContainText('insights-bad');
    // Legends read as figures, never uPlot's "--": off the chart, the whole range's.
    const legend = page.getByTestId('chart-throughput').locator('.u-legend');
    await expect(legend).toContainText('all of the last 24 h');
    await expect(legend).toContainText(/started\s*\d+/);
    await expect(legend).not.toContainText('--');
    await page.getByTestId('range-7d').click();
    await expect(page.getByTestId('range-7d')).toHaveAttribute('aria-pressed', 'true');
    await expect(legend).toContainText('all of the last 7 d');
    await expect(page.getByTestId('insights-summary')).toContainText(/\d+ started/);
    // The servers panel: one server on the embedded database (no leases), said as such.
    await expect(page.getByTestId('servers-panel')).toContainText('One server');
    // Nothing wider than the screen: the page never scrolls sideways.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const box = await page.getByTestId('chart-throughput').boundingBox();
    expect(box!.width).toBeLessThanOrEqual(width);
  });
}

test('a running attempt’s usage keeps moving on its page (the page re-reads a live job)', async ({ app: page }) => {
  // Busy a tenth of the time (a count to 20,000, then a 0.5 s sleep): its CPU-seconds grow by a
  // few tenths between the page's re-reads — what the figures show to 0.1 — without taking a
  // whole core from the tests beside it for the half minute this one runs.
  const id = await submitSpec('name: usage-live\nrun: |\n  end=$((SECONDS + 90)); while [ $SECONDS -lt $end ]; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.5; done\n');
  await waitForStatus(id, ['RUNNING']);
  // Let a few samples exist, so the first read already shows figures.
  await new Promise((r) => setTimeout(r, 1500));
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const cpu = page.getByTestId('usage-cpu-0-1');
  await expect(cpu).toContainText(/CPU efficiency \d+ % of 1 CPU\b/);
  // The stream carries no usage: only re-reads of the job bring newer CPU-seconds — again and again
  // (not just once, as when the page's stream connects).
  for (let i = 0; i < 3; i++) {
    const before = await cpu.textContent();
    await expect(cpu).not.toHaveText(before!, { timeout: 30_000 });
  }
  await expect(page.getByTestId('spark-cpu-0-1').locator('canvas')).toBeVisible();
  await fetch(`${e2eServer().url}/api/jobs/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${e2eServer().token}` } });
  await waitForStatus(id, ['CANCELLED']);
});
