// What jobdeck's two bundles share (scripts/build-cli.mjs, scripts/build-server.mjs): one esbuild
// pass into an ES module for Node, written under a temporary name and renamed into place last (a
// launcher never imports a half-written bundle), with `inputs.json` beside it — the project files
// it was made of, which bin/bundle.mjs compares with the bundle's time.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * Bundles `entry` into `<dir>/<file>`; answers the input list it wrote. `extraInputs` are added to
 * our source files (node_modules excluded: a package changes with package-lock.json, always
 * listed); `keepInput(f)` drops source files judged another way.
 */
export async function writeBundle({ root, entry, dir, file, plugins = [], packagesExternal = false, extraInputs = [], keepInput = () => true }) {
  mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `${path.basename(file, '.mjs')}.${process.pid}.mjs`);
  const r = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: tmp,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
    plugins,
    ...(packagesExternal ? { packages: 'external' } : {}),
    // CommonJS code (packages, or ours run as CommonJS by tsx) calls require(): give the module one.
    banner: { js: "import { createRequire as __jobdeckRequire } from 'node:module'; const require = __jobdeckRequire(import.meta.url);" },
  });
  const ours = Object.keys(r.metafile.inputs).filter((f) => !f.includes('node_modules/') && keepInput(f));
  const inputs = [...ours, ...extraInputs, 'package-lock.json'];
  writeFileSync(path.join(dir, 'inputs.json'), `${JSON.stringify(inputs)}\n`);
  renameSync(tmp, path.join(dir, file));
  return inputs;
}
