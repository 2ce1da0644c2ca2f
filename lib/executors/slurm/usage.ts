import { jobIdOf, runSlurm } from './cli';
import type { AttemptHandle, UsageSample } from '../types';

/**
 * Resource usage of running Slurm attempts (docs/slurm.md "Resource usage"): ONE `sstat` call for
 * every running attempt of a round, over all their steps (`-a`: the batch step and, for a gang,
 * its srun steps), summing each job's steps. It needs `JobAcctGatherType=jobacct_gather/linux`
 * on the cluster (scripts/slurm-up.sh, slurm-multi-up.sh); with `jobacct_gather/none` sstat
 * answers nothing and the attempt's usage stays "not recorded". Values are as fresh as the
 * cluster's `JobAcctGatherFrequency` and whole CPU-seconds.
 */

/** `[D-]HH:MM:SS[.mmm]` or `MM:SS[.mmm]` (Slurm's CPU time) in milliseconds; null when not one. */
export function parseSlurmDuration(s: string): number | null {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$/.exec(s.trim());
  if (!m) return null;
  const [, d, h, min, sec] = m;
  return Math.round(((Number(d ?? 0) * 24 + Number(h ?? 0)) * 3600 + Number(min) * 60 + Number(sec)) * 1000);
}

const UNIT: Record<string, number> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40, P: 2 ** 50 };

/** A Slurm size (`117292K`, `1.5G`, `2048`) in bytes; null when not one. */
export function parseSlurmSize(s: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([KMGTP]?)$/.exec(s.trim());
  return m ? Math.round(Number(m[1]) * UNIT[m[2]]) : null;
}

/**
 * Parses `sstat -a -n -P --format=JobID,TRESUsageInTot,NTasks` into each job's usage (its steps
 * summed): CPU from `cpu=`, memory from `mem=` of TRESUsageInTot, processes from NTasks.
 */
export function parseSstat(text: string): Map<string, UsageSample> {
  const out = new Map<string, UsageSample>();
  for (const line of text.split('\n')) {
    const [step, tres, ntasks] = line.split('|');
    const job = /^(\d+)(?:\.|$)/.exec(step?.trim() ?? '')?.[1];
    if (!job || tres === undefined) continue;
    const fields = new Map(tres.split(',').map((kv) => kv.split('=') as [string, string]));
    const cpu = parseSlurmDuration(fields.get('cpu') ?? '');
    const mem = parseSlurmSize(fields.get('mem') ?? '');
    if (cpu === null && mem === null) continue;
    const prev = out.get(job) ?? { cpuMs: 0, rssBytes: 0, procs: 0 };
    out.set(job, { cpuMs: prev.cpuMs + (cpu ?? 0), rssBytes: prev.rssBytes + (mem ?? 0), procs: prev.procs + (Number(ntasks) || 0) });
  }
  return out;
}

/** Executor.sample for Slurm attempts: one sstat for all of them. */
export async function sampleSlurm(handles: readonly AttemptHandle[]): Promise<Array<UsageSample | null>> {
  const ids = handles.map(jobIdOf);
  const known = [...new Set(ids.filter((id): id is string => id !== null))];
  if (known.length === 0) return handles.map(() => null);
  // A job that ended since the round's read makes sstat complain on stderr (and exit non-zero):
  // the others' lines are still on stdout.
  const r = await runSlurm('sstat', ['-a', '-n', '-P', '-j', known.join(','), '--format=JobID,TRESUsageInTot,NTasks'], { timeoutMs: 10_000 });
  const usage = parseSstat(r.stdout);
  return ids.map((id) => (id === null ? null : (usage.get(id) ?? null)));
}
