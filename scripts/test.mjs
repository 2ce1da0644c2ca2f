// `npm test`: everything the tests need, then every suite, in order:
//   1. services (PostgreSQL started + role; Debian Chromium) — scripts/ensure-services.sh
//   2. lint: dependency rules, oxlint, tsc --noEmit — scripts/lint.mjs (`npm run lint`)
//   3. the Next.js production build the server tests and browser tests run against
//   4. vitest: unit + integration (PGlite and PostgreSQL, real processes, real server)
//   5. Playwright: end-to-end in Chromium against a real server
// Stops at the first failing step and exits with its code.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const steps = [
  ['services', 'bash', [path.join(root, 'scripts', 'ensure-services.sh')]],
  ['lint', process.execPath, [path.join(root, 'scripts', 'lint.mjs')]],
  ['build', bin('next'), ['build']],
  ['unit + integration', bin('vitest'), ['run', ...process.argv.slice(2)]],
];
if (process.env.JOBDECK_SKIP_E2E !== '1') steps.push(['end-to-end', bin('playwright'), ['test']]);

for (const [name, cmd, args] of steps) {
  console.log(`\n=== npm test: ${name} ===`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  const code = r.status ?? 1;
  console.log(`=== ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s ===`);
  if (code !== 0) process.exit(code);
}
