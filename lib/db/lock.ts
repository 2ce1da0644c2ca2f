import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isLiveState, readProcStat } from '../proc';
import { logger } from '../log';

/**
 * The embedded database's data folder belongs to one process at a time: two PGlite instances on
 * one folder corrupt it (seen: `RuntimeError: Aborted()` in the second server). openPglite()
 * takes this lock before PGlite opens the folder and releases it after PGlite closed.
 *
 * The lock is the file `<dir>/jobdeck.lock` (PGlite ignores it), one JSON line (LockOwner). It
 * appears complete or not at all: the content is written to a private temporary file which is
 * then hard-linked to the lock name (link() fails with EEXIST when the name exists: an atomic
 * "create if absent", like O_EXCL, but never a half-written file).
 *
 * A lock whose owner is gone — the process no longer exists, is a zombie, or its pid now belongs
 * to another process (start time differs, /proc/<pid>/stat field 22) — is stale: left by a crash
 * or `kill -9`, which jobdeck must survive. It is taken over by renaming our own file over it,
 * then re-reading it after a short settle time to confirm that we won (another process taking it
 * over at the same moment may have renamed its file over ours: the later rename wins and the
 * loser looks again). Like PostgreSQL's postmaster.pid, this leaves a theoretical window: a
 * process that judged the lock stale and was then descheduled for longer than the settle time
 * before its rename. A lock written on another host is never judged stale (its owner cannot be
 * checked from here): remove the file by hand once that jobdeck is stopped.
 */

/** Name of the lock file inside the data folder. */
export const LOCK_FILE = 'jobdeck.lock';

/** Who holds a data folder (the lock file's content). */
export interface LockOwner {
  pid: number;
  /** Process start time in clock ticks since boot (/proc/<pid>/stat field 22); null when unknown. */
  startTime: string | null;
  host: string;
  /** When the lock was taken (ISO 8601). */
  startedAt: string;
  /** Random: tells two takeovers by the same process apart. */
  nonce: string;
}

/** Thrown when the data folder is held by a live jobdeck process. */
export class DataFolderInUseError extends Error {
  readonly code = 'DATA_FOLDER_IN_USE';
  constructor(
    readonly dir: string,
    readonly owner: LockOwner,
  ) {
    const where = owner.host !== os.hostname() ? ` on host ${owner.host}` : '';
    super(
      `the data folder ${dir} is in use by jobdeck pid ${owner.pid}${where} (started ${owner.startedAt}); ` +
        `stop it first, or use another JOBDECK_HOME` +
        (where ? ` (if that jobdeck is gone, remove ${path.join(dir, LOCK_FILE)})` : ''),
    );
    this.name = 'DataFolderInUseError';
  }
}

/** A held lock. */
export interface DataFolderLock {
  owner: LockOwner;
  /** Removes the lock file if it is still ours. Idempotent; never throws. */
  release(): void;
}

/** Options of lockDataFolder (tests). */
export interface LockOptions {
  /** Wait before confirming a takeover of a stale lock (ms, default 50). */
  settleMs?: number;
}

function readOwner(file: string): LockOwner | null | 'malformed' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (!o || !Number.isInteger(o.pid) || typeof o.host !== 'string') return 'malformed';
    return {
      pid: o.pid as number,
      startTime: typeof o.startTime === 'string' ? o.startTime : null,
      host: o.host,
      startedAt: typeof o.startedAt === 'string' ? o.startedAt : 'at an unknown time',
      nonce: typeof o.nonce === 'string' ? o.nonce : '',
    };
  } catch {
    return 'malformed';
  }
}

/** True while the owner may still use the folder (it runs, or it cannot be checked from here). */
export function ownerAlive(o: LockOwner): boolean {
  if (o.host !== os.hostname()) return true;
  const stat = readProcStat(o.pid);
  if (!stat || !isLiveState(stat.state)) return false;
  return o.startTime === null || stat.startTime === o.startTime;
}

function writeFileDurably(file: string, text: string): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* gone already */
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Takes the lock of data folder `dir` (which must exist) for this process.
 * @throws DataFolderInUseError when a live process holds it (this one included: a second open
 *   in the same process is refused too); I/O errors as they come.
 */
export async function lockDataFolder(dir: string, opts: LockOptions = {}): Promise<DataFolderLock> {
  const settleMs = opts.settleMs ?? 50;
  const file = path.join(dir, LOCK_FILE);
  const me: LockOwner = {
    pid: process.pid,
    startTime: readProcStat(process.pid)?.startTime ?? null,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    nonce: randomBytes(8).toString('hex'),
  };
  const text = JSON.stringify(me) + '\n';
  const tmp = path.join(dir, `${LOCK_FILE}.${process.pid}.${me.nonce}.tmp`);
  const mine = (): boolean => {
    const o = readOwner(file);
    return o !== null && o !== 'malformed' && o.pid === me.pid && o.nonce === me.nonce;
  };
  const lock = (): DataFolderLock => {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.off('exit', release);
      try {
        if (mine()) unlinkSync(file);
      } catch {
        /* nothing to do */
      }
    };
    // A process that exits without closing the database leaves no lock behind.
    process.on('exit', release);
    return { owner: me, release };
  };

  try {
    for (let round = 0; round < 20; round++) {
      writeFileDurably(tmp, text);
      try {
        linkSync(tmp, file);
        unlinkQuietly(tmp);
        return lock();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readOwner(file);
      if (holder === null) {
        unlinkQuietly(tmp);
        continue; // released meanwhile: try again
      }
      if (holder !== 'malformed' && ownerAlive(holder)) throw new DataFolderInUseError(dir, holder);
      // Stale (crash, kill -9) or unreadable: take it over, unless it changed since we read it.
      const again = readOwner(file);
      if (JSON.stringify(again) !== JSON.stringify(holder)) {
        unlinkQuietly(tmp);
        continue;
      }
      logger().warn(
        holder === 'malformed' ? { lock: file } : { lock: file, pid: holder.pid, startedAt: holder.startedAt },
        holder === 'malformed' ? `data folder lock ${file} is unreadable; taking it over` : `data folder lock of jobdeck pid ${holder.pid} (started ${holder.startedAt}) is stale: that process is gone; taking it over`,
      );
      renameSync(tmp, file);
      await sleep(settleMs);
      if (mine()) return lock();
      // Someone else took it over at the same time; look at the new owner.
    }
    throw new Error(`cannot take the lock ${file}: it keeps changing hands`);
  } finally {
    unlinkQuietly(tmp);
  }
}
