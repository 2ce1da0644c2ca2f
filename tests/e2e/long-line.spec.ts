import { e2eServer, expect, submitSpec, test, waitForStatus } from './fixtures';

/**
 * A 10 MB line with no newline (docs/design.md §8): the job page draws it cut with a "show all"
 * control and stays responsive — a scroll and a search in the log answer (their times are
 * printed; speed is bench/'s, not an assertion on a shared machine) —, "show all" draws the whole
 * line, the download has every byte. Then the jobs list's "Search logs" finds the line's end
 * across jobs.
 */
test('a 10 MB single-line log stays responsive, shows all on demand, downloads whole; the list searches logs', async ({ app: page }) => {
  const id = await submitSpec(`name: long-line\nrun: |\n  head -c 10000000 /dev/zero | tr '\\0' 'a'\n  printf ' NEEDLE-END'\n  printf '\\nafter the long line\\n'\n`);
  await waitForStatus(id, ['SUCCEEDED'], 120_000);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText('after the long line')).toBeVisible({ timeout: 60_000 });
  await expect(log.getByTestId('log-line-show-all')).toBeVisible();
  await expect(log.getByText(/9,990,011 more characters/)).toBeVisible();

  // A scroll: the page answers the next frame.
  const scrollMs = await page.getByTestId('log-scroller').evaluate(
    (el) =>
      new Promise<number>((resolve) => {
        const t0 = performance.now();
        el.scrollTop = el.scrollHeight;
        el.scrollLeft = 5000;
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0)));
      }),
  );
  // A search in the log: its match count shows.
  const t0 = Date.now();
  await page.getByTestId('log-search').fill('NEEDLE-END');
  await expect(page.getByTestId('match-count')).toContainText('1');
  const searchMs = Date.now() - t0;
  console.log(`10 MB line: scroll answered in ${scrollMs.toFixed(0)} ms, search in ${searchMs} ms`);

  // "show all" draws the whole line as one text node; "show less" cuts it again.
  await log.getByTestId('log-line-show-all').click();
  const whole = log.getByTestId('log-line-whole');
  await expect(whole).toBeVisible();
  expect(await whole.evaluate((el) => el.textContent!.length)).toBe(10_000_011);
  await log.getByText('show less').click();
  await expect(log.getByTestId('log-line-show-all')).toBeVisible();

  // The download holds every byte.
  const res = await page.request.get(`${e2eServer().url}/api/jobs/${id}/logs/download?task=0&attempt=1`);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-length']).toBe(String(10_000_011 + '\nafter the long line\n'.length));

  // The jobs list's log search finds the end of the long line, cut to 2000 characters. It reads
  // the jobs the list shows: filtered to this one, so that the other specs' big logs do not use
  // up the search's time budget on a busy machine (a search that stops out of time finds nothing).
  await page.goto(`${e2eServer().url}/?q=long-line`);
  await page.getByTestId('logs-grep-input').fill('needle-end');
  await page.getByRole('button', { name: 'Search logs' }).click();
  const results = page.getByTestId('logs-grep-results');
  await expect(results.getByRole('link', { name: `#${id} · task 0 · attempt 1 · line 1` })).toBeVisible();
  await expect(results.getByText('(line cut)')).toBeVisible();
  await expect(page.getByTestId('logs-grep-summary')).toContainText(/^1 match in the logs of 1 job\b/);
});
