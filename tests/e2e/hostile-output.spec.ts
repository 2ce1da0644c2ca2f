import { e2eServer, example, expect, submitSpec, test } from './fixtures';

/**
 * examples/hostile-output.yaml prints HTML/script tags, OSC title and hyperlink sequences, ANSI
 * colours, a carriage return and no final newline: the page shows text and colour and runs
 * nothing.
 */
test('hostile output renders as text and colour, executing nothing', async ({ app: page }) => {
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));

  const id = await submitSpec(example('hostile-output'));
  const colours = await submitSpec(`name: colours\nrun: |\n  printf '\\033[31mred\\033[0m \\033[1;32mbold green\\033[0m \\033[38;5;208morange\\033[0m \\033[7mreversed\\033[0m\\n'\n`);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const title = await page.title();
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();

  // The literal tags are visible text.
  await expect(log.getByText('<script>document.title="pwned"</script><img src=x onerror=alert(1)>', { exact: true })).toBeVisible();
  // The OSC hyperlink's text is shown, the link is not followed or made clickable; the title
  // sequence changes nothing.
  await expect(log.getByText('link', { exact: true })).toBeVisible();
  await expect(log.getByText(/title-change|example\.invalid/)).toHaveCount(0);
  // The carriage return rewrote the line as a terminal would; the last line has no newline.
  await expect(log.getByText('carriage-return overwrite')).toBeVisible();
  await expect(log.getByText('no newline at the end', { exact: true })).toBeVisible();

  const scroller = page.getByTestId('log-scroller');
  expect(await scroller.locator('script, img, a, iframe, object, embed, svg').count()).toBe(0);
  expect(await scroller.evaluate((el) => el.innerHTML)).not.toMatch(/\x1b|<script|<img/);
  await page.waitForTimeout(500);
  expect(await page.title()).toBe(title);
  expect(await page.title()).not.toContain('pwned');
  expect(dialogs).toEqual([]);
  expect(requests.filter((u) => u.includes('example.invalid') || /\/x$/.test(u))).toEqual([]);
  await page.screenshot({ path: 'test-results/screenshots/hostile-light.png' });

  // ANSI colours become coloured spans.
  await page.goto(`${e2eServer().url}/jobs/${colours}`);
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  const red = log.locator('span.ansi-red-fg', { hasText: 'red' });
  await expect(red).toBeVisible();
  const redColor = await red.evaluate((el) => getComputedStyle(el).color);
  const plainColor = await log.locator('.log-text').first().evaluate((el) => getComputedStyle(el).color);
  expect(redColor).not.toBe(plainColor);
  await expect(log.locator('span.ansi-bright-green-fg.ansi-bold, span.ansi-green-fg.ansi-bold', { hasText: 'bold green' })).toBeVisible();
  expect(await log.locator('span', { hasText: 'orange' }).last().evaluate((el) => (el as HTMLElement).style.color)).toBe('rgb(255, 135, 0)');
  expect(dialogs).toEqual([]);
});
