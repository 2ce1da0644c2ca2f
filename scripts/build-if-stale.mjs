// `npm start`'s first step (package.json `prestart`): bundles the CLI and the server
// (scripts/build-cli.mjs, scripts/build-server.mjs), then builds the Next.js app only when there is no
// build yet or the sources changed since it was made, and says which, so that restarting a built
// jobdeck takes seconds instead of a full `next build`.
//
// "Changed" is judged by content: after a build this writes the SHA-1 of every source file into
// the build folder (`<dist>/jobdeck-sources.json`), and the next start compares. A build made by
// `next build` directly (CI, `npm test`) has no such record: then a source file modified after
// the build's BUILD_ID counts as a change (and, when none is, the record is written for next
// time). `npm run build` always builds. JOBDECK_NEXT_DIST picks the build folder (default .next).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleFresh } from '../bin/bundle.mjs';
import { buildCli, CLI_BUNDLE_DIR } from './build-cli.mjs';
import { buildServer, SERVER_BUNDLE_DIR } from './build-server.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** What the Next.js build is made of: folders walked recursively, and single files. */
export const SOURCE_DIRS = ['app', 'components', 'lib', 'public'];
export const SOURCE_FILES = ['next.config.mjs', 'tsconfig.json', 'package-lock.json'];
const RECORD = 'jobdeck-sources.json';

/** Every source file (paths relative to `base`, `/`-separated, sorted). */
export function sourceFiles(base = root) {
  const out = [];
  const walk = (rel) => {
    for (const e of readdirSync(path.join(base, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  for (const d of SOURCE_DIRS) if (existsSync(path.join(base, d))) walk(d);
  for (const f of SOURCE_FILES) if (existsSync(path.join(base, f))) out.push(f);
  return out.sort();
}

/** `{ path: sha1 }` of the source files. */
export function fingerprint(base = root) {
  const files = {};
  for (const f of sourceFiles(base)) files[f] = createHash('sha1').update(readFileSync(path.join(base, f))).digest('hex');
  return files;
}

const list = (names) => (names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`);

/**
 * Why the build in `dist` must be made again, or null when it is up to date.
 * `now` is the current fingerprint (the caller writes it after a build).
 */
export function staleReason(base, dist, now) {
  const buildId = path.join(base, dist, 'BUILD_ID');
  if (!existsSync(buildId)) return `no build in ${dist}/ yet`;
  let old = null;
  try {
    old = JSON.parse(readFileSync(path.join(base, dist, RECORD), 'utf8')).files ?? null;
  } catch {
    /* built by `next build` directly: judge by modification times */
  }
  if (old) {
    const changed = Object.keys(now).filter((f) => old[f] !== now[f]);
    const removed = Object.keys(old).filter((f) => !(f in now));
    if (!changed.length && !removed.length) return null;
    const parts = [];
    if (changed.length) parts.push(`${changed.length} source file${changed.length === 1 ? '' : 's'} changed since the last build (${list(changed)})`);
    if (removed.length) parts.push(`${removed.length} removed (${list(removed)})`);
    return parts.join('; ');
  }
  const builtAt = statSync(buildId).mtimeMs;
  const newer = Object.keys(now).filter((f) => statSync(path.join(base, f)).mtimeMs > builtAt);
  if (newer.length) return `${newer.length} source file${newer.length === 1 ? ' is' : 's are'} newer than the build (${list(newer)})`;
  return null;
}

async function main() {
  // The CLI's and the server's bundles first (a second or two each): they are made of the same sources.
  const force = process.argv.includes('--force');
  // Made again only when one of their inputs is newer (the launchers' own rule, bin/bundle.mjs):
  // `npm test` runs this before vitest and Playwright, whose global setups run it again side by side.
  if (force || !bundleFresh(root, CLI_BUNDLE_DIR, 'jobdeck.mjs')) await buildCli();
  if (force || !bundleFresh(root, SERVER_BUNDLE_DIR, 'server.mjs')) await buildServer();
  // JOBDECK_NEXT_DIST (lib/config.ts documents it; plain JavaScript reads it itself, like next.config.mjs).
  const dist = process.env.JOBDECK_NEXT_DIST || '.next';
  const t0 = Date.now();
  const now = fingerprint(root);
  const reason = force ? 'asked to build (--force)' : staleReason(root, dist, now);
  const record = () => writeFileSync(path.join(root, dist, RECORD), `${JSON.stringify({ files: now })}\n`);
  if (reason === null) {
    if (!existsSync(path.join(root, dist, RECORD))) record();
    console.log(`jobdeck: build is up to date (${dist}/, checked ${Object.keys(now).length} source files in ${Date.now() - t0} ms)`);
    return;
  }
  console.log(`jobdeck: building: ${reason}`);
  const next = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');
  const r = spawnSync(process.execPath, [next, 'build'], { cwd: root, stdio: 'inherit', env: { NEXT_TELEMETRY_DISABLED: '1', ...process.env } });
  if (r.status !== 0) process.exit(r.status ?? 1);
  record();
  console.log(`jobdeck: built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
