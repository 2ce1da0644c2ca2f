// Bundles the server (server.ts, lib/ and the API routes of app/api; packages stay in
// node_modules) into one ES module, `.jobdeck-server/server.mjs`, which bin/server.mjs runs when it
// is fresh. Started through tsx's loader hooks the server spends about a quarter of its start-up
// CPU transpiling and resolving ~450 files and reading the source maps of Next's server chunks
// (tsx turns Node's source maps on); the bundle starts without either (bench/README.md "Server
// start"). Beside it, `inputs.json` lists the source files it was made of, so that the launcher
// can tell a stale bundle (then it runs the sources with tsx, as before).
//
// The pages stay Next.js's own build (.next); this bundle is the custom server that serves them,
// the API, the WebSockets and the monitor.
//
// Run by scripts/build-if-stale.mjs (`npm run build`, `npm start`'s prestart, the tests' global
// setup); `node scripts/build-server.mjs` alone builds it too.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeBundle } from './bundle.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** The bundle's folder (ignored by git). */
export const SERVER_BUNDLE_DIR = path.join(root, '.jobdeck-server');

/** `app/api/**\/route.ts`, relative to app/, sorted (the order lib/server/api-router.ts walks them). */
function routeFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^route\.(ts|js|mjs)$/.test(e.name)) out.push(p);
    }
  };
  walk(path.join(root, 'app', 'api'));
  return out.sort().map((f) => path.relative(path.join(root, 'app'), f));
}

/** `app/api` and every folder under it (relative to the project): a route added or removed changes one's time. */
function routeFolders() {
  const out = [];
  const walk = (rel) => {
    out.push(rel);
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) if (e.isDirectory()) walk(`${rel}/${e.name}`);
  };
  walk('app/api');
  return out;
}

// lib/server/api-routes-bundled.ts becomes one static import per route module.
const apiRoutes = {
  name: 'api-routes',
  setup(b) {
    const target = path.join(root, 'lib', 'server', 'api-routes-bundled.ts');
    b.onLoad({ filter: /api-routes-bundled\.ts$/ }, (a) => {
      if (a.path !== target) return undefined;
      const files = routeFiles();
      const imports = files.map((f, i) => `import * as r${i} from ${JSON.stringify(path.join(root, 'app', f))};`);
      const list = files.map((f, i) => `{ file: ${JSON.stringify(f)}, mod: r${i} }`);
      return { contents: `${imports.join('\n')}\nexport const BUNDLED_API_ROUTES = [${list.join(', ')}];\n`, loader: 'ts', resolveDir: path.dirname(target) };
    });
  },
};

/** Builds the bundle and its input list; answers the number of input files. */
export async function buildServer() {
  const inputs = await writeBundle({
    root,
    entry: path.join(root, 'server.ts'),
    dir: SERVER_BUNDLE_DIR,
    file: 'server.mjs',
    plugins: [apiRoutes],
    // Packages load from node_modules as they do under tsx (Next, Prisma's engine, PGlite's files).
    packagesExternal: true,
    // The route folders are inputs too (a route added is a new file in one of them). The Prisma
    // client under lib/generated/ is judged by the schema it is generated from: `prisma generate`
    // rewrites its files (same content) on every install.
    keepInput: (f) => !f.startsWith('lib/generated/'),
    extraInputs: [...routeFolders(), 'prisma/schema.prisma'],
  });
  return inputs.length;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = await buildServer();
  console.log(`jobdeck: server bundled (${n} source files) into ${path.relative(root, SERVER_BUNDLE_DIR)}/server.mjs`);
}
