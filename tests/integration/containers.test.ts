/**
 * `image_id: docker:IMAGE` on the local executor, end to end (docs/design.md §7 "Containers"):
 * a real server process (tests/helpers/server.ts) with JOBDECK_CONTAINER_RUNTIME=podman runs
 * pipelines in the offline-built test image (tests/helpers/container-image.ts) with real
 * Podman — the workdir's files are there, setup and run share one container, a failing task
 * restarts per its budget, cancel leaves no container, and a `kill -9` of the server leaves the
 * container running: the restarted server re-adopts the attempt and its log goes on byte for
 * byte. Both databases. Gate files, never sleeps.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import type { JobDetail } from '../../lib/api/types';
import type { MonitorState } from '../../lib/monitor/state';
import { CONTAINER_ENV, containersUnder, ensureTestImage, podman, removeContainersUnder, TEST_IMAGE, TEST_IMAGE_MARK } from '../helpers/container-image';
import { attemptLogPath } from '../../lib/jobs/paths';
import { waitFor } from './monitor-helpers';

// Short waits (docs/testing.md "Keeping a test fast"): a restart follows its failure at once; cancel's grace is short but real.
const ENV = { ...CONTAINER_ENV, JOBDECK_RECONCILE_MS: '200', JOBDECK_LOST_CONFIRM_MS: '200', JOBDECK_CPUS: '4', JOBDECK_LEFTOVER_GRACE_MS: '500', JOBDECK_RESTART_BACKOFF_MS: '0', JOBDECK_CANCEL_GRACE_MS: '2000' };

beforeAll(() => {
  ensureTestImage();
}, 120_000);

describe.each(DB_KINDS)('containers on %s', (kind) => {
  const t = useServerDatabase(kind, `containers-${kind}`, { isolation: 'test' });
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  let home: string | undefined;
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.dispose({ keepHome: true });
    if (home) {
      removeContainersUnder(home);
      rmSync(home, { recursive: true, force: true });
      home = undefined;
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function start(h?: string): Promise<ServerProcess> {
    const s = await t.start({ home: h, env: ENV });
    servers.push(s);
    home = s.home;
    return s;
  }

  /** A workdir with a file in it (absolute: the attempt's own paths must not matter). */
  function workdir(): string {
    const d = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-boxed-'));
    writeFileSync(path.join(d, 'data.txt'), 'from the host\n');
    dirs.push(d);
    return d;
  }

  async function submit(s: ServerProcess, yaml: string): Promise<number> {
    const r = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    expect(r.status, await r.clone().text()).toBe(201);
    return ((await r.json()) as { id: number }).id;
  }

  async function detail(s: ServerProcess, id: number): Promise<JobDetail> {
    return (await (await s.api(`/api/jobs/${id}`)).json()) as JobDetail;
  }

  const ended = (s: ServerProcess, id: number, status: string) =>
    waitFor(async () => {
      const d = await detail(s, id);
      return d.status === status ? d : null;
    }, `job ${id} ${status}`, 120_000);

  const log = (s: ServerProcess, id: number, task: number, attempt: number) => readFileSync(attemptLogPath(id, task, attempt, s.home), 'utf8');

  it('a pipeline in the image: the workdir is there, setup and run share the container, a failure restarts per the budget, nothing is left', async () => {
    const s = await start();
    const wd = workdir();
    const image = `docker:${TEST_IMAGE}`;
    const yaml = [
      'name: boxed',
      '---',
      'name: one',
      `workdir: ${wd}`,
      `resources:\n  image_id: ${image}`,
      'setup: echo kept > /tmp/from-setup',
      'run: |',
      '  cat /etc/jobdeck-test-image',
      '  ls',
      '  cat data.txt',
      '  cat /tmp/from-setup',
      '  echo "task=$SKYPILOT_TASK_ID user=$(id -u)"',
      '  echo out > made-inside',
      '---',
      'name: two',
      `workdir: ${wd}`,
      `resources:\n  image_id: ${image}`,
      'job_recovery:\n  max_restarts_on_errors: 1',
      'run: |',
      '  echo "attempt $JOBDECK_ATTEMPT"',
      '  exit 3',
      '',
    ].join('\n');
    const id = await submit(s, yaml);
    const d = await ended(s, id, 'FAILED');
    expect(d.tasks.map((x) => x.status)).toEqual(['SUCCEEDED', 'FAILED']);
    expect(d.tasks[1].attemptList.map((a) => a.exitCode)).toEqual([3, 3]);
    expect(log(s, id, 0, 1)).toBe(`${TEST_IMAGE_MARK}\ndata.txt\nfrom the host\nkept\ntask=jobdeck-job-${id}-task-0 user=0\n`);
    // The workdir is the host's own folder, bind-mounted: what the task writes stays.
    expect(readFileSync(path.join(wd, 'made-inside'), 'utf8')).toBe('out\n');
    expect(log(s, id, 1, 2)).toBe('attempt 2\n');
    await waitFor(async () => containersUnder(s.home).length === 0, 'no container left', 30_000);
    // The server says that it runs containers, and with what.
    const health = (await (await s.api('/api/health')).json()) as { limits?: { local: { notes: string[] } } };
    expect(health.limits?.local.notes).toContain('image_id docker:… runs in containers (podman, /usr/bin/podman)');
  });

  it('cancel stops the task in its container and leaves no container', async () => {
    const s = await start();
    const wd = workdir();
    // The task hears SIGTERM in its container, as a host task does, within the grace.
    const id = await submit(s, `name: cancelled\nworkdir: ${wd}\nresources:\n  image_id: docker:${TEST_IMAGE}\nrun: |\n  trap 'echo term > got-term; exit 0' TERM\n  touch started\n  while :; do sleep 0.05; done\n`);
    await waitFor(async () => existsSync(path.join(wd, 'started')), 'the task to start', 60_000);
    expect(containersUnder(s.home)).toHaveLength(1);
    const r = await s.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    expect(r.status).toBeLessThan(300);
    await ended(s, id, 'CANCELLED');
    await waitFor(async () => containersUnder(s.home).length === 0, 'no container left', 30_000);
    expect(readFileSync(path.join(wd, 'got-term'), 'utf8')).toBe('term\n');
  });

  it('kill -9 of the server: the container runs on, the restarted server re-adopts it, the log goes on byte for byte', async () => {
    const s1 = await start();
    const wd = workdir();
    const run = 'i=0\nwhile [ ! -f gate ]; do echo "line $i"; i=$((i+1)); sleep 0.02; done\necho "done $i"\n';
    const id = await submit(s1, `name: survivor\nworkdir: ${wd}\nresources:\n  image_id: docker:${TEST_IMAGE}\nrun: |\n${run.replace(/^/gm, '  ').trimEnd()}\n`);
    await waitFor(async () => (log(s1, id, 0, 1).match(/\n/g)?.length ?? 0) >= 5 && log(s1, id, 0, 1), 'the task to print', 60_000);
    const [name] = containersUnder(s1.home);
    const before = podman(['inspect', '--format', '{{.Id}}', name]).trim();
    await s1.kill9();
    const s2 = await start(s1.home);
    const mon = (await (await s2.api('/api/monitor')).json()) as MonitorState;
    expect(mon).toMatchObject({ running: true, readopted: 1 });
    // The same container, still running.
    expect(podman(['inspect', '--format', '{{.Id}} {{.State.Running}}', name]).trim()).toBe(`${before} true`);
    writeFileSync(path.join(wd, 'gate'), '');
    const d = await ended(s2, id, 'SUCCEEDED');
    expect(d.tasks[0].attemptList).toHaveLength(1);
    const text = log(s2, id, 0, 1);
    const n = Number(/^done (\d+)\n$/m.exec(text)?.[1]);
    expect(n).toBeGreaterThanOrEqual(5);
    expect(text).toBe(Array.from({ length: n }, (_, i) => `line ${i}\n`).join('') + `done ${n}\n`);
    const api = ((await (await s2.api(`/api/jobs/${id}/logs?task=0&attempt=1`)).json()) as { data: string }).data;
    expect(api).toBe(text);
    await waitFor(async () => containersUnder(s2.home).length === 0, 'no container left', 30_000);
  });
});
