// `npm test`: everything the tests need, then every suite:
//   1. services (PostgreSQL started + role; Debian Chromium, Prometheus, ripgrep; the Slurm
//      clusters) — scripts/ensure-services.sh
//   2. the Next.js production build the server tests and browser tests run against — only when
//      the sources changed since the last one (scripts/build-if-stale.mjs) — without Next's own
//      TypeScript pass (JOBDECK_NEXT_TYPECHECK=0): step 3 checks the same sources and the build's
//      route types with them, so the build's ~7 s pass only repeated it
//   3. lint: dependency rules, oxlint, tsc --noEmit — scripts/lint.mjs (`npm run lint`)
//   4. vitest: the unit and integration projects (vitest.config.mts); its last lines list the
//      slowest test files (tests/helpers/slowest-reporter.ts)
//   5. Playwright: end-to-end in Chromium against a real server, after vitest. With
//      JOBDECK_E2E_BESIDE=1 it starts beside vitest instead (its output goes to
//      .jobdeck-test/e2e.log and is printed whole when both have ended, so the logs do not
//      interleave): measured, the browser takes a fifth of the machine while it runs and vitest's
//      files ran about twice as long meanwhile, so it is not the default (docs/testing.md).
// Stops at the first failing step of 1–3; 4 and 5 both run to their end. Exits with the first
// failure's code; prints every step's time and the total either way, so a CI log shows where the
// time goes. Arguments go to vitest (`npm test -- tests/unit` runs those files, and Playwright);
// JOBDECK_SKIP_E2E=1 leaves Playwright out.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
// vitest's failed tests, one a line (tests/helpers/slowest-reporter.ts), repeated in the summary.
const failures = path.join(root, '.jobdeck-test', 'vitest-failures.txt');
// Each file's wall time, what tests/file-durations.json is refreshed from (vitest.config.mts).
const durations = path.join(root, '.jobdeck-test', 'file-durations.json');
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', JOBDECK_TEST_FAILURES: failures, JOBDECK_TEST_DURATIONS: durations };
const serial = [
  ['services', 'bash', [path.join(root, 'scripts', 'ensure-services.sh')]],
  ['build', process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { JOBDECK_NEXT_TYPECHECK: '0' }],
  ['lint', process.execPath, [path.join(root, 'scripts', 'lint.mjs')]],
];
const vitest = ['unit + integration', bin('vitest'), ['run', ...process.argv.slice(2)]];
const e2e = process.env.JOBDECK_SKIP_E2E === '1' ? null : ['end-to-end', bin('playwright'), ['test']];
const names = [...serial, vitest, ...(e2e ? [e2e] : [])].map(([name]) => name);

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const clock = (ms) => `${Math.floor(ms / 60_000)}:${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}`;
/** @type {Map<string, {ms: number, code: number}>} */
const done = new Map();
const t00 = Date.now();

/** The steps' times and the total, in a few lines at the end of the log. */
function summary(failed) {
  const width = Math.max(...names.map((name) => name.length));
  const lines = names.map((name) => {
    const d = done.get(name);
    return `  ${name.padEnd(width)}  ${(d ? seconds(d.ms) : '-').padStart(8)}  ${!d ? 'not run' : d.code === 0 ? 'ok' : `failed (exit ${d.code})`}`;
  });
  const total = Date.now() - t00;
  console.log(`\n=== npm test: ${failed ? 'FAILED' : 'ok'} in ${seconds(total)} (${clock(total)}) ===\n${lines.join('\n')}`);
  let failedTests = '';
  try {
    failedTests = readFileSync(failures, 'utf8').trim();
  } catch {
    // vitest did not run, or wrote nothing
  }
  if (failedTests) console.log(`\nvitest's failed tests:\n${failedTests.split('\n').map((l) => `  ${l}`).join('\n')}`);
}

function record(name, t0, code) {
  done.set(name, { ms: Date.now() - t0, code });
  console.log(`=== ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${seconds(Date.now() - t0)} ===`);
}

for (const [name, cmd, args, extra] of serial) {
  console.log(`\n=== npm test: ${name} ===`);
  const t0 = Date.now();
  const code = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...env, ...extra } }).status ?? 1;
  record(name, t0, code);
  if (code !== 0) {
    summary(true);
    process.exit(code);
  }
}

/** Runs a step as a child; resolves with its exit code (1 when killed by a signal). */
function run([name, cmd, args], stdio) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio, env });
    child.once('error', () => {
      record(name, t0, 1);
      resolve(1);
    });
    child.once('exit', (code) => {
      record(name, t0, code ?? 1);
      resolve(code ?? 1);
    });
  });
}

/** Playwright beside vitest, its output kept in a file until vitest has printed its own. */
async function endToEnd() {
  // Not under test-results/: Playwright empties that folder when it starts.
  const log = path.join(root, '.jobdeck-test', 'e2e.log');
  mkdirSync(path.dirname(log), { recursive: true });
  const out = createWriteStream(log);
  await new Promise((resolve) => out.once('open', resolve));
  console.log(`=== npm test: end-to-end started beside vitest (output: ${path.relative(root, log)}) ===`);
  const code = await run(e2e, ['ignore', out, out]);
  out.close();
  return { code, log };
}

const besideWanted = e2e !== null && process.env.JOBDECK_E2E_BESIDE === '1';
rmSync(failures, { force: true });
console.log(`\n=== npm test: ${vitest[0]}${besideWanted ? ' and end-to-end' : ''} ===`);
const beside = besideWanted ? endToEnd() : null;
const codes = [await run(vitest, 'inherit')];
if (beside) {
  const { code, log } = await beside;
  let text;
  try {
    text = readFileSync(log, 'utf8');
  } catch (err) {
    text = `(its output could not be read: ${err.message})`;
  }
  console.log(`\n=== npm test: end-to-end output ===\n${text}`);
  codes.push(code);
} else if (e2e) {
  console.log(`\n=== npm test: ${e2e[0]} ===`);
  codes.push(await run(e2e, 'inherit'));
}
const failed = codes.find((c) => c !== 0);
summary(failed !== undefined);
process.exit(failed ?? 0);
