/**
 * GPUs as devices through a real server (docs/design.md §6 "GPUs"), with an operator-declared
 * JOBDECK_LOCAL_GPUS=4 (no GPU on the test machines): four 1-GPU jobs get four different
 * CUDA_VISIBLE_DEVICES; a fifth waits saying why and starts on the device freed when one ends; a
 * 2-GPU job never gets a device another job holds; and after kill -9 of the server the restarted
 * one re-adopts the running attempts with their grants — the grants are read back from the
 * database, so no device is granted twice. Then the GPU-hours: per attempt, on Insights and in
 * /metrics.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import type { InsightsView, JobDetail } from '../../lib/api/types';
import { waitFor } from './monitor-helpers';

const ENV = { JOBDECK_RECONCILE_MS: '200', JOBDECK_LOST_CONFIRM_MS: '200', JOBDECK_CPUS: '8', JOBDECK_LOCAL_GPUS: '4' };

describe.each(DB_KINDS)('GPU grants on %s', (kind) => {
  const t = useServerDatabase(kind, `gpu-grants-${kind}`, { isolation: 'test' });
  const servers: ServerProcess[] = [];
  afterEach(async () => {
    const home = servers[0]?.home;
    for (const s of servers.splice(0)) await s.dispose({ keepHome: true });
    // Open every gate: what is left of the jobs ends by itself.
    if (home) for (const f of readdirSync(home).filter((x) => x.startsWith('cuda-'))) writeFileSync(path.join(home, f.replace('cuda-', 'gate-')), '');
  });

  async function start(home?: string): Promise<ServerProcess> {
    const s = await t.start({ home, env: ENV, timeoutMs: 180_000 });
    servers.push(s);
    return s;
  }

  const detail = async (s: ServerProcess, id: number) => (await (await s.api(`/api/jobs/${id}`)).json()) as JobDetail;

  /** A job holding `gpus` GPUs until its gate file appears; it writes its CUDA_VISIBLE_DEVICES first. */
  async function gpuJob(s: ServerProcess, name: string, gpus: number): Promise<number> {
    const yaml = `name: ${name}\nresources:\n  accelerators: A100:${gpus}\nrun: |\n  echo "$CUDA_VISIBLE_DEVICES" > ${s.home}/cuda-${name}.tmp && mv ${s.home}/cuda-${name}.tmp ${s.home}/cuda-${name}\n  while [ ! -f ${s.home}/gate-${name} ]; do sleep 0.05; done\n`;
    const r = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: number }).id;
  }

  const devicesOf = (s: ServerProcess, name: string) => waitFor(async () => (existsSync(path.join(s.home, `cuda-${name}`)) ? readFileSync(path.join(s.home, `cuda-${name}`), 'utf8').trim() : null), `${name} to start`, 30_000);
  const open = (s: ServerProcess, name: string) => writeFileSync(path.join(s.home, `gate-${name}`), '');
  const status = async (s: ServerProcess, id: number, want: string) => waitFor(async () => ((await detail(s, id)).status === want ? true : null), `job ${id} ${want}`, 30_000);

  it('distinct devices, a wait with the reason, no device granted twice — across kill -9', { timeout: 600_000 }, async () => {
    const s1 = await start();
    const ids: Record<string, number> = {};
    for (const n of ['g1', 'g2', 'g3', 'g4']) ids[n] = await gpuJob(s1, n, 1);
    const first = await Promise.all(['g1', 'g2', 'g3', 'g4'].map((n) => devicesOf(s1, n)));
    expect([...first].sort()).toEqual(['0', '1', '2', '3']);
    const held = Object.fromEntries(['g1', 'g2', 'g3', 'g4'].map((n, i) => [n, first[i]]));
    // The attempt's view names its device and counts its GPU-seconds.
    expect((await detail(s1, ids.g1)).tasks[0].attemptList[0].gpus).toMatchObject({ type: 'A100', count: 1, devices: [{ index: Number(held.g1), share: 1 }] });

    ids.g5 = await gpuJob(s1, 'g5', 1);
    ids.pair = await gpuJob(s1, 'pair', 2);
    await waitFor(async () => ((await detail(s1, ids.g5)).pendingReason === 'needs 1 GPU, 0 of 4 free' ? true : null), 'the fifth job to say why it waits');
    // The 2-GPU job was submitted after the fifth; the admission pass that wrote the fifth's reason
    // may have run before it existed, so its reason is awaited too, not read once.
    await waitFor(async () => ((await detail(s1, ids.pair)).pendingReason === '1 job ahead at priority ≥ 500' ? true : null), 'the 2-GPU job to say it waits behind the fifth');

    await s1.kill9();
    const s2 = await start(s1.home);
    // Re-adopted with their grants: the freed device is the only one the fifth job can get.
    open(s2, 'g1');
    await status(s2, ids.g1, 'SUCCEEDED');
    expect(await devicesOf(s2, 'g5')).toBe(held.g1);
    const reason = (want: string) => waitFor(async () => ((await detail(s2, ids.pair)).pendingReason === want ? true : null), `the 2-GPU job to say "${want}"`);
    await reason('needs 2 GPUs, 0 of 4 free');
    open(s2, 'g3');
    await reason('needs 2 GPUs, 1 of 4 free');
    open(s2, 'g2');
    const pair = (await devicesOf(s2, 'pair')).split(',');
    expect(pair.sort()).toEqual([held.g2, held.g3].sort());
    // Never one a running job holds.
    expect(pair).not.toContain(held.g4);
    expect(pair).not.toContain(held.g1);

    for (const n of ['g4', 'g5', 'pair']) open(s2, n);
    for (const n of ['g2', 'g3', 'g4', 'g5', 'pair']) await status(s2, ids[n], 'SUCCEEDED');
    const insights = (await (await s2.api('/api/insights?range=24h')).json()) as InsightsView;
    expect(insights.gpuHours).toHaveLength(1);
    expect(insights.gpuHours[0]).toMatchObject({ user: 'admin', queue: 'default', gpusNow: 0 });
    expect(insights.gpuHours[0].gpuHours).toBeGreaterThan(0);
    const metrics = await (await s2.api('/metrics')).text();
    expect(metrics).toMatch(/^jobdeck_gpu_seconds_total\{user="admin",queue="default"\} [0-9.]+$/m);
    const health = (await (await s2.api('/api/health')).json()) as { limits?: { local: { cgroups: string | null } } };
    expect(health.limits?.local.cgroups).toBe(process.getuid?.() === 0 ? 'v1' : null);
  });
});
