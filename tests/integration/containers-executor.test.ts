/**
 * The local executor's container part without a server (docs/design.md §7 "Containers"): the
 * start check refuses a runtime that does not answer; a container attempt as the job's OS
 * account (§16) runs, with real Podman (rootful), as the account's uid and gid in the workspace
 * handed over to it, and a workdir the account may not enter on the host is refused before any
 * container starts — the bind mount would otherwise open it. No database is involved; a real OS
 * account (tests/helpers/os-accounts.ts).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor, type LocalExecutor } from '../../lib/executors/local/executor';
import { checkContainerRuntime, containerRuntimeFromEnv } from '../../lib/executors/local/container';
import type { EndResult } from '../../lib/executors/attempt-record';
import type { LaunchRequest } from '../../lib/executors/types';
import { CONTAINER_ENV, containersUnder, ensureTestImage, removeContainersUnder, TEST_IMAGE } from '../helpers/container-image';
import { useOsAccounts } from '../helpers/os-accounts';

describe('a container attempt as the job\u2019s OS account', () => {
  const accounts = useOsAccounts(['jdc-ann']);
  let root: string;
  let ex: LocalExecutor;
  let keep: NodeJS.Timeout;

  beforeAll(() => {
    ensureTestImage();
    // Laid out as the data folder is, passable as the server makes it (lib/server/data-modes.ts).
    root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-boxed-acct-'));
    mkdirSync(path.join(root, 'jobs'));
    chmodSync(root, 0o711);
    chmodSync(path.join(root, 'jobs'), 0o711);
    ex = createLocalExecutor({ launcher: null, containers: containerRuntimeFromEnv(CONTAINER_ENV) });
    // The executor's timers do not hold the process; the test waits on its exits.
    keep = setInterval(() => undefined, 1000);
  }, 120_000);

  afterAll(() => {
    clearInterval(keep);
    removeContainersUnder(root);
    rmSync(root, { recursive: true, force: true });
  });

  async function runAs(job: number, run: string, workdir: string | null): Promise<{ end: EndResult; log: string }> {
    const a = accounts.get('jdc-ann');
    const attemptDir = path.join(root, 'jobs', String(job), 'task-0', 'attempt-1');
    mkdirSync(attemptDir, { recursive: true });
    const req: LaunchRequest = {
      jobId: job, taskIndex: 0, attempt: 1, setup: null, run, envs: { GREETING: "it's me" }, workdir, cpus: 1,
      attemptDir, logPath: path.join(attemptDir, 'run.log'),
      account: { name: a.name, uid: a.uid, gid: a.gid, home: a.home, shell: '/bin/bash' },
      container: { image: TEST_IMAGE },
    };
    const h = await ex.launch(req);
    const end = await new Promise<EndResult>((resolve) => ex.watch(h, resolve));
    await ex.cancel(h, { graceMs: 0 });
    return { end, log: readFileSync(req.logPath, 'utf8') };
  }

  it('runs as the account, in its workspace, with its envs', async () => {
    const a = accounts.get('jdc-ann');
    const { end, log } = await runAs(1, 'echo "$(id -u):$(id -g) $GREETING"; touch mine; ls -n mine | awk \'{print $3}\'', null);
    expect(end).toMatchObject({ state: 'exited', exitCode: 0 });
    expect(log).toBe(`${a.uid}:${a.gid} it's me\n${a.uid}\n`);
    expect(containersUnder(root)).toEqual([]);
  });

  it('a workdir the account may not enter is refused before a container starts', async () => {
    const closed = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-closed-'));
    try {
      chmodSync(closed, 0o700);
      const { end, log } = await runAs(2, 'ls', closed);
      expect(end).toMatchObject({ state: 'exited', exitCode: 1 });
      expect(log).toBe(`jobdeck: workdir ${closed} is not an accessible directory for the job's account; not started\n`);
      expect(containersUnder(root)).toEqual([]);
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });
});

describe('the container runtime at start', () => {
  it('off is none; a runtime that answers passes; one that does not stops the start with its own message', () => {
    expect(containerRuntimeFromEnv({})).toBeNull();
    expect(() => containerRuntimeFromEnv({ JOBDECK_CONTAINER_RUNTIME: 'lxc' })).toThrow('JOBDECK_CONTAINER_RUNTIME: expected off, podman or docker, got "lxc"');
    const rt = containerRuntimeFromEnv(CONTAINER_ENV)!;
    expect(rt).toMatchObject({ kind: 'podman', bin: '/usr/bin/podman' });
    checkContainerRuntime(rt);
    const broken = containerRuntimeFromEnv({ ...CONTAINER_ENV, JOBDECK_CONTAINER_OPTIONS: '--runtime=/nonexistent/runc' })!;
    expect(() => checkContainerRuntime(broken)).toThrow(/^JOBDECK_CONTAINER_RUNTIME=podman: `podman info` failed: .*no valid executable found for OCI runtime \/nonexistent\/runc/);
  });
});
