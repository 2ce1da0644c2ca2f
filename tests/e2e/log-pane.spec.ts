import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { e2eServer, example, expect, submitSpec, test, waitForStatus, expectShownPast } from './fixtures';

/**
 * The job page's log pane as people use it: it fills the screen (laptop and phone, where the logs
 * come right after the header), tasks and attempts fold like GitHub Actions steps, picking an
 * attempt shows that attempt's lines only, "Jump to end" shows only when there is more below,
 * the wrap toggle, the download says what it saves, and the keys `f`, `g`, `G`, `?`.
 */
const SHOTS = path.join('test-results', 'screenshots');

test('the log pane fills the screen on a laptop and comes first on a phone', async ({ app: page }) => {
  const id = await submitSpec(example('middle-task-retry'));
  await waitForStatus(id, ['SUCCEEDED']);
  mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  const desk = (await log.boundingBox())!;
  // From under the header card to the bottom of the window (the page's own padding aside).
  expect(desk.y + desk.height, JSON.stringify(desk)).toBeGreaterThan(900 - 40);
  expect(desk.y + desk.height).toBeLessThanOrEqual(900);
  expect(desk.height).toBeGreaterThan(600);
  expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(900);
  await page.screenshot({ path: path.join(SHOTS, 'log-pane-1440.png') });

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  const phone = (await log.boundingBox())!;
  expect(phone.y, 'the logs start in the first screen').toBeLessThan(400);
  expect(phone.height).toBeGreaterThan(844 * 0.75);
  // The pipeline and the facts follow the logs.
  expect((await page.getByTestId('pipeline').boundingBox())!.y).toBeGreaterThan(phone.y + phone.height - 1);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: path.join(SHOTS, 'log-pane-390.png') });
});

test('tasks and attempts fold; picking an attempt shows only its lines; the download names it', async ({ app: page }) => {
  const id = await submitSpec(example('middle-task-retry'));
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  const tasks = log.locator('[data-section="task"]');
  await expect(tasks).toHaveCount(3);
  await expect(tasks.nth(1)).toContainText('Task 1 (flaky)');
  await expect(tasks.nth(1)).toContainText('2 lines');
  await expect(log.getByText('attempt 1: first try fails')).toBeVisible();

  // Fold task 1: its attempts and lines go, its header stays; unfold brings them back.
  await tasks.nth(1).getByRole('button', { name: 'Fold task 1' }).click();
  await expect(log.getByText('attempt 1: first try fails')).toHaveCount(0);
  await expect(log.getByText('attempt 2: second try works')).toHaveCount(0);
  await expect(tasks.nth(1)).toContainText('2 lines hidden');
  await expect(log.getByText('all done', { exact: true })).toBeVisible();
  await tasks.nth(1).getByRole('button', { name: 'Unfold task 1' }).click();
  await expect(log.getByText('attempt 2: second try works')).toBeVisible();
  // Fold one attempt.
  const att = log.locator('[data-section="attempt"]', { hasText: 'Task 1 (flaky), attempt 1 started' });
  await att.getByRole('button', { name: 'Fold attempt 1 of task 1' }).click();
  await expect(log.getByText('attempt 1: first try fails')).toHaveCount(0);
  await expect(log.getByText('attempt 2: second try works')).toBeVisible();
  await att.getByRole('button', { name: 'Unfold attempt 1 of task 1' }).click();

  // Pick attempt 1 of task 1 in the pipeline: that attempt's lines only, numbered as in its file.
  await page.getByTestId('attempt-1-1').click();
  await expect(page.getByTestId('log-scope')).toHaveText('Only task 1 (flaky) · attempt 1');
  await expect(log.getByText('attempt 1: first try fails')).toBeVisible();
  await expect(log.getByText('attempt 2: second try works')).toHaveCount(0);
  await expect(log.getByText('all done', { exact: true })).toHaveCount(0);
  await expect(log.getByText(/^Job ended/)).toHaveCount(0);
  await expect(log.getByTestId('log-line')).toHaveCount(1);
  await expect(log.locator('[data-testid="log-line"] .log-ln')).toHaveText(['1']);
  const download = page.getByTestId('log-download');
  await expect(download).toContainText('attempt 1 of task 1');
  await expect(download).toHaveAttribute('href', /task=1&attempt=1$/);
  const res = await page.request.get(`${e2eServer().url}${await download.getAttribute('href')}`);
  expect(await res.text()).toBe('attempt 1: first try fails\n');
  // Back to the whole job.
  await page.getByTestId('log-show-all').click();
  await expect(log.getByText('attempt 2: second try works')).toBeVisible();
  await expect(page.getByTestId('log-show-all')).toHaveCount(0);
});

test('"Jump to end" only when there is more below; g / G / f; wrap; ? lists the keys', async ({ app: page }) => {
  const short = await submitSpec('name: short-log\nrun: echo one; echo two\n');
  const long = await submitSpec(`name: long-log\nrun: |\n  for i in $(seq 1 300); do echo "row $i"; done\n  echo "${'x'.repeat(600)} end-of-long-line"\n`);
  await Promise.all([waitForStatus(short, ['SUCCEEDED']), waitForStatus(long, ['SUCCEEDED'])]);

  await page.goto(`${e2eServer().url}/jobs/${short}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  await page.keyboard.press('g');
  await expect(log).toHaveAttribute('data-following', 'false');
  // Everything is on screen: nothing to jump to.
  await expect(page.getByTestId('jump-latest')).toHaveCount(0);

  await page.goto(`${e2eServer().url}/jobs/${long}`);
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  const scroller = page.getByTestId('log-scroller');
  await page.keyboard.press('g');
  await expect.poll(() => scroller.evaluate((el) => el.scrollTop)).toBe(0);
  await expect(page.getByTestId('jump-latest')).toBeVisible();
  await expect(page.getByTestId('jump-latest')).toHaveText('Jump to end ↓');
  await page.keyboard.press('Shift+G');
  await expect(log).toHaveAttribute('data-following', 'true');
  await expect(page.getByTestId('jump-latest')).toHaveCount(0);
  await expect.poll(() => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(20);

  // Wrap: the long line breaks onto several rows instead of scrolling sideways.
  const longLine = log.getByTestId('log-line').filter({ hasText: 'end-of-long-line' });
  expect((await longLine.boundingBox())!.height).toBeLessThanOrEqual(21);
  expect(await scroller.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  await page.getByTestId('log-wrap').click();
  await expect(page.getByTestId('log-wrap')).toHaveAttribute('aria-pressed', 'true');
  await expect.poll(async () => (await longLine.boundingBox())!.height).toBeGreaterThan(40);
  expect(await scroller.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);

  // `?` lists the page's keys.
  await page.keyboard.press('?');
  const help = page.getByTestId('shortcuts-help');
  await expect(help).toBeVisible();
  const keys = await help.locator('dt kbd').allTextContents();
  for (const k of ['f', 'g', 'G', '/', '?']) expect(keys, keys.join(' ')).toContain(k);
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();

  // `f` on a running job: pause, follow again.
  const running = await submitSpec('name: follow-key\nrun: |\n  for i in $(seq 1 600); do echo "tick $i"; sleep 0.05; done\n');
  await page.goto(`${e2eServer().url}/jobs/${running}`);
  await expectShownPast(log, 'tick', 20);
  await expect(log).toHaveAttribute('data-following', 'true');
  await page.keyboard.press('f');
  await expect(log).toHaveAttribute('data-following', 'false');
  await page.keyboard.press('f');
  await expect(log).toHaveAttribute('data-following', 'true');
  // Typing in the search box is not a shortcut.
  await page.getByTestId('log-search').fill('fgG');
  await expect(log).toHaveAttribute('data-following', 'true');
});

test('ANSI colours as drawn: ≥ 4.5:1 in both themes, on the log background and on coloured backgrounds', async ({ app: page }) => {
  const id = await submitSpec(
    `name: ansi-contrast\nrun: |\n  printf '\\033[41;97m ERR \\033[0m \\033[42m ok \\033[0m \\033[44;93m warn \\033[0m \\033[7m rev \\033[0m\\n'\n  for c in 30 31 32 33 34 35 36 37 90 91 92 93 94 95 96 97; do printf '\\033[%sm c%s \\033[0m' $c $c; done; echo\n`,
  );
  await waitForStatus(id, ['SUCCEEDED']);
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  const log = page.getByTestId('log-viewer');
  await expect(log.getByText(/^Job ended: SUCCEEDED/)).toBeVisible();
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const ratios = await log.locator('.log-text span').evaluateAll((spans) => {
      const rgb = (s: string) => (s.match(/\d+(\.\d+)?/g) ?? []).slice(0, 4).map(Number);
      const lum = ([r, g, b]: number[]) => [r, g, b].map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4)).reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
      const scroller = document.querySelector('[data-testid="log-scroller"]')!;
      const pageBg = rgb(getComputedStyle(scroller).backgroundColor);
      return spans
        .filter((s) => s.textContent!.trim())
        .map((s) => {
          const cs = getComputedStyle(s);
          const bg = rgb(cs.backgroundColor);
          const back = bg.length === 4 && bg[3] === 0 ? pageBg : bg;
          const a = lum(rgb(cs.color));
          const b = lum(back);
          return { text: s.textContent!.trim(), ratio: +((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)).toFixed(2) };
        });
    });
    expect(ratios.length).toBeGreaterThanOrEqual(20);
    expect(ratios.filter((r) => r.ratio < 4.5), `${scheme}: ${JSON.stringify(ratios)}`).toEqual([]);
    expect(ratios.find((r) => r.text === 'ERR')!.ratio).toBeGreaterThan(4.5);
  }
  await page.screenshot({ path: path.join(SHOTS, 'ansi-dark.png') });
});
