import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project folder: the nearest folder above this module whose package.json is jobdeck's — from
 * the sources (lib/) and from the bundles (.jobdeck-cli/ and .jobdeck-server/: scripts/build-cli.mjs,
 * scripts/build-server.mjs) alike. The working directory when there is none (a copy of the CLI
 * alone).
 */
export function projectRoot(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; ) {
    const pkg = path.join(dir, 'package.json');
    try {
      if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'jobdeck') return dir;
    } catch {
      /* unreadable: look further up */
    }
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

/**
 * Why the dashboard cannot be served from `root`: null when its production build is there
 * (`<root>/<dist>/BUILD_ID`, dist as JOBDECK_NEXT_DIST names it), else the sentence that says what
 * is missing and what to run. The server refuses to start with it; `jobdeck server` says it first.
 */
export function missingBuildProblem(root: string, dist: string): string | null {
  if (existsSync(path.join(root, dist, 'BUILD_ID'))) return null;
  return `the web app is not built (no ${path.join(dist, 'BUILD_ID')} in ${root}): run \`npm run build\` once${dist !== '.next' ? ` (with JOBDECK_NEXT_DIST=${dist})` : ''}`;
}
