import { statfs } from 'node:fs/promises';

/**
 * Whether a log lives on a file system of this host (docs/design.md §8 "Logs and streams"). Two
 * rules hang on it: on a local file system inotify sees every write (the time index polls such a
 * log only rarely), and a stat there costs microseconds and cannot hang, so the job stream's
 * readers stat it synchronously instead of waiting twice for a busy event loop (bench/README.md,
 * "Exit → job stream by stage"). On NFS or a cluster file system (a Slurm rank on another node
 * writes) both stay the careful way: polls, and stats off the loop.
 */

/**
 * `statfs` types of the local file systems: ext2/3/4, XFS, Btrfs, tmpfs, overlayfs, ZFS, F2FS.
 * Any other type — NFS, Lustre, GPFS, CephFS… — counts as remote.
 */
const LOCAL_FS_TYPES = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010]);

/** True when `dir` is on a file system of LOCAL_FS_TYPES; false when unknown or unreadable. */
export async function onLocalFileSystem(dir: string): Promise<boolean> {
  try {
    return LOCAL_FS_TYPES.has((await statfs(dir)).type);
  } catch {
    return false;
  }
}

/** Devices answered so far; a host has few, the cap only guards against a pathological mount table. */
const byDevice = new Map<number, Promise<boolean>>();
const MAX_DEVICES = 256;

/**
 * Whether device `dev` (a `stat().dev`) holds a local file system, asked once per device of the
 * process (`dir`: a folder on it, used the first time only). Never rejects.
 */
export function localDevice(dev: number, dir: string): Promise<boolean> {
  let local = byDevice.get(dev);
  if (!local) {
    if (byDevice.size >= MAX_DEVICES) byDevice.clear();
    byDevice.set(dev, (local = onLocalFileSystem(dir)));
  }
  return local;
}
