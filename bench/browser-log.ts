/**
 * Measure 13 — a long log in the browser. One job prints 300,000 lines of ~92 bytes (~26 MiB;
 * 100,000 with --quick); once it ended, Debian's Chromium (driven by Playwright, logged in with
 * the login URL) opens its job page 3 times, each in a fresh page. An init script watches the DOM
 * (MutationObserver, the page's own clock from navigation start): when the first log line is
 * drawn, when the LAST line (`300000 …`) is drawn, and when the whole log has taken over from the
 * end shown first (the viewer without `data-preview`, every row in it: lib/ui/tail-preview.ts).
 * For scale, in the same run: the same page for a one-line job (what any job page costs here),
 * and `jobdeck logs ID` printing the log to /dev/null (the CLI's replay). Target: the end within
 * 3 s.
 */
import { spawnSync } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright';
import { isTerminal } from '../lib/jobs/status';
import type { Measure, MeasureResult, Row } from './lib/context';
import { jobDetail, submitCmd } from './lib/client';
import { onCleanup } from './lib/cleanup';
import { ROOT, startBenchServer, type BenchServer } from './lib/server';
import { fmtBytes, fmtMs, nowMs, percentile, round, waitFor } from './lib/util';

/** Page-side marks (ms since navigation start). */
interface Marks {
  first?: number;
  last?: number;
  whole?: number;
}

/** The job: `lines` numbered lines of 92 bytes, training-log style. */
function bigLogCmd(lines: number): string {
  return `awk 'BEGIN { for (i = 1; i <= ${lines}; i++) printf "%06d epoch %03d step %06d loss=0.%06d lr=0.000300 grad_norm=1.%04d tokens/s=%05d done\\n", i, i / 1000, i, (i * 7919) % 1000000, i % 10000, (i * 31) % 100000 }'`;
}

async function waitEnded(s: BenchServer, id: number): Promise<void> {
  await waitFor(`job ${id} ended`, async () => (isTerminal('job', (await jobDetail(s, id)).status) ? true : undefined), { timeoutMs: 300_000, intervalMs: 250 });
}

/**
 * Opens `/jobs/:id` in a fresh page and returns its marks once `needle` is drawn (and, with
 * `whole`, once every row is in the viewer).
 */
async function openJobPage(browser: Browser, s: BenchServer, id: number, needle: string, rows: number | null): Promise<Marks> {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await ctx.newPage();
    await page.goto(`${s.url}/login?token=${encodeURIComponent(s.token)}`);
    // A string, not a function: tsx names the functions it compiles (__name), which the page lacks.
    await page.addInitScript(`(() => {
      const needle = ${JSON.stringify(needle)}, rows = ${JSON.stringify(rows)}, marks = {};
      window.__marks = marks;
      new MutationObserver(() => {
        const v = document.querySelector('[data-testid="log-viewer"]');
        if (!v) return;
        const now = performance.now();
        if (marks.first === undefined && v.querySelector('[data-testid="log-line"]')) marks.first = now;
        if (marks.last === undefined && v.textContent.includes(needle)) marks.last = now;
        if (marks.whole === undefined && rows !== null && !v.hasAttribute('data-preview') && Number(v.getAttribute('data-rows')) >= rows) marks.whole = now;
      }).observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
    })();`);
    await page.goto(`${s.url}/jobs/${id}`);
    const read = (): Promise<Marks> => page.evaluate('window.__marks');
    await waitFor('the last line drawn', async () => ((await read()).last !== undefined ? true : undefined), { timeoutMs: 180_000, intervalMs: 50 });
    if (rows !== null) await waitFor('the whole log in the page', async () => ((await read()).whole !== undefined ? true : undefined), { timeoutMs: 300_000, intervalMs: 100 });
    return read();
  } finally {
    await ctx.close();
  }
}

/** `jobdeck logs ID` to /dev/null (ms). */
function cliReplayMs(s: BenchServer, id: number): number {
  const devnull = openSync('/dev/null', 'w');
  try {
    const t0 = nowMs();
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'jobdeck.mjs'), 'logs', String(id)], { cwd: ROOT, env: { ...process.env, JOBDECK_URL: s.url, JOBDECK_TOKEN: s.token }, stdio: ['ignore', devnull, 'pipe'] });
    const ms = nowMs() - t0;
    if (r.status !== 0) throw new Error(`jobdeck logs ${id} exited ${r.status}: ${String(r.stderr).slice(0, 500)}`);
    return ms;
  } finally {
    closeSync(devnull);
  }
}

export const browserLog: Measure = {
  name: 'browserlog',
  title: 'A 300,000-line log in Chromium',
  async run(ctx): Promise<MeasureResult> {
    const lines = ctx.quick ? 100_000 : 300_000;
    const runs = 3;
    const s = await startBenchServer({ label: 'browserlog', env: { JOBDECK_CAPACITY_CHECK: '0' } });
    const big = (await submitCmd(s, bigLogCmd(lines), { name: 'big-log' })).id;
    const small = (await submitCmd(s, 'echo one line', { name: 'one-line' })).id;
    await Promise.all([waitEnded(s, big), waitEnded(s, small)]);
    const size = (await jobDetail(s, big)).logBytesTotal;
    ctx.log(`browserlog: job ${big} wrote ${lines} lines (${fmtBytes(size)} on disk)`);

    const browser = await chromium.launch({
      executablePath: process.env.JOBDECK_CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    onCleanup('browserlog chromium', () => browser.close());
    const needle = `${String(lines).padStart(6, '0')} epoch`;
    const pages: Marks[] = [];
    const baseline: Marks[] = [];
    for (let i = 0; i < runs; i++) {
      baseline.push(await openJobPage(browser, s, small, 'one line', null));
      pages.push(await openJobPage(browser, s, big, needle, lines));
      ctx.log(`browserlog: run ${i + 1}: end drawn at ${fmtMs(pages[i].last!)}, whole log at ${fmtMs(pages[i].whole!)}`);
    }
    const cli = [cliReplayMs(s, big), cliReplayMs(s, big)];
    await browser.close();

    const p50 = (xs: (number | undefined)[]) => percentile(xs.filter((x): x is number => x !== undefined), 50);
    const last = p50(pages.map((m) => m.last));
    const rows: Row[] = [
      { metric: `last line drawn, ${lines.toLocaleString('en-US')} lines (${fmtBytes(size)}), p50 of ${runs}`, value: fmtMs(last), target: '≤ 3 s', pass: last <= 3000 },
      { metric: 'first line drawn, p50', value: fmtMs(p50(pages.map((m) => m.first))) },
      { metric: 'whole log in the viewer (line numbers, search), p50', value: fmtMs(p50(pages.map((m) => m.whole))) },
      { metric: 'a one-line job: its line drawn, p50 (the page itself)', value: fmtMs(p50(baseline.map((m) => m.last))) },
      { metric: '`jobdeck logs ID` to /dev/null, median of 2', value: fmtMs(percentile(cli, 50)) },
    ];
    return {
      rows,
      data: { lines, logBytes: size, runs: pages.map((m) => ({ first: round(m.first ?? NaN), last: round(m.last ?? NaN), whole: round(m.whole ?? NaN) })), baseline: baseline.map((m) => round(m.last ?? NaN)), cliMs: cli.map((x) => round(x)) },
      notes: ['Times are from navigation start, on the page\u2019s own clock; each run opens a fresh browser context and logs in first.'],
    };
  },
};
