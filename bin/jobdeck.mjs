#!/usr/bin/env node
/**
 * The `jobdeck` command (package.json "bin"; `npx jobdeck` from the project folder).
 *
 * Runs the CLI (lib/cli/main.ts) in THIS process — no child process, so stdin/stdout/stderr,
 * Ctrl-C and the exit code are the command's own. It runs the bundle scripts/build-cli.mjs made
 * (`.jobdeck-cli/jobdeck.mjs`) when no source file it was made of changed since, else the
 * TypeScript sources with tsx's loader hooks — the same code, the bundle only starts faster.
 * `jobdeck server` always runs from the sources. Paths are resolved from this file's location,
 * so it works from any working directory.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleFresh, registerTsx } from './bundle.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DIR = path.join(root, '.jobdeck-cli');
const BUNDLE = path.join(DIR, 'jobdeck.mjs');

// A closed stdout (`jobdeck queue | head -1`) ends the command quietly. While a job is being
// followed, the follower has its own listener and stops with "stopped following" (exit 5).
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
  if (process.stdout.listenerCount('error') === 1) process.exit(0);
});

const args = process.argv.slice(2);
let mod;
if (!args.includes('server') && bundleFresh(root, DIR, 'jobdeck.mjs')) {
  mod = await import(new URL(`file://${BUNDLE}`).href);
} else {
  await registerTsx();
  mod = await import(new URL('../lib/cli/main.ts', import.meta.url).href);
}
// The project has no "type": "module", so tsx loads .ts as CommonJS: exports sit on `default`.
const main = mod.main ?? mod.default?.main;
const code = await main(args);

// Let stdout/stderr drain (they may be pipes) before exiting with the code.
const drain = (s) => new Promise((resolve) => (s.writableLength ? s.write('', () => resolve()) : resolve()));
await Promise.all([drain(process.stdout), drain(process.stderr)]);
process.exit(code);
