/**
 * Resource usage of Slurm attempts (lib/executors/slurm/usage.ts: one sstat per sampling round)
 * on both of the project's clusters — the one-node one (scripts/slurm-up.sh) and the emulated
 * three-node one (scripts/slurm-multi-up.sh) — through a real jobdeck server process and its
 * API. A cluster whose JobAcctGatherType is none records nothing: there the attempt must say
 * "not recorded" (usage null), never zeros.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobDetail } from '../../lib/api/types';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/server';
import { waitFor } from './monitor-helpers';
import { useSlurmClusters } from '../helpers/slurm-lock';

useSlurmClusters();

const MULTI_CONF = path.join(process.env.SLURM_MULTI_BASE || '/var/lib/jobdeck-slurm-multi', 'slurm.conf');
const CLUSTERS = [
  { name: 'one-node', up: ['slurm-up.sh'], conf: undefined as string | undefined },
  { name: 'three-node', up: ['slurm-multi-up.sh', '3'], conf: MULTI_CONF },
];
const MiB = 2 ** 20;

describe.each(CLUSTERS)('resource usage on the $name Slurm cluster', ({ up, conf }) => {
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.dispose();
  });

  it('a task holding 200 MiB shows its peak (the 200 MiB and the step’s own shells and log pump) and its CPU where the cluster gathers it; "not recorded" where not', async () => {
    execFileSync('bash', [path.join(ROOT, 'scripts', up[0]), ...up.slice(1)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
    const env = { ...process.env, ...(conf ? { SLURM_CONF: conf } : {}) };
    const gather = /JobAcctGatherType\s*=\s*(\S+)/.exec(execFileSync('scontrol', ['show', 'config'], { encoding: 'utf8', env }))?.[1];
    server = await startServerProcess({ env: { JOBDECK_EXECUTOR: 'slurm', JOBDECK_RECONCILE_MS: '200', JOBDECK_USAGE_INTERVAL_MS: '500', ...(conf ? { SLURM_CONF: conf } : {}) } });
    const py = ['b = bytearray(200 * 1024 * 1024)', 'for i in range(0, len(b), 4096): b[i] = 1', 'import time', 't = time.time()', 'while time.time() - t < 8: pass'];
    const yaml = ['name: slurm-usage', 'run: |', "  python3 - <<'PY'", ...py.map((l) => `  ${l}`), '  PY', ''].join('\n');
    const r = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    expect(r.status).toBe(201);
    const { id } = (await r.json()) as { id: number };
    const job = await waitFor(async () => {
      const d = (await (await server!.api(`/api/jobs/${id}`)).json()) as JobDetail;
      return ['SUCCEEDED', 'FAILED', 'FAILED_CONTROLLER'].includes(d.status) ? d : null;
    }, `job ${id} to end`, 120_000);
    expect(job.status).toBe('SUCCEEDED');
    const usage = job.tasks[0].attemptList[0].usage;
    if (gather === 'jobacct_gather/none') {
      expect(usage).toBeNull();
      return;
    }
    expect(gather).toBe('jobacct_gather/linux');
    expect(usage).not.toBeNull();
    expect(usage!.peakRssBytes! / MiB).toBeGreaterThan(180);
    // Slurm sums the whole step: beside python's 200 MiB, the wrapper's shells and the log pump
    // (docs/design.md §8; ~5 MB resident, most of it shared pages Slurm counts again) — the local
    // executor's sampler leaves the pump out, Slurm cannot. Seen: 223.7–223.9 MiB with the pump.
    expect(usage!.peakRssBytes! / MiB).toBeLessThan(235);
    // Slurm's figures are as fresh as JobAcctGatherFrequency and in whole CPU-seconds: the busy
    // loop shows as most of a core, never more than one.
    expect(usage!.cpuSeconds).toBeGreaterThanOrEqual(2);
    expect(usage!.averageCores!).toBeLessThan(1.15);
    expect(usage!.series.length).toBeGreaterThan(2);
  });
});
