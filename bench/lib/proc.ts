/**
 * What the bench reads from /proc (Linux): a process's CPU time and resident memory, and the
 * processes a bench run left behind under one of its folders.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

let ticks: number | null = null;
/** Clock ticks per second (`getconf CLK_TCK`, 100 on Linux). */
export function clockTicks(): number {
  if (ticks === null) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** User + system CPU time a process used so far (ms), from /proc/<pid>/stat utime+stime; null when gone. */
export function cpuTimeMs(pid: number): number | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return ((utime + stime) * 1000) / clockTicks();
}

/** Resident set size (bytes) from /proc/<pid>/status VmRSS; null when gone. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Process start time (clock ticks since boot, field 22 of /proc/<pid>/stat) and state; null when gone. */
export function procStart(pid: number): { startTime: string; state: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], startTime: rest[19] };
  } catch {
    return null;
  }
}

/** This process's group id. */
function ownGroup(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[2]);
}

/** A process found by processesUnder(). */
export interface FoundProcess {
  pid: number;
  pgrp: number;
  comm: string;
  state: string;
}

/**
 * Live (non-zombie) processes whose working folder is under `dir` or whose command line names
 * it — the attempts (wrapper, setup/run shells, their children) a server started in a bench home.
 */
export function processesUnder(dir: string): FoundProcess[] {
  const out: FoundProcess[] = [];
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let match = false;
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      match = cwd === dir || cwd.startsWith(prefix);
    } catch {
      /* gone or not ours */
    }
    if (!match) {
      try {
        match = readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(prefix);
      } catch {
        /* gone */
      }
    }
    if (!match) continue;
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
      if (rest[0] === 'Z' || rest[0] === 'X') continue;
      out.push({ pid, pgrp: Number(rest[2]), comm, state: rest[0] });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** SIGKILLs every process processesUnder(dir) finds (and their groups); returns how many there were. */
export function killProcessesUnder(dir: string): number {
  const found = processesUnder(dir);
  const own = ownGroup();
  for (const p of found) {
    try {
      // Only groups an attempt leads (the wrapper is started with setsid): never our own group.
      if (p.pgrp > 1 && p.pgrp !== own && p.pgrp !== process.pid) process.kill(-p.pgrp, 'SIGKILL');
    } catch {
      /* already gone */
    }
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  return found.length;
}

/** Samples a process's RSS on an interval; `stop()` returns the samples' max and last (bytes). */
export function sampleRss(pid: number, intervalMs = 100): { stop(): { maxBytes: number; lastBytes: number; samples: number } } {
  let max = 0;
  let last = 0;
  let samples = 0;
  const take = () => {
    const r = rssBytes(pid);
    if (r !== null) {
      last = r;
      samples++;
      if (r > max) max = r;
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return { maxBytes: max, lastBytes: last, samples };
    },
  };
}

/**
 * Direct children of `pid` whose command line contains `needle` (e.g. the attempt launcher,
 * `launcher-main.mjs`), by /proc/<child>/stat's parent field; [] when none.
 */
export function childrenMatching(pid: number, needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}
