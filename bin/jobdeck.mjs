#!/usr/bin/env node
/**
 * The `jobdeck` command (package.json "bin"; `npx jobdeck` from the project folder).
 *
 * Runs the TypeScript CLI (lib/cli/main.ts) in THIS process with tsx's loader hooks — no child
 * process, so stdin/stdout/stderr, Ctrl-C and the exit code are the command's own. Paths are
 * resolved from this file's location, so it works from any working directory.
 */
import { register as registerEsm } from 'tsx/esm/api';
import { register as registerCjs } from 'tsx/cjs/api';

registerEsm();
registerCjs();

// A closed stdout (`jobdeck queue | head -1`) ends the command quietly. While a job is being
// followed, the follower has its own listener and stops with "stopped following" (exit 5).
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
  if (process.stdout.listenerCount('error') === 1) process.exit(0);
});

const mod = await import(new URL('../lib/cli/main.ts', import.meta.url).href);
// The project has no "type": "module", so tsx loads .ts as CommonJS: exports sit on `default`.
const main = mod.main ?? mod.default?.main;
const code = await main(process.argv.slice(2));

// Let stdout/stderr drain (they may be pipes) before exiting with the code.
const drain = (s) => new Promise((resolve) => (s.writableLength ? s.write('', () => resolve()) : resolve()));
await Promise.all([drain(process.stdout), drain(process.stderr)]);
process.exit(code);
