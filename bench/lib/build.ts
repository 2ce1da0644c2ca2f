/**
 * Makes sure the Next.js app is built into the bench's own dist folder (JOBDECK_NEXT_DIST,
 * default `.next-bench`) and rebuilds when a source is newer than the build.
 *
 * By default the build runs as `next build --experimental-build-mode=compile`: the same
 * compiled server bundles, without Next's TypeScript pass (type checking is `npm run typecheck`'s
 * job; skipping it keeps a teammate's half-done file from blocking a measurement, and keeps
 * Next from rewriting tsconfig.json for the bench's dist folder). `--full-build` runs the plain
 * `next build`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './server';

/** The dist folder the bench builds into and starts servers with. */
export function benchDistDir(): string {
  return process.env.JOBDECK_NEXT_DIST || '.next-bench';
}

function newestMtime(p: string): number {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = 0;
  for (const name of readdirSync(p)) {
    if (name === 'node_modules' || name === 'generated' || name.startsWith('.')) continue;
    max = Math.max(max, newestMtime(path.join(p, name)));
  }
  return max;
}

/** Why a rebuild is needed, or null when the build is up to date. */
export function buildStaleness(): string | null {
  const id = path.join(ROOT, benchDistDir(), 'BUILD_ID');
  if (!existsSync(id)) return `no build in ${benchDistDir()}`;
  const built = statSync(id).mtimeMs;
  for (const src of ['app', 'components', 'lib', 'public', 'next.config.mjs', 'package.json']) {
    if (newestMtime(path.join(ROOT, src)) > built) return `${src} changed since the last build`;
  }
  return null;
}

/**
 * Builds when needed (or when `force`).
 * @throws Error with the build output's tail when `next build` fails.
 */
export function ensureBuild(opts: { full?: boolean; force?: boolean; log(msg: string): void }): { built: boolean; ms: number; reason: string | null } {
  // The server's bundle (what `npm start` runs; seconds): bin/server.mjs runs the sources when it is stale.
  const bundled = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-server.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (bundled.status !== 0) throw new Error(`the server's bundle failed (exit ${bundled.status ?? bundled.signal}):\n${`${bundled.stdout ?? ''}\n${bundled.stderr ?? ''}`.slice(-4000)}`);
  const reason = opts.force ? 'forced' : buildStaleness();
  if (!reason) return { built: false, ms: 0, reason: null };
  opts.log(`building the app into ${benchDistDir()} (${reason})${opts.full ? '' : ' — compile mode'}…`);
  const t0 = Date.now();
  const args = ['build', ...(opts.full ? [] : ['--experimental-build-mode=compile'])];
  const r = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'next'), args, {
    cwd: ROOT,
    env: { ...process.env, JOBDECK_NEXT_DIST: benchDistDir(), NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
    throw new Error(`next build failed (exit ${r.status ?? r.signal}):\n${out.slice(-4000)}`);
  }
  return { built: true, ms: Date.now() - t0, reason };
}
