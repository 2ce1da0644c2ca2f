import { execFileSync } from 'node:child_process';

/**
 * GPUs of this machine for the local executor (docs/spec.md "accelerators"):
 * JOBDECK_LOCAL_GPUS when set (an integer ≥ 0: the operator's word), else the `GPU n:` lines of
 * `nvidia-smi -L` (none when it is absent or fails). Counted once per process: GPUs do not come
 * and go while the server runs.
 */
let cached: number | null = null;

/** @throws Error when JOBDECK_LOCAL_GPUS is set and not an integer ≥ 0. */
export function localGpuCount(env: Record<string, string | undefined> = process.env): number {
  const raw = env.JOBDECK_LOCAL_GPUS;
  if (raw !== undefined && raw.trim() !== '') {
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`JOBDECK_LOCAL_GPUS must be an integer ≥ 0, got ${JSON.stringify(raw)}`);
    return n;
  }
  if (cached !== null) return cached;
  try {
    const out = execFileSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
    cached = out.split('\n').filter((l) => /^GPU \d+:/.test(l)).length;
  } catch {
    cached = 0;
  }
  return cached;
}
