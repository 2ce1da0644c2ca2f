// Preloaded (`node --import`) by the dependency check only: dependency-cruiser parses TypeScript
// with the `typescript` package's compiler API, which the project's TypeScript 7 (the native
// compiler) does not have. This points dependency-cruiser's `typescript` (require and import) at
// the TypeScript 5 installed beside it as `typescript5`; everything else keeps TypeScript 7.
import Module, { register } from 'node:module';

const cruiser = '/node_modules/dependency-cruiser/';
const aliased = (request) => (request === 'typescript' || request.startsWith('typescript/') ? `typescript5${request.slice('typescript'.length)}` : null);

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const to = parent?.filename?.includes(cruiser) ? aliased(request) : null;
  return resolveFilename.call(this, to ?? request, parent, ...rest);
};

register(
  `data:text/javascript,${encodeURIComponent(`
    const aliased = ${aliased.toString()};
    export async function resolve(specifier, context, next) {
      const to = context.parentURL?.includes(${JSON.stringify(cruiser)}) ? aliased(specifier) : null;
      return next(to ?? specifier, context);
    }`)}`,
);

// Without TypeScript dependency-cruiser falls back to a loose JavaScript parse that resolves no
// import to a .ts file, and every rule would hold: refuse to go on unless server.ts's imports
// resolve to its .ts modules.
const { cruise } = await import('dependency-cruiser');
const probe = await cruise(['server.ts'], { maxDepth: 1, tsPreCompilationDeps: true, doNotFollow: { path: 'node_modules' } });
const entry = probe.output.modules.find((m) => m.source === 'server.ts');
if (!entry?.dependencies.some((d) => d.resolved.endsWith('.ts'))) {
  throw new Error('dependency-cruiser parses no TypeScript (is the typescript5 package installed?): the dependency check would see no .ts file');
}
