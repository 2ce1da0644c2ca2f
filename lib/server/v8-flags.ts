import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DEFAULT_V8_FLAGS, setting } from '../config';

/**
 * V8 flags the server applies to itself at start (`JOBDECK_V8_FLAGS`, space-separated; replaces
 * this default; empty for none). Only flags V8 reads while running take effect this way (heap
 * growth does; flags read once at V8's start-up do not: pass those to `node` itself).
 *
 * `--heap-growing-percent=50`: after each full garbage collection V8 lets the old generation grow
 * to 1.5× what survived, instead of up to 4× (V8's heap-controller.cc picks 1.1–4× from GC and
 * allocation speed). A burst of submissions otherwise leaves the heap at ~270 MB with ~90 MB
 * alive, and nothing collects it while the server idles: its steady allocations die young and
 * V8's memory reducer waits for an allocation rate under ~1 MB/s. With 1,000 running jobs it
 * saves ~90 MB of steady RSS at the same speed (bench/README.md, fixes table).
 */
export { DEFAULT_V8_FLAGS } from '../config';

/**
 * Flags V8 reads only when it starts, so they go on node's command line: `npm start` and
 * `npm run dev` (package.json) pass them, and so do the test and bench launchers
 * (tests/helpers/server.ts, bench/lib/server.ts); a unit test keeps package.json in step.
 * A server started without them (e.g. `jobdeck server`, which runs in the CLI's own node) says so
 * in its log; `NODE_OPTIONS` may carry them too.
 *
 * `--max-semi-space-size=4`: each of the young generation's two semi-spaces is at most 4 MB
 * (V8's 64-bit default: 16 MB). Start-up's module loading grows the young generation to its cap,
 * and V8 keeps it while the server idles: ~30–45 MB less RSS everywhere, at the same speed or
 * better (a young generation that fits the caches; bench/README.md, fixes table).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/**
 * The SERVER_NODE_FLAGS this process did not get, from node's own arguments or `NODE_OPTIONS`
 * (the flag's name counts, whatever its value). @returns [] when none is missing.
 */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((a) => a.split('=')[0].replace(/_/g, '-'));
  return SERVER_NODE_FLAGS.filter((f) => !given.includes(f.split('=')[0]));
}

/**
 * The flags of a `JOBDECK_V8_FLAGS` value: `--flag` / `--flag=value` items separated by spaces.
 * @throws Error naming the variable and the bad item otherwise.
 */
export function parseV8Flags(raw: string): string[] {
  const flags = raw.split(/\s+/).filter(Boolean);
  for (const f of flags) {
    if (!/^--[a-z0-9][a-z0-9_-]*(=\S+)?$/i.test(f)) throw new Error(`JOBDECK_V8_FLAGS: expected --flag or --flag=value items separated by spaces, got "${f}"`);
  }
  return flags;
}

/**
 * Checks flags with a throwaway `node <flag> -e 0` each (V8 itself only prints a warning for an
 * unknown flag or a bad value and goes on). Run for an operator's JOBDECK_V8_FLAGS only (~40 ms a
 * flag, at start); the default is covered by tests/unit/v8-flags.test.ts.
 * @throws Error naming the variable, the flag and what node said, for the first flag it refuses.
 */
export function checkV8Flags(flags: readonly string[]): void {
  for (const f of flags) {
    const r = spawnSync(process.execPath, [f, '-e', '0'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 10_000 });
    if (r.status !== 0) {
      const said = `${r.stderr ?? ''}`.split('\n').find((l) => l.trim()) ?? `exit ${r.status}`;
      throw new Error(`JOBDECK_V8_FLAGS: node refuses "${f}" (${said.trim()})`);
    }
  }
}

/**
 * Applies `JOBDECK_V8_FLAGS` (or DEFAULT_V8_FLAGS when unset) with v8.setFlagsFromString; returns
 * the flags applied. @throws Error before applying any when one item is malformed (parseV8Flags)
 * or, for a value set in the environment, one that node refuses (checkV8Flags).
 */
export function applyV8Flags(env: Record<string, string | undefined> = process.env): string[] {
  const set = setting('JOBDECK_V8_FLAGS', env);
  const flags = parseV8Flags(set ?? DEFAULT_V8_FLAGS);
  if (set !== undefined) checkV8Flags(flags);
  for (const f of flags) v8.setFlagsFromString(f);
  return flags;
}

/** How long after `listening` the server collects start-up's garbage (collectStartupGarbage). */
export const STARTUP_GC_DELAY_MS = 5_000;

/**
 * One full garbage collection, for what start-up left behind: module loading, Next's prepare,
 * migrations, the recovery, the query compiler's base64 text (docs/design.md "Memory"). An idle
 * server's allocations die young, so V8 starts no full collection by itself and that garbage —
 * ~10–15 MB, much of it in pages of large objects — would stay resident until the first burst of
 * work. Takes ~80–130 ms of the event loop, once. `gc` is reached the documented way for a
 * running process: `--expose-gc` set with v8.setFlagsFromString, then read from a new context.
 * @returns the collection's duration, ms.
 */
export function collectStartupGarbage(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const t0 = performance.now();
  gc();
  return performance.now() - t0;
}
