import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const root = path.dirname(fileURLToPath(import.meta.url));

/** The files that hold the Slurm clusters' lock (tests/helpers/slurm-lock.ts) for their whole run. */
const SLURM = /\/slurm-[^/]*\.test\.ts$/;

/**
 * The order vitest hands files to its workers (docs/testing.md, "Where the time goes"):
 *
 * - Long files first, so that none starts last and runs alone: vitest's own order (the last
 *   run's durations) when it has them; on a fresh clone, which has none, by the wall times in
 *   tests/file-durations.json (a full run's, kept in the repository), a file it does not list
 *   estimated from its size. By size alone, two small files that mostly wait (a 20 s silence, a
 *   Slurm limit) started last and the cores idled at the end.
 * - The Slurm suites spread evenly through the queue instead of side by side: each holds the
 *   clusters' lock for its whole run, so a second one started meanwhile would keep a worker
 *   waiting instead of testing.
 */
class SpreadSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const known = base.filter((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${f.moduleId.slice(this.ctx.config.root.length + 1)}`)).length;
    const ordered = known >= base.length / 2 ? base : byKnownDurations(base);
    const slurm = ordered.filter((f) => SLURM.test(f.moduleId));
    if (slurm.length < 2) return ordered;
    // Spread over the Slurm files' own project (the unit files after it are short).
    const project = slurm[0].project.name;
    const rest = ordered.filter((f) => !SLURM.test(f.moduleId));
    const span = rest.filter((f) => f.project.name === project).length;
    const gap = Math.max(1, Math.floor(span / slurm.length));
    const out: TestSpecification[] = [];
    let seen = 0;
    for (const f of rest) {
      if (f.project.name === project && seen++ % gap === 0 && slurm.length) out.push(slurm.shift()!);
      out.push(f);
    }
    return [...slurm, ...out];
  }
}

/** Keeps vitest's order of projects (they run one after the other). */
function projectRank(a: TestSpecification, b: TestSpecification): number {
  return a.project.name === b.project.name ? 0 : a.project.name < b.project.name ? -1 : 1;
}

/**
 * The files longest first by tests/file-durations.json (`{ "tests/…": seconds }`, written by the
 * slowest-files reporter: docs/testing.md); one it does not list counts its size times the listed
 * files' seconds per byte. Projects keep their order.
 */
function byKnownDurations(files: TestSpecification[]): TestSpecification[] {
  let listed: Record<string, number> = {};
  try {
    listed = JSON.parse(readFileSync(path.join(root, 'tests', 'file-durations.json'), 'utf8')) as Record<string, number>;
  } catch {
    // none: sizes alone
  }
  const rel = (f: TestSpecification) => path.relative(root, f.moduleId);
  const known = files.filter((f) => typeof listed[rel(f)] === 'number');
  const bytes = known.reduce((n, f) => n + size(f), 0);
  const perByte = bytes > 0 ? known.reduce((n, f) => n + listed[rel(f)], 0) / bytes : 1;
  const seconds = (f: TestSpecification) => listed[rel(f)] ?? size(f) * perByte;
  return [...files].sort((a, b) => projectRank(a, b) || seconds(b) - seconds(a));
}

function size(f: TestSpecification): number {
  try {
    return statSync(f.moduleId).size;
  } catch {
    return 0;
  }
}

/**
 * Two projects (docs/testing.md, "Running"): `unit` (tests/unit: pure functions, seconds, no
 * services) and `integration` (tests/integration: databases, processes, servers). Its global
 * setup builds the Next.js app when the sources changed since the last build and makes the
 * migrated database templates every suite starts from (tests/helpers/global-setup.ts).
 *
 * Files run side by side in JOBDECK_TEST_WORKERS processes (default 4): most integration files
 * spend their time waiting for processes, servers and databases, not on a CPU, so more files than
 * cores keep both cores busy. Every test proves order by events and counts, never by the clock,
 * so a slower file is still a passing one.
 */
export default defineConfig({
  resolve: { alias: { '@': root } },
  test: {
    // Hang guards, not speed targets: generous enough for a machine whose cores are all busy.
    // A test or hook names no shorter limit of its own (docs/testing.md, "Time").
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: Number(process.env.JOBDECK_TEST_WORKERS) || 4,
    reporters: ['default', './tests/helpers/slowest-reporter.ts'],
    // Each file's CPU for the slowest-files table (docs/testing.md, "Where the time goes"); each
    // file's environment given back after it (its worker runs the next file: no isolation).
    setupFiles: ['./tests/helpers/cpu-meter.ts', './tests/helpers/env-guard.ts'],
    // Tests run as root, where a jobdeck isolates by default (each job as its user's OS account:
    // docs/design.md §16); the suites were written for jobs as the server's own user, so every
    // server and CLI they start runs unisolated unless a test says otherwise — the isolation
    // suites set JOBDECK_ISOLATION=on for their servers (docs/testing.md, "Isolation").
    env: { JOBDECK_ISOLATION: process.env.JOBDECK_ISOLATION ?? 'off' },
    // Long files first, the Slurm suites (one lock) spread apart: SpreadSequencer above.
    sequence: { sequencer: SpreadSequencer },
    projects: [
      // Unit files share their worker's modules (no isolation): they test pure functions, and a
      // fresh module graph per file cost more than the tests themselves (78 files: 55 s of wall
      // and 49 s of CPU with isolation, 18 s and 26 s without, docs/testing.md).
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], isolate: false } },
      // Integration files too (measured: 681 → 612 s of wall and 1,074 → 979 s of CPU for the 116
      // files; module loading 110 → 20 s): what a file changes in its process it gives back —
      // the environment by tests/helpers/env-guard.ts, servers, databases and timers by its hooks.
      { extends: true, test: { name: 'integration', include: ['tests/integration/**/*.test.ts'], globalSetup: ['tests/helpers/global-setup.ts'], isolate: false } },
    ],
  },
});
