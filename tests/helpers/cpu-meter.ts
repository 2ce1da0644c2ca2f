/**
 * Measures each test file's CPU (a setup file of both projects, vitest.config.mts): the test
 * process's own time plus that of the children it started and reaped meanwhile — the servers,
 * CLIs and tools a file spawns — read from /proc/self/stat at the file's start and end, in ms.
 * The slowest-files table shows it beside the wall time (tests/helpers/slowest-reporter.ts): on
 * a machine whose cores are all busy, a file's CPU is what it costs the whole run. Processes
 * that left their parent (a job's detached wrapper) are not counted.
 */
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** The file's CPU in ms (own + reaped children), set when its last hook ran. */
    cpuMs?: number;
  }
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** This process's CPU so far, its own and its reaped children's, in ms (0 without /proc). */
function cpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14 … cstime 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICKS;
  } catch {
    return 0;
  }
}

// Read when vitest runs this setup file, before it imports the test file: the file's imports count.
const start = cpuMs();
// vitest 4 hands the file's suite as the second argument (the first is the fixture context).
afterAll(({}, suite) => {
  suite.meta.cpuMs = cpuMs() - start;
});
