import { defineConfig } from '@playwright/test';

/**
 * Browser tests of the dashboard against a real jobdeck server (tests/e2e/global-setup.ts starts
 * one on a free port with a fresh JOBDECK_HOME and a known token). The Next.js app must be built
 * first into JOBDECK_NEXT_DIST (default `.next`; the global setup builds it when missing).
 *
 * Chromium: Debian's /usr/bin/chromium (`apt-get install -y chromium`); never `npx playwright
 * install` (no internet here). The flags keep it from calling home on a closed network.
 */
export default defineConfig({
  testDir: 'tests/e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './tests/e2e/global-setup.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 180_000,
  expect: { timeout: 30_000 },
  outputDir: 'test-results',
  reporter: [['list']],
  use: {
    viewport: { width: 1280, height: 800 },
    actionTimeout: 15_000,
    navigationTimeout: 60_000,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.JOBDECK_CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
});
