import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/** How many files the summary lists. */
const SHOWN = 15;

/**
 * A vitest reporter that adds one table at the end of a run: the slowest test files, each with
 * its wall time (collect + tests + hooks), its test count and its project. `npm test` and the
 * `test:*` scripts use it beside the default reporter, so that every CI log shows where the time
 * went (docs/testing.md, "Where the time goes").
 *
 * It also writes every file's wall time to the file JOBDECK_TEST_DURATIONS names (`npm test`:
 * .jobdeck-test/file-durations.json), and the failed tests, one line each (file, test, the error's first line), to the file
 * JOBDECK_TEST_FAILURES names: `npm test` repeats them in its last lines, so a log whose middle is
 * cut still says what failed.
 */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
    writeFailures(modules, unhandled);
    writeDurations(modules);
    const rows = modules
      .map((m) => {
        const d = m.diagnostic();
        let tests = 0;
        for (const _ of m.children.allTests()) tests++;
        return { file: m.relativeModuleId, project: m.project.name, ms: d.collectDuration + d.duration, cpuMs: m.meta().cpuMs, tests };
      })
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN);
    if (rows.length === 0) return;
    const width = Math.max(...rows.map((r) => r.file.length));
    const cpu = (ms: number | undefined) => (ms === undefined ? '     -' : `${(ms / 1000).toFixed(1).padStart(6)}`);
    const lines = rows.map((r, i) => `${String(i + 1).padStart(3)}. ${r.file.padEnd(width)}  ${(r.ms / 1000).toFixed(1).padStart(7)} s  CPU ${cpu(r.cpuMs)} s  ${String(r.tests).padStart(4)} tests${r.project ? `  (${r.project})` : ''}`);
    process.stdout.write(`\nSlowest ${rows.length} test files (wall time of each file, collect + tests + hooks; CPU: the file's process and the children it reaped):\n${lines.join('\n')}\n`);
    const all = modules.map((m) => m.meta().cpuMs ?? 0);
    const byCpu = modules
      .map((m, i) => ({ file: m.relativeModuleId, cpuMs: all[i] }))
      .sort((a, b) => b.cpuMs - a.cpuMs)
      .slice(0, SHOWN);
    const total = all.reduce((a, b) => a + b, 0);
    const cw = Math.max(...byCpu.map((r) => r.file.length));
    process.stdout.write(`\nMost CPU, ${byCpu.length} test files (of ${(total / 1000).toFixed(0)} s in all files):\n${byCpu.map((r, i) => `${String(i + 1).padStart(3)}. ${r.file.padEnd(cw)}  ${cpu(r.cpuMs)} s`).join('\n')}\n`);
  }
}

/**
 * Each file's wall time (s, one decimal) to the file JOBDECK_TEST_DURATIONS names, by file path:
 * what tests/file-durations.json is refreshed from, the order a fresh clone runs files in
 * (vitest.config.mts, docs/testing.md "Where the time goes").
 */
function writeDurations(modules: ReadonlyArray<TestModule>): void {
  const target = process.env.JOBDECK_TEST_DURATIONS;
  if (!target) return;
  const rows = modules.map((m) => {
    const d = m.diagnostic();
    return [m.relativeModuleId, Math.round((d.collectDuration + d.duration) / 100) / 10] as const;
  });
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(Object.fromEntries(rows.sort((a, b) => b[1] - a[1])), null, 1)}\n`);
}

/** The error's first line, bounded: enough to name it in a summary. */
function firstLine(err: { message?: string } | undefined): string {
  return (err?.message ?? 'unknown error').split('\n')[0].slice(0, 300);
}

/** One line per failed test, per file that failed outside its tests, per unhandled error. */
function writeFailures(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
  const target = process.env.JOBDECK_TEST_FAILURES;
  if (!target) return;
  const lines: string[] = [];
  for (const m of modules) {
    for (const err of m.errors()) lines.push(`${m.relativeModuleId}: ${firstLine(err)}`);
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state === 'failed') lines.push(`${m.relativeModuleId} > ${t.fullName}: ${firstLine(r.errors[0])}`);
    }
  }
  for (const err of unhandled) lines.push(`unhandled: ${firstLine(err)}`);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, lines.map((l) => `${l}\n`).join(''));
}
