import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pgliteTemplate, pgTemplate } from './db-templates';
import { killGroupsWhere } from './leftover-jobs';

/**
 * Global setup of vitest's integration project (once per run, before any file; docs/testing.md):
 * - builds the Next.js app when the sources changed since the last build, or there is none
 *   (scripts/build-if-stale.mjs; JOBDECK_NEXT_DIST picks the folder), so that one file runs
 *   alone with `npx vitest run tests/integration/x.test.ts` and no build step of its own;
 * - makes the migrated database templates every suite copies (tests/helpers/db-templates.ts),
 *   here rather than in the first few files at once.
 * Its teardown kills, and names, the jobs still running from a test data folder that no longer
 * exists: a file that removed its folder with a job still running (tests/helpers/leftover-jobs.ts).
 */
export default async function setup(): Promise<() => void> {
  const root = path.resolve(__dirname, '..', '..');
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, stdio: 'inherit', env: { NEXT_TELEMETRY_DISABLED: '1', ...process.env } });
  await Promise.all([pgliteTemplate(), pgTemplate()]);
  return () => {
    for (const { group, cmd } of killGroupsWhere(orphanJob)) console.warn(`left running by a test (process group ${group} killed): ${cmd.slice(0, 300)}`);
  };
}

/** A job's command line naming an attempt folder under a test data folder that was removed. */
function orphanJob(cmdline: string): boolean {
  const tmp = `${os.tmpdir()}/jobdeck-`;
  return cmdline.split('\0').some((arg) => {
    if (!arg.startsWith(tmp)) return false;
    const at = arg.indexOf('/jobs/', tmp.length);
    return at > 0 && !existsSync(arg.slice(0, at));
  });
}
