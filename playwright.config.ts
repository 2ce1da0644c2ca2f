import { defineConfig } from '@playwright/test';

/**
 * Browser tests of the dashboard against a real jobdeck server (tests/e2e/global-setup.ts starts
 * one on a free port with a fresh JOBDECK_HOME and a known token). The Next.js app must be built
 * first into JOBDECK_NEXT_DIST (default `.next`; the global setup builds it when missing).
 *
 * Chromium: Debian's /usr/bin/chromium (`apt-get install -y chromium`); never `npx playwright
 * install` (no internet here). The flags keep it from calling home on a closed network.
 */
// Tests run as root, where a jobdeck isolates by default; the browser tests run every job as the
// server's own user (docs/testing.md, "Isolation").
process.env.JOBDECK_ISOLATION ??= 'off';

export default defineConfig({
  testDir: 'tests/e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './tests/e2e/global-setup.ts',
  // Spec files run side by side in JOBDECK_E2E_WORKERS browsers (default 2: one browser left a
  // core idle while it waited on the page or the server, measured 363 s with one against about 260 s with
  // two) against the one server; a file's tests run in order. Tests tell their jobs apart by name
  // (a stamp), so a job of another file in the list changes nothing they assert (docs/testing.md).
  fullyParallel: false,
  workers: Number(process.env.JOBDECK_E2E_WORKERS) || 2,
  retries: 0,
  // Hang guards, not speed targets: generous for a machine whose cores are all busy.
  timeout: 600_000,
  expect: { timeout: 60_000 },
  outputDir: 'test-results',
  reporter: [['list']],
  // The slowest spec files, listed at the end of the run (as vitest's slowest files).
  reportSlowTests: { max: 15, threshold: 10_000 },
  use: {
    viewport: { width: 1280, height: 800 },
    // The dashboard's pulsing dots (running badge, follow button, connection) stop under reduced
    // motion (app/globals.css): otherwise each is a frame composited in software 60 times a
    // second for the whole run, CPU taken from the suites beside it (docs/testing.md).
    reducedMotion: 'reduce',
    actionTimeout: 60_000,
    navigationTimeout: 120_000,
    // No trace by default: recording one (a screencast and a DOM snapshot at every action) cost
    // ~16 % of the browser tests' CPU for a file kept only when a test fails. Chasing a failure:
    // `npm run test:e2e -- --trace retain-on-failure` (docs/testing.md "The browser tests").
    trace: 'off',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.JOBDECK_CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
});
