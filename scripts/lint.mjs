// `npm run lint` (and the first step of `npm test` after services): four checks, run side by
// side, each printed whole under its name; exits non-zero when any failed.
//   1. dependencies — dependency-cruiser with .dependency-cruiser.cjs: the layering and no cycles
//      (docs/design.md, "Wiring and dependencies"); a violation names the importing and the
//      imported file and the rule.
//   2. oxlint — .oxlintrc.json: unused names, floating promises (type-aware, via tsgolint),
//      file and function length, a few correctness rules.
//   3. types — tsc --noEmit.
//   4. store-sql — scripts/lint/prisma-in-store.mjs: no Prisma model, raw statement or
//      transaction outside lib/store and lib/db (imports alone cannot show it); a use names
//      the file, line and what was used.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const SOURCES = ['app', 'components', 'lib', 'clients', 'server.ts', 'bin', 'scripts', 'tests', 'bench'];

const checks = [
  [
    'dependencies',
    process.execPath,
    [
      '--import',
      path.join(root, 'scripts', 'lint', 'typescript5-hook.mjs'),
      path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'),
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'err-long',
      ...SOURCES,
    ],
  ],
  ['oxlint', bin('oxlint'), ['--type-aware', '--max-warnings=0', '--format', 'unix', ...SOURCES]],
  ['types', bin('tsc'), ['--noEmit']],
  ['store-sql', process.execPath, [path.join(root, 'scripts', 'lint', 'prisma-in-store.mjs')]],
];

/** Runs one check, its stdout and stderr collected; resolves with its exit code, output and time. */
function run([name, cmd, args]) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (err) => resolve({ name, code: 1, out: `${out}${err.message}\n`, ms: Date.now() - t0 }));
    child.on('close', (code) => resolve({ name, code: code ?? 1, out, ms: Date.now() - t0 }));
  });
}

const t0 = Date.now();
const results = await Promise.all(checks.map(run));
for (const r of results) {
  const verdict = r.code === 0 ? 'ok' : `failed (exit ${r.code})`;
  console.log(`--- lint: ${r.name}: ${verdict} in ${(r.ms / 1000).toFixed(1)} s`);
  if (r.code !== 0 || process.env.LINT_VERBOSE === '1') process.stdout.write(r.out.endsWith('\n') || !r.out ? r.out : `${r.out}\n`);
}
const failed = results.filter((r) => r.code !== 0).map((r) => r.name);
console.log(`--- lint: ${failed.length ? `FAILED: ${failed.join(', ')}` : 'all passed'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exitCode = failed.length ? 1 : 0;
