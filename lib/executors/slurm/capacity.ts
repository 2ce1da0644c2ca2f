import { execFileSync } from 'node:child_process';
import { logger } from '../../log';
import { runSlurm, SlurmUnavailableError } from './cli';

/**
 * The Slurm executor's admission budget: the partition's total CPUs from `sinfo`, cached and
 * refreshed in the background, because capacity() is called synchronously on the monitor's
 * admission path and must not wait for the controller there (docs/slurm.md).
 */

// Partition, node count, CPUs (A/I/O/T last, as parseCapacity reads them).
const SINFO_ARGS = ['-h', '-o', '%P %D %C'];

/**
 * Total CPUs of `partition` (else the default one, marked `*`, or the only one) in the output of
 * `sinfo -h -o '%P %C'` (CPUs as A/I/O/T, T taken). @throws Error when the output has no count.
 */
export function parseCapacity(out: string, partition: string | undefined): number {
  const lines = out.split('\n').map((l) => l.trim()).filter(Boolean);
  const pick = partition
    ? lines.find((l) => l.split(/\s+/)[0].replace(/\*$/, '') === partition)
    : (lines.find((l) => l.split(/\s+/)[0].endsWith('*')) ?? (lines.length === 1 ? lines[0] : undefined));
  const m = pick ? /\s(\d+)\/(\d+)\/(\d+)\/(\d+)$/.exec(pick) : null;
  if (!m) throw new Error(`Slurm executor: no CPU count for partition ${partition ?? '(default)'} in sinfo output ${JSON.stringify(out.slice(0, 200))}`);
  return Number(m[4]);
}

/**
 * Nodes of `partition` (chosen as in parseCapacity) in the output of `sinfo -h -o '%P %D %C'`.
 * @throws Error when the output has no such line.
 */
export function parseNodes(out: string, partition: string | undefined): number {
  const lines = out.split('\n').map((l) => l.trim()).filter(Boolean);
  const pick = partition
    ? lines.find((l) => l.split(/\s+/)[0].replace(/\*$/, '') === partition)
    : (lines.find((l) => l.split(/\s+/)[0].endsWith('*')) ?? (lines.length === 1 ? lines[0] : undefined));
  const n = pick ? Number(pick.split(/\s+/)[1]) : NaN;
  if (!Number.isInteger(n) || n < 0) throw new Error(`Slurm executor: no node count for partition ${partition ?? '(default)'} in sinfo output ${JSON.stringify(out.slice(0, 200))}`);
  return n;
}

/**
 * The capacity() of a Slurm executor on `partition`, reusing a count for `ttlMs` (see below).
 */
export function slurmCapacity(partition: string | undefined, ttlMs: number): () => { cpus: number; nodes: number } {
  let cap: { cpus: number; nodes: number; atMs: number } | null = null;
  let refreshing = false;

  function refresh(): void {
    if (refreshing) return;
    refreshing = true;
    runSlurm('sinfo', SINFO_ARGS, { timeoutMs: 30_000 })
      .then((r) => {
        if (r.code === 0) cap = { cpus: parseCapacity(r.stdout, partition), nodes: parseNodes(r.stdout, partition), atMs: Date.now() };
      })
      .catch((err) => logger().warn({ err }, 'slurm executor: sinfo failed; keeping the last CPU count'))
      .finally(() => (refreshing = false));
  }

  /**
   * CPUs and nodes of the partition (total, including busy and down nodes: Slurm queues what does
   * not fit).
   * Cached `ttlMs`, refreshed in the background; the very first call asks synchronously
   * (`scontrol ping` then `sinfo`, a few ms).
   * @throws SlurmUnavailableError when the first count cannot be had (controller down): the caller's jobs wait.
   */
  return function capacity(): { cpus: number; nodes: number } {
    if (cap) {
      if (Date.now() - cap.atMs > ttlMs) refresh();
      return { cpus: cap.cpus, nodes: cap.nodes };
    }
    try {
      execFileSync('scontrol', ['ping'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = execFileSync('sinfo', SINFO_ARGS, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
      cap = { cpus: parseCapacity(out, partition), nodes: parseNodes(out, partition), atMs: Date.now() };
      return { cpus: cap.cpus, nodes: cap.nodes };
    } catch (err) {
      throw new SlurmUnavailableError(`Slurm executor: cannot read the cluster's CPUs: ${(err as Error).message.split('\n')[0]}`, { cause: err });
    }
  };
}
