import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Vitest global setup: tests that start a real server need a built Next.js app. Builds it once
 * when missing (npm test builds before running, so this only matters for `vitest run` alone).
 */
export default function setup(): void {
  const root = path.resolve(__dirname, '..', '..');
  const dist = process.env.JOBDECK_NEXT_DIST || '.next';
  if (!existsSync(path.join(root, dist, 'BUILD_ID'))) {
    execFileSync(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], { cwd: root, stdio: 'inherit' });
  }
}
