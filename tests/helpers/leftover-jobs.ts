import { readdirSync, readFileSync } from 'node:fs';

/**
 * Kills the process groups of the jobs a test left running under a data folder: each attempt's
 * wrapper runs in its own process group with its attempt folder (under JOBDECK_HOME) on its
 * command line. Jobs outlive their server by design (recovery: docs/design.md), so a test that
 * stops or kills its server with a job still running would otherwise leave the job looping for
 * the rest of the run, on a machine every later file shares. Never touches this process's own
 * group. Returns the groups it signalled.
 */
export function killJobsUnder(dir: string): number[] {
  const needle = `${dir.replace(/\/+$/, '')}/`;
  return killGroupsWhere((cmd) => cmd.includes(needle)).map((g) => g.group);
}

/**
 * Kills the process groups (never this process's own) holding a process whose command line (NUL
 * between arguments) `match` accepts; returns each group with the first such command line.
 */
export function killGroupsWhere(match: (cmdline: string) => boolean): { group: number; cmd: string }[] {
  const own = groupOf(process.pid);
  const groups = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (!match(cmd)) continue;
    const g = groupOf(Number(d));
    if (g !== null && g > 1 && g !== own && !groups.has(g)) groups.set(g, cmd.replaceAll('\0', ' ').trim());
  }
  for (const g of groups.keys()) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  return [...groups].map(([group, cmd]) => ({ group, cmd }));
}

/** The process group of `pid` (field 5 of /proc/<pid>/stat, after the parenthesised name), or null. */
function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const g = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isInteger(g) ? g : null;
  } catch {
    return null;
  }
}
