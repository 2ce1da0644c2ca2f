/**
 * The one freshness rule of jobdeck's bundles (scripts/build-cli.mjs, scripts/build-server.mjs):
 * a bundle is run only while none of the files it was made of — listed beside it in
 * `inputs.json`, paths relative to the project — is newer than it. Otherwise the launchers
 * (bin/jobdeck.mjs, bin/server.mjs) run the TypeScript sources with tsx: the same code, slower.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** True when `<dir>/<file>` exists and no input listed in `<dir>/inputs.json` is newer. */
export function bundleFresh(root, dir, file) {
  try {
    const built = statSync(path.join(dir, file)).mtimeMs;
    const inputs = JSON.parse(readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
    return Array.isArray(inputs) && inputs.length > 0 && inputs.every((f) => statSync(path.join(root, f)).mtimeMs <= built);
  } catch {
    return false;
  }
}

/** Registers tsx's loader hooks (ES modules and CommonJS) in this process, to run the sources. */
export async function registerTsx() {
  const { register: registerEsm } = await import('tsx/esm/api');
  const { register: registerCjs } = await import('tsx/cjs/api');
  registerEsm();
  registerCjs();
}
