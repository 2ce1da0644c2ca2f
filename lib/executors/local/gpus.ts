import { execFile, execFileSync } from 'node:child_process';
import { setting } from '../../config';
import { parseComputeApps, parseLocalGpus, parseNvidiaSmiGpus, type GpuDevice } from '../../jobs/gpus';

/**
 * The local executor's GPUs as devices (docs/spec.md "accelerators", docs/design.md §6 "GPUs"):
 * `JOBDECK_LOCAL_GPUS` when set (the operator's word: `4`, `A100:4`, `A100:2,V100:2`), else what
 * `nvidia-smi --query-gpu` lists (index, name, memory, uuid; none when it is absent or fails).
 * Read once per process: GPUs do not come and go while the server runs. And which devices
 * processes hold that jobdeck did not grant (`nvidia-smi --query-compute-apps`), re-read at
 * most every few seconds.
 */

let cached: GpuDevice[] | null = null;

const QUERY = ['--query-gpu=index,name,memory.total,uuid', '--format=csv,noheader,nounits'];

/**
 * This machine's GPUs (see the module comment).
 * @throws Error naming JOBDECK_LOCAL_GPUS when it is set and malformed.
 */
export function localGpuDevices(env: Record<string, string | undefined> = process.env): GpuDevice[] {
  const declared = parseLocalGpus(setting('JOBDECK_LOCAL_GPUS', env) ?? undefined);
  if (declared) return declared;
  if (cached !== null) return cached;
  try {
    cached = parseNvidiaSmiGpus(execFileSync('nvidia-smi', QUERY, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch {
    cached = [];
  }
  return cached;
}

/** How long a look at the devices' processes is reused (ms). */
const HOLDS_TTL_MS = 5000;

/**
 * A reader of the device indices that processes hold now (`nvidia-smi --query-compute-apps`),
 * each answer reused for a few seconds; empty when nvidia-smi is absent, fails, or the devices
 * were declared by JOBDECK_LOCAL_GPUS without uuids to match. Admission leaves the held devices
 * that are not granted out of its grants.
 */
export function gpuHoldsReader(devices: () => readonly GpuDevice[]): () => Promise<number[]> {
  let last: { at: number; held: number[] } | null = null;
  let inFlight: Promise<number[]> | null = null;
  const look = (): Promise<number[]> =>
    new Promise((resolve) => {
      const byUuid = new Map(devices().flatMap((d) => (d.uuid ? [[d.uuid, d.index] as const] : [])));
      if (byUuid.size === 0) return resolve([]);
      execFile('nvidia-smi', ['--query-compute-apps=pid,gpu_uuid', '--format=csv,noheader'], { encoding: 'utf8', timeout: 10_000 }, (err, out) => {
        if (err) return resolve([]);
        const held = new Set(parseComputeApps(out).flatMap((a) => (byUuid.has(a.uuid) ? [byUuid.get(a.uuid)!] : [])));
        resolve([...held].sort((a, b) => a - b));
      });
    });
  return async () => {
    if (last && Date.now() - last.at < HOLDS_TTL_MS) return last.held;
    inFlight ??= look().then((held) => {
      last = { at: Date.now(), held };
      inFlight = null;
      return held;
    });
    return inFlight;
  };
}
