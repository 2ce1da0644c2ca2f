/**
 * The container tests' image and runtime (docs/testing.md "Containers"): a tiny image built
 * offline from Debian's static busybox (/bin/busybox, installed by scripts/ensure-services.sh
 * with podman and runc), imported once per machine as {@link TEST_IMAGE} — no registry is ever
 * asked. A machine without podman, runc or busybox fails the file that needs them: a container
 * test never skips.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, copyFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The test image, as `image_id: docker:<this>` names it. */
export const TEST_IMAGE = 'localhost/jobdeck-test-busybox:1';

/** What the image carries at /etc/jobdeck-test-image: a task that prints it runs in the image. */
export const TEST_IMAGE_MARK = 'jobdeck test image (busybox)';

/**
 * Options every podman call takes on this kind of machine (cgroup v1 hybrid, no systemd: crun
 * refuses the layout, runc serves); JOBDECK_TEST_CONTAINER_OPTIONS replaces them elsewhere.
 */
export const TEST_CONTAINER_OPTIONS = process.env.JOBDECK_TEST_CONTAINER_OPTIONS ?? '--runtime=runc --cgroup-manager=cgroupfs';

/** The server environment that turns containers on with podman. */
export const CONTAINER_ENV: Readonly<Record<string, string>> = { JOBDECK_CONTAINER_RUNTIME: 'podman', JOBDECK_CONTAINER_OPTIONS: TEST_CONTAINER_OPTIONS };

const PODMAN = '/usr/bin/podman';
const BUSYBOX = '/bin/busybox';

/** Runs podman with the test options. @returns stdout. @throws with podman's stderr. */
export function podman(args: string[]): string {
  return execFileSync(PODMAN, [...TEST_CONTAINER_OPTIONS.split(/\s+/).filter(Boolean), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Builds and imports {@link TEST_IMAGE} unless podman has it already (idempotent; two files at
 * once import it twice, harmlessly).
 * @throws when podman, runc or /bin/busybox is missing (run scripts/ensure-services.sh).
 */
export function ensureTestImage(): string {
  for (const tool of [PODMAN, '/usr/sbin/runc', BUSYBOX]) {
    if (!existsSync(tool) && !(tool.endsWith('runc') && existsSync('/usr/bin/runc'))) throw new Error(`container tests need ${tool}: run scripts/ensure-services.sh (it installs podman, runc and busybox-static)`);
  }
  try {
    podman(['image', 'exists', TEST_IMAGE]);
    return TEST_IMAGE;
  } catch {
    // not there yet: built below
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-image-'));
  try {
    const root = path.join(dir, 'rootfs');
    for (const d of ['bin', 'etc', 'tmp', 'root']) mkdirSync(path.join(root, d), { recursive: true });
    copyFileSync(BUSYBOX, path.join(root, 'bin', 'busybox'));
    const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' }).split('\n').filter((a) => a && a !== 'busybox');
    for (const a of applets) symlinkSync('busybox', path.join(root, 'bin', a));
    writeFileSync(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    writeFileSync(path.join(root, 'etc', 'group'), 'root:x:0:\n');
    writeFileSync(path.join(root, 'etc', 'jobdeck-test-image'), `${TEST_IMAGE_MARK}\n`);
    execFileSync('/bin/chmod', ['1777', path.join(root, 'tmp')]);
    const tar = path.join(dir, 'rootfs.tar');
    execFileSync('/bin/tar', ['-C', root, '-cf', tar, '.']);
    podman(['import', '--change', 'ENV=PATH=/bin', tar, TEST_IMAGE]);
    return TEST_IMAGE;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Names of the containers (any state) jobdeck made for attempt folders under `root` (its `jobdeck.attempt` label). */
export function containersUnder(root: string): string[] {
  const out = podman(['ps', '-a', '--format', '{{.Names}} {{index .Labels "jobdeck.attempt"}}']);
  const prefix = path.resolve(root) + path.sep;
  return out
    .split('\n')
    .map((l) => l.split(' '))
    .filter(([name, dir]) => name && dir && dir.startsWith(prefix))
    .map(([name]) => name);
}

/** Removes every container jobdeck made under `root` (a test's clean-up). */
export function removeContainersUnder(root: string): void {
  for (const name of containersUnder(root)) {
    try {
      podman(['rm', '-f', '-t', '0', name]);
    } catch {
      // gone meanwhile
    }
  }
}
