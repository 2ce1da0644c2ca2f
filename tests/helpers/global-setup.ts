import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pgliteTemplate, pgTemplate } from './db-templates';

/**
 * Global setup of vitest's integration project (once per run, before any file; docs/testing.md):
 * - builds the Next.js app when the sources changed since the last build, or there is none
 *   (scripts/build-if-stale.mjs; JOBDECK_NEXT_DIST picks the folder), so that one file runs
 *   alone with `npx vitest run tests/integration/x.test.ts` and no build step of its own;
 * - makes the migrated database templates every suite copies (tests/helpers/db-templates.ts),
 *   here rather than in the first few files at once.
 */
export default async function setup(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, stdio: 'inherit', env: { NEXT_TELEMETRY_DISABLED: '1', ...process.env } });
  await Promise.all([pgliteTemplate(), pgTemplate()]);
}
