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
