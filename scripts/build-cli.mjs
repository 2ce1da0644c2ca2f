// Bundles the CLI (lib/cli/main.ts and what it imports, node_modules included) into one ES module,
// `.jobdeck-cli/jobdeck.mjs`, which bin/jobdeck.mjs runs when it is fresh: starting the CLI through
// tsx's loader costs about a second of CPU per command (it transpiles ~70 files), the bundle about
// a quarter of that (bench/README.md "CLI start"). Beside it, `inputs.json` lists the source files
// it was made of, so that the launcher can tell a stale bundle (then it runs the sources with tsx,
// as before). `jobdeck server` is not part of it: it runs the server from the sources (the server's
// own bundle is scripts/build-server.mjs, which `npm start` runs).
//
// Run by scripts/build-if-stale.mjs (`npm run build`, `npm start`'s prestart, the tests' global
// setup); `node scripts/build-cli.mjs` alone builds it too.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeBundle } from './bundle.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** The bundle's folder (ignored by git). */
export const CLI_BUNDLE_DIR = path.join(root, '.jobdeck-cli');

// `jobdeck server` imports the server lazily; it runs from the sources (bin/jobdeck.mjs).
const serverExternal = {
  name: 'server-external',
  setup(b) {
    b.onResolve({ filter: /\/server$/ }, (a) => (a.importer.endsWith(path.join('lib', 'cli', 'commands', 'server.ts')) ? { path: a.path, external: true } : undefined));
  },
};

/** Builds the bundle and its input list; answers the number of input files. */
export async function buildCli() {
  const inputs = await writeBundle({ root, entry: path.join(root, 'lib', 'cli', 'main.ts'), dir: CLI_BUNDLE_DIR, file: 'jobdeck.mjs', plugins: [serverExternal] });
  return inputs.length;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = await buildCli();
  console.log(`jobdeck: CLI bundled (${n} source files) into ${path.relative(root, CLI_BUNDLE_DIR)}/jobdeck.mjs`);
}
