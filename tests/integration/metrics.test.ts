/**
 * Prometheus metrics (GET /metrics, lib/server/metrics.ts) of a real server process, on both
 * databases: the tokens that open it, the names and labels, and the figures moving after jobs
 * run. Then a real Prometheus (Debian's `prometheus`, installed by scripts/ensure-services.sh)
 * scrapes a test server with the read-only metrics token and its HTTP API shows them move.
 * Needs a built app (`npx next build`; the global setup builds one when missing).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

const METRICS_TOKEN = `jd_metrics_${randomBytes(12).toString('hex')}`;
const ENV = { JOBDECK_METRICS_TOKEN: METRICS_TOKEN, JOBDECK_RECONCILE_MS: '200' };

/** Submits `yaml` and waits for the job to end; returns its final status. */
async function runJob(srv: ServerProcess, yaml: string): Promise<string> {
  const r = await srv.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
  expect(r.status).toBe(201);
  const { id } = (await r.json()) as { id: number };
  for (let i = 0; i < 600; i++) {
    const j = (await (await srv.api(`/api/jobs/${id}`)).json()) as { status: string };
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status)) return j.status;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`job ${id} did not end`);
}

/** The value of one sample line (`name{labels} value`) of an exposition, or null. */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
}

describe.each(DB_KINDS)('GET /metrics on %s', (kind) => {
  const t = useServerDatabase(kind, `metrics-${kind}`);

  it('opens with the admin token or the read-only metrics token (which opens nothing else), and its figures move after jobs run', async () => {
    const srv = await t.start({ env: ENV });
    expect((await fetch(`${srv.url}/metrics`)).status).toBe(401);
    const bearer = (tok: string) => ({ headers: { authorization: `Bearer ${tok}` } });
    expect((await fetch(`${srv.url}/metrics`, bearer('not-the-metrics-token-at-all'))).status).toBe(401);
    expect((await fetch(`${srv.url}/api/jobs`, bearer(METRICS_TOKEN))).status).toBe(401);
    expect((await fetch(`${srv.url}/metrics`, { method: 'POST', ...bearer(METRICS_TOKEN) })).status).toBe(401);
    const viaAdmin = await srv.api('/metrics');
    expect(viaAdmin.status).toBe(200);
    expect(viaAdmin.headers.get('content-type')).toContain('text/plain');
    const before = await viaAdmin.text();
    expect(sample(before, 'jobdeck_jobs{status="SUCCEEDED"}')).toBe(0);
    expect(sample(before, 'jobdeck_exit_to_status_seconds_count')).toBe(0);

    expect(await runJob(srv, 'name: ok\nrun: "true"\n')).toBe('SUCCEEDED');
    expect(await runJob(srv, 'name: bad\nrun: exit 3\njob_recovery:\n  max_restarts_on_errors: 1\n')).toBe('FAILED');
    const after = await (await fetch(`${srv.url}/metrics`, bearer(METRICS_TOKEN))).text();
    expect(sample(after, 'jobdeck_jobs{status="SUCCEEDED"}')).toBe(1);
    expect(sample(after, 'jobdeck_jobs{status="FAILED"}')).toBe(1);
    expect(sample(after, 'jobdeck_attempts_finished_total{outcome="SUCCEEDED"}')).toBe(1);
    expect(sample(after, 'jobdeck_attempts_finished_total{outcome="FAILED"}')).toBe(2);
    expect(sample(after, 'jobdeck_jobs_finished_total{status="FAILED"}')).toBe(1);
    expect(sample(after, 'jobdeck_restarts_total')).toBe(1);
    expect(sample(after, 'jobdeck_recoveries_total')).toBe(0);
    expect(sample(after, 'jobdeck_exit_to_status_seconds_count')).toBe(3);
    expect(sample(after, 'jobdeck_job_start_wait_seconds_count')).toBe(2);
    for (const name of ['jobdeck_monitor_pass_duration_seconds', 'jobdeck_admission_queue_length', 'jobdeck_websocket_clients', 'jobdeck_websocket_log_bytes_sent_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(sample(after, name), name).not.toBeNull();
    }
    // No per-job label: no series names a job.
    expect(after).not.toMatch(/job_?id=|name="(ok|bad)"/i);
  });
});

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const PROMETHEUS = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
})();

describe('a real Prometheus scrapes jobdeck', () => {
  const t = useServerDatabase('pglite', 'metrics-prometheus');
  let prom: ChildProcess | undefined;
  const dirs: string[] = [];
  afterAll(() => {
    prom?.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('sees jobdeck_jobs and the exit → status histogram move after jobs run', async () => {
    // Never skipped: CI must not go green without it (scripts/ensure-services.sh installs it).
    expect(PROMETHEUS, 'no prometheus binary: apt-get install --no-install-recommends prometheus').not.toBeNull();
    const srv = await t.start({ env: ENV });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-prometheus-'));
    dirs.push(dir);
    const port = await freePort();
    const target = new URL(srv.url).host;
    writeFileSync(path.join(dir, 'token'), METRICS_TOKEN, { mode: 0o600 });
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: jobdeck',
        '    authorization:',
        '      type: Bearer',
        `      credentials_file: ${path.join(dir, 'token')}`,
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    let log = '';
    prom = spawn(PROMETHEUS!, [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    prom.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    prom.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const query = async (q: string): Promise<number | null> => {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => null);
      if (!r?.ok) return null;
      const body = (await r.json()) as { data: { result: Array<{ value: [number, string] }> } };
      return body.data.result.length ? Number(body.data.result[0].value[1]) : null;
    };
    const until = async (q: string, ok: (v: number) => boolean, what: string) => {
      for (let i = 0; i < 300; i++) {
        const v = await query(q);
        if (v !== null && ok(v)) return v;
        await new Promise((res) => setTimeout(res, 200));
      }
      throw new Error(`Prometheus never showed ${what} (${q} = ${await query(q)}); its log:\n${log.slice(-3000)}`);
    };
    await until('up{job="jobdeck"}', (v) => v === 1, 'the jobdeck target up (scraped with the metrics token)');
    await until('sum(jobdeck_jobs)', (v) => v === 0, 'no jobs yet');
    expect(await runJob(srv, 'name: ok\nrun: "true"\n')).toBe('SUCCEEDED');
    expect(await runJob(srv, 'name: ok2\nrun: "true"\n')).toBe('SUCCEEDED');
    await until('jobdeck_jobs{status="SUCCEEDED"}', (v) => v === 2, 'jobdeck_jobs{status="SUCCEEDED"} at 2');
    await until('jobdeck_exit_to_status_seconds_count', (v) => v === 2, 'the exit → status histogram count at 2');
  });
});
