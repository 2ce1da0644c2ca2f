/**
 * jobdeck's dependency rules (docs/design.md, "Wiring and dependencies"), checked by
 * `npm run lint` (scripts/lint.mjs). Dependencies run one way, top to bottom; each layer may
 * import itself, npm packages and:
 *
 *   app/, server.ts, bin/               lib/* (app/: of lib/server only services.ts, route.ts)
 *   lib/server     wiring               anything in lib
 *   lib/api        HTTP                 control, monitor, logs, store, jobs, auth, db, leaves
 *   lib/ws         WebSocket endpoints  api, auth, logs, store, jobs, db, leaves
 *   lib/auth       tokens, sessions     store, jobs, db, leaves
 *   lib/control, lib/monitor            store, executors, uploads, jobs, logs, db, leaves
 *   lib/store      statements           db, jobs, lib/log.ts, lib/generated
 *   lib/executors                       jobs, leaves
 *   lib/uploads    stored folders       jobs, leaves
 *   lib/logs                            jobs, leaves
 *   lib/db                              leaves
 *   lib/jobs       the pure job model   lib/config.ts
 *   leaves         lib/config.ts (the environment's one reader), lib/accounts.ts,
 *                  lib/project-root.ts: nothing of lib; lib/log.ts, lib/proc.ts: lib/config.ts; lib/generated/: nothing of lib
 *   lib/cli        a client             clients/ts, lib/jobs, lib/logs/protocol.ts, lib/config.ts,
 *                                       lib/project-root.ts, types of lib/api; server.ts only from commands/server.ts,
 *                                       by a dynamic import
 *   clients/ts     the TypeScript client library: npm packages only (it is published on its own)
 *   lib/ui, components/  browser code   lib/ui (components/ also components/), the BROWSER_SAFE
 *                                       modules, types of lib/api and lib/jobs; no Node built-in
 *   BROWSER_SAFE   shared pure modules  each other, types of lib/api/types.ts; no Node built-in
 *
 * Everywhere: no import cycle (type-only imports included) and no unresolvable import. Tests,
 * bench and scripts may import anything, and take part in the cycle check.
 *
 * SQL only in the store: outside lib/store and lib/db the Prisma client is imported for its
 * types only (import type) — no client, no `Prisma.sql`. A Store hands its client on without an
 * import, so the use of a model through it is checked by scripts/lint/prisma-in-store.mjs (also
 * in `npm run lint`).
 */

/** Modules the browser and the CLI share with the server: pure, no Node built-in. */
const BROWSER_SAFE = ['lib/jobs/status\\.ts', 'lib/jobs/audit-actions\\.ts', 'lib/jobs/task-graph\\.ts', 'lib/jobs/waiting\\.ts', 'lib/jobs/usage\\.ts', 'lib/logs/protocol\\.ts', 'lib/auth/secrets\\.ts', 'lib/jobs/spec/text\\.ts'];
const BROWSER_SAFE_RE = `^(${BROWSER_SAFE.join('|')})$`;
const LEAVES = '^(lib/(config|log|proc|accounts|project-root)\\.ts|lib/generated/)';

/** A rule "files under `from` import nothing of lib but `may` and `leaves`". */
function onlyImports(name, from, may, comment, leaves = LEAVES) {
  return {
    name,
    severity: 'error',
    comment,
    from: { path: from },
    to: { path: '^(lib|app|components)/|^server\\.ts$', pathNot: [`^(${from.replace(/^\^/, '')})`, leaves, ...may] },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle (type-only imports included): move the shared part to the lower module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-not-to-app',
      severity: 'error',
      comment: 'lib/ never imports app/, components/ or bin/: they sit on top of it.',
      from: { path: '^lib/' },
      to: { path: '^(app|components|bin)/' },
    },
    {
      name: 'server-wiring-from-above-only',
      severity: 'error',
      comment:
        'lib/server is the wiring: only server.ts, bin/ and app/ import it, and app/ only its route adapters (services.ts, route.ts).',
      from: { path: '^(lib|components)/', pathNot: '^lib/server/' },
      to: { path: '^lib/server/' },
    },
    {
      name: 'app-reads-services-only',
      severity: 'error',
      comment: 'app/ reads the wiring through lib/server/services.ts and lib/server/route.ts only.',
      from: { path: '^app/' },
      to: { path: '^lib/server/', pathNot: '^lib/server/(services|route)\\.ts$' },
    },
    {
      name: 'server-ts-from-cli-server-command-only',
      severity: 'error',
      comment: 'server.ts is the process entry: only the `jobdeck server` command loads it, by a dynamic import.',
      from: { pathNot: '^lib/cli/commands/server\\.ts$|^(tests|bench|scripts)/' },
      to: { path: '^server\\.ts$' },
    },
    {
      name: 'cli-server-command-imports-server-dynamically',
      severity: 'error',
      comment: 'The `jobdeck server` command loads server.ts with a dynamic import, so the other commands never load the server.',
      from: { path: '^lib/cli/commands/server\\.ts$' },
      to: { path: '^server\\.ts$', dynamic: false },
    },
    onlyImports('api-layer', '^lib/api/', ['^lib/(control|monitor|logs|store|jobs|auth|db)/'], 'lib/api (HTTP) imports control, monitor, logs, store, jobs, auth, db and the leaves only.'),
    onlyImports('ws-layer', '^lib/ws/', ['^lib/(api|auth|logs|store|jobs|db)/'], 'lib/ws imports api (views), auth, logs, store, jobs, db and the leaves only.'),
    onlyImports('auth-layer', '^lib/auth/', ['^lib/(store|jobs|db)/'], 'lib/auth sits below lib/api: it imports store, jobs, db and the leaves only.'),
    onlyImports('control-layer', '^lib/control/', ['^lib/(store|executors|uploads|jobs|logs|db)/'], 'lib/control imports store, executors, uploads, jobs, logs, db and the leaves only (never lib/monitor: the store bus wakes it).'),
    onlyImports('monitor-layer', '^lib/monitor/', ['^lib/(store|executors|uploads|jobs|logs|db)/'], 'lib/monitor imports store, executors, uploads, jobs, logs, db and the leaves only.'),
    onlyImports('store-layer', '^lib/store/', ['^lib/(db|jobs)/'], 'lib/store imports db, jobs, lib/log.ts and lib/generated only.', '^(lib/log\\.ts|lib/generated/)'),
    onlyImports('executors-layer', '^lib/executors/', ['^lib/jobs/'], 'lib/executors imports jobs and the leaves only.'),
    onlyImports('uploads-layer', '^lib/uploads/', ['^lib/jobs/'], 'lib/uploads (stored folders) imports jobs and the leaves only.'),
    onlyImports('logs-layer', '^lib/logs/', ['^lib/jobs/'], 'lib/logs imports jobs and the leaves only.'),
    onlyImports('db-layer', '^lib/db/', [], 'lib/db imports the leaves only.'),
    {
      name: 'prisma-client-in-store-only',
      severity: 'error',
      comment:
        'Only lib/store (the statements) and lib/db (the connection) use the Prisma client; elsewhere import its types only (import type) and call a lib/store function.',
      from: { path: '^(lib|app|components|bin)/|^server\\.ts$', pathNot: '^lib/(store|db|generated)/' },
      to: { path: '^lib/generated/prisma/|^node_modules/(@prisma/|pglite-prisma-adapter/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'jobs-is-pure',
      severity: 'error',
      comment: 'lib/jobs is the pure job model: it imports nothing of lib but lib/config.ts (no database, no HTTP, no logger).',
      from: { path: '^lib/jobs/' },
      to: { path: '^(lib|app|components)/|^server\\.ts$', pathNot: '^lib/(jobs/|config\\.ts$)' },
    },
    {
      name: 'leaves-are-leaves',
      severity: 'error',
      comment: 'lib/config.ts, lib/accounts.ts and lib/project-root.ts import nothing of jobdeck; lib/log.ts and lib/proc.ts only lib/config.ts (the one reader of the environment).',
      from: { path: '^lib/(config|log|proc|accounts|project-root)\\.ts$' },
      to: { path: '^(lib|app|components)/|^server\\.ts$', pathNot: '^lib/config\\.ts$' },
    },
    {
      name: 'cli-is-a-client',
      severity: 'error',
      comment: 'lib/cli talks to a server over HTTP/WebSocket through the client library (clients/ts): it imports it, lib/jobs, lib/logs/protocol.ts, lib/config.ts, lib/project-root.ts and types of lib/api only.',
      from: { path: '^lib/cli/' },
      to: { path: '^(lib|app|components|clients)/', pathNot: ['^lib/(cli|jobs|api)/', '^lib/logs/protocol\\.ts$', '^lib/config\\.ts$', '^lib/project-root\\.ts$', '^clients/ts/src/'] },
    },
    {
      name: 'client-library-stands-alone',
      severity: 'error',
      comment: 'clients/ts is published as its own package: it imports npm packages and itself, nothing of the repository.',
      from: { path: '^clients/ts/' },
      to: { path: '^(lib|app|components|bin|tests|scripts|bench)/|^server\\.ts$' },
    },
    {
      name: 'only-the-cli-uses-the-client-library',
      severity: 'error',
      comment: 'Of lib/, app/ and components/, only lib/cli talks to a server through the client library (the server and the dashboard are not its clients).',
      from: { path: '^(lib|app|components)/', pathNot: '^lib/cli/' },
      to: { path: '^clients/' },
    },
    {
      name: 'cli-api-types-only',
      severity: 'error',
      comment: 'lib/cli imports lib/api for its types only (import type): the CLI never runs server code.',
      from: { path: '^lib/cli/' },
      to: { path: '^lib/api/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'browser-no-node',
      severity: 'error',
      comment: 'lib/ui and components/ run in the browser: no Node built-in module.',
      from: { path: `^(lib/ui|components)/|${BROWSER_SAFE_RE}` },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'browser-imports-browser-safe',
      severity: 'error',
      comment: `lib/ui and components/ import, of the rest of lib, only the browser-safe modules (${BROWSER_SAFE.join(', ').replace(/\\/g, '')}) and, as types (import type), lib/api and lib/jobs.`,
      from: { path: '^(lib/ui|components)/' },
      to: { path: '^lib/', pathNot: ['^lib/ui/', BROWSER_SAFE_RE, '^lib/(api|jobs)/'] },
    },
    {
      name: 'browser-server-types-only',
      severity: 'error',
      comment: 'lib/ui and components/ import lib/api and lib/jobs (outside the browser-safe modules) for their types only (import type).',
      from: { path: '^(lib/ui|components)/' },
      to: { path: '^lib/(api|jobs)/', pathNot: BROWSER_SAFE_RE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'browser-safe-stays-pure',
      severity: 'error',
      comment: 'A browser-safe module imports only other browser-safe modules (and types of lib/api/types.ts).',
      from: { path: BROWSER_SAFE_RE },
      to: { path: '^(lib|app|components)/', pathNot: [BROWSER_SAFE_RE, '^lib/api/types\\.ts$'] },
    },
    {
      name: 'browser-safe-api-types-only',
      severity: 'error',
      comment: 'A browser-safe module imports lib/api/types.ts for its types only (import type).',
      from: { path: BROWSER_SAFE_RE },
      to: { path: '^lib/api/types\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'This import resolves to no file or package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^lib/generated/'] },
    exclude: { path: ['^\\.next/', '^node_modules/', '^bench/results/'] },
    // Count `import type` too: a type-only import is still a dependency and may close a cycle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
    cache: false,
  },
};
