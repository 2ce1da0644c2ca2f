import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { e2eServer, example, expect, submitSpec, test, waitForStatus, watchPageErrors } from './fixtures';

/**
 * Details a QA pass found: public files (favicon) served without a token and no console error
 * on any page, the login page in light and dark, a `--cmd` job's task named after the job,
 * template summaries in full, Delete and Cancel styled alike in the row menu, and the phone layout (jobs list
 * rows and log banners within the screen).
 */
const SHOTS = path.join('test-results', 'screenshots');

test('public files need no token; an anonymous login page loads its icons without a console error', async ({ browser }) => {
  const { url } = e2eServer();
  const ico = await fetch(`${url}/favicon.ico`);
  expect(ico.status).toBe(200);
  const bytes = new Uint8Array(await ico.arrayBuffer());
  expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0]); // ICONDIR: reserved 0, type 1 (icon)
  const svg = await fetch(`${url}/favicon.svg`);
  expect(svg.status).toBe(200);
  expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  expect(await svg.text()).toContain('<svg');
  // Not a loophole: job data still needs the token.
  expect((await fetch(`${url}/api/jobs`)).status).toBe(401);

  mkdirSync(SHOTS, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    const context = await browser.newContext({ colorScheme: scheme });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const icons: number[] = [];
    page.on('response', (r) => {
      if (/\/favicon\.(ico|svg)/.test(r.url())) icons.push(r.status());
    });
    await page.goto(`${url}/login`);
    await expect(page.getByTestId('login-form')).toBeVisible();
    await expect(page.locator('link[rel="icon"][href^="/favicon.svg"]')).toHaveCount(1);
    // The card follows the colour scheme: light card on light, dark card on dark.
    const cardBg = await page.locator('section[aria-labelledby="login-title"]').evaluate((el) => getComputedStyle(el).backgroundColor);
    const [r, g, b] = (cardBg.match(/\d+/g) ?? []).map(Number);
    const luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    if (scheme === 'light') expect(luminance, cardBg).toBeGreaterThan(0.8);
    else expect(luminance, cardBg).toBeLessThan(0.2);
    await page.screenshot({ path: path.join(SHOTS, `login-${scheme}.png`) });
    // Both icons drawn large, to look at.
    await page.setContent(`<body style="margin:0;padding:16px;display:flex;gap:16px;background:${scheme === 'light' ? '#fff' : '#111'}"><img src="${url}/favicon.ico" width="128" height="128" style="image-rendering:pixelated"><img src="${url}/favicon.svg" width="128" height="128"></body>`);
    await expect.poll(() => page.locator('img').evaluateAll((imgs) => imgs.every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0))).toBe(true);
    await page.setViewportSize({ width: 320, height: 160 });
    await page.screenshot({ path: path.join(SHOTS, `favicon-${scheme}.png`) });
    expect(icons.length).toBeGreaterThan(0);
    expect(icons.every((s) => s === 200 || s === 304), `icon answers ${icons}`).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  }
});

test('the theme cookie wins over the system scheme on the login page', async ({ browser }) => {
  const { url } = e2eServer();
  const context = await browser.newContext({ colorScheme: 'dark' });
  await context.addCookies([{ name: 'jobdeck-theme', value: 'light', url }]);
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  const bg = await page.locator('main').evaluate((el) => getComputedStyle(el).backgroundColor);
  const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
  expect((r + g + b) / 3, bg).toBeGreaterThan(200);
  await context.close();
});

test('a one-task --cmd job named with -n shows the job name for its task', async ({ app: page }) => {
  const { url, token } = e2eServer();
  const res = await fetch(`${url}/api/jobs`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'cmd-named', cmd: 'echo from a cmd job' }) });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: number };
  await page.goto(`${url}/jobs/${id}`);
  await expect(page.getByTestId('log-viewer').getByText('from a cmd job', { exact: true })).toBeVisible();
  await expect(page.getByTestId('task-0')).toContainText('cmd-named');
  await expect(page.getByTestId('task-0')).not.toContainText('unnamed');
});

test('template buttons show each template summary in full', async ({ app: page }) => {
  await page.goto(`${e2eServer().url}/jobs/new`);
  const summary = page.locator('[data-template="training-with-setup"] .template-summary');
  await expect(summary).toHaveText('A training-style job: setup prepares what the run needs, run trains and prints one line per epoch.');
  for (const el of await page.locator('.template-summary').all()) {
    const { scrollWidth, clientWidth } = await el.evaluate((e) => ({ scrollWidth: e.scrollWidth, clientWidth: e.clientWidth }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth + 1);
  }
});

test('Delete and Cancel row actions look alike (danger items of the row menu)', async ({ app: page }) => {
  const running = await submitSpec('name: style-running\nrun: sleep 300\n');
  const done = await submitSpec('name: style-done\nrun: echo done\n');
  await Promise.all([waitForStatus(running, ['RUNNING']), waitForStatus(done, ['SUCCEEDED'])]);
  await page.goto(`${e2eServer().url}/`);
  const look = (el: Element) => {
    const s = getComputedStyle(el);
    return { color: s.color, border: `${s.borderTopWidth} ${s.borderTopStyle} ${s.borderTopColor}`, height: s.height, weight: s.fontWeight };
  };
  await page.getByRole('button', { name: `Actions for job ${done}` }).click();
  const del = page.getByRole('menuitem', { name: `Delete job ${done}` });
  await expect(del).toBeVisible();
  const delLook = await del.evaluate(look);
  await page.keyboard.press('Escape');
  await expect(del).toHaveCount(0);
  await page.getByRole('button', { name: `Actions for job ${running}` }).click();
  const cancel = page.getByRole('menuitem', { name: `Cancel job ${running}` });
  await expect(cancel).toBeVisible();
  expect(delLook).toEqual(await cancel.evaluate(look));
  expect(delLook.border).toMatch(/^1px solid/);
  // Both in the danger colour (the theme's error colour), unlike the other items.
  const error = await page.evaluate(() => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--error)';
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  });
  expect(delLook.color).toBe(error);
  expect(await page.getByRole('menuitem', { name: `Re-run job ${running}` }).evaluate((el) => getComputedStyle(el).color)).not.toBe(error);
  // No red button left on the rows themselves.
  expect(await page.locator('tbody .btn-danger').count()).toBe(0);
  await cancel.click();
  await page.getByRole('menuitem', { name: 'Confirm cancel' }).click();
  await waitForStatus(running, ['CANCELLED']);
});

test('phone width: job rows and log banners stay on the screen', async ({ app: page }) => {
  const failed = await submitSpec(example('seed-retry-pipeline'));
  const setup = await submitSpec(example('setup-fails'));
  await Promise.all([waitForStatus(failed, ['FAILED']), waitForStatus(setup, ['FAILED_SETUP'])]);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${e2eServer().url}/`);
  const width = 390;
  for (const id of [failed, setup]) {
    const row = page.locator(`tr[data-job-id="${id}"]`);
    await expect(row).toBeVisible();
    for (const part of [row.locator('[data-status]'), row.locator('.reason'), row.getByRole('button', { name: `Actions for job ${id}` })]) {
      const box = (await part.boundingBox())!;
      expect(box.x + box.width, await part.innerText()).toBeLessThanOrEqual(width - 8);
    }
    // The whole reason shows (wrapped), not an ellipsis.
    const reason = row.locator('.reason');
    expect(await reason.evaluate((el) => el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth + 1)).toBe(true);
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  // The rows are laid out as small grids on a phone; the browser still exposes a table.
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { role?: { value: string } }[] };
  const roles: Record<string, number> = {};
  for (const n of nodes) roles[n.role?.value ?? '?'] = (roles[n.role?.value ?? '?'] ?? 0) + 1;
  expect(roles.table).toBe(1);
  expect(roles.row).toBeGreaterThanOrEqual(3);
  expect(roles.columnheader).toBeGreaterThanOrEqual(3);
  expect(roles.cell).toBeGreaterThanOrEqual(8);

  await page.goto(`${e2eServer().url}/jobs/${failed}`);
  const banners = page.getByTestId('log-banner');
  await expect(page.getByTestId('log-viewer').getByText(/^Job ended: FAILED/)).toBeVisible();
  const scroller = (await page.getByTestId('log-scroller').boundingBox())!;
  for (const b of await banners.locator('span').all()) {
    const box = (await b.boundingBox())!;
    expect(box.x + box.width, await b.innerText()).toBeLessThanOrEqual(scroller.x + scroller.width);
  }
  // The long last banner wrapped onto more lines (its row was measured, nothing overlaps).
  const last = banners.filter({ hasText: 'Job ended' });
  expect((await last.boundingBox())!.height).toBeGreaterThan(40);
  const boxes = await banners.evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom })));
  for (let i = 1; i < boxes.length; i++) expect(boxes[i].top).toBeGreaterThanOrEqual(boxes[i - 1].bottom - 1);
});
