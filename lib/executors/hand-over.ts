import { existsSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Gives `dir` and everything under it to uid:gid, deepest first, following no link (lchown) —
 * how an attempt's workspace, made and filled by jobdeck, becomes its OS account's
 * (docs/design.md §16). Safe only on a tree nobody else can reach meanwhile: `dir` is jobdeck's
 * (0700) until its own turn, last.
 */
export async function handOver(dir: string, uid: number, gid: number): Promise<void> {
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await handOver(p, uid, gid);
    else await fsp.lchown(p, uid, gid);
  }
  await fsp.lchown(dir, uid, gid);
}

/**
 * A fresh folder `dir` of jobdeck's (0700): one left by an earlier launch of the same attempt —
 * which never started, or it would not be launched again — and not jobdeck's, or not a folder, is
 * removed first. Keeps what jobdeck itself put there (an uploaded folder's copy).
 */
export async function freshOwnFolder(dir: string): Promise<void> {
  const st = await fsp.lstat(dir).catch(() => null);
  if (st && (!st.isDirectory() || st.uid !== process.getuid?.())) await fsp.rm(dir, { recursive: true, force: true });
  await fsp.mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await fsp.chmod(dir, 0o700);
}

/**
 * The attempt folder 0711, so the account can pass to its workspace — and, laid out as the data
 * folder lays it out (`jobs/<job>/task-<i>/attempt-<n>`, lib/jobs/paths.ts), its task and job
 * folders too (the data folder and `jobs` are made passable at start: lib/server/data-modes.ts).
 * Nothing else is touched: an attempt folder elsewhere must already be reachable.
 */
export async function passable(attemptDir: string): Promise<void> {
  await fsp.chmod(attemptDir, 0o711);
  const task = path.dirname(attemptDir);
  const job = path.dirname(task);
  if (!/^attempt-\d+$/.test(path.basename(attemptDir)) || !/^task-\d+$/.test(path.basename(task)) || !/^\d+$/.test(path.basename(job)) || path.basename(path.dirname(job)) !== 'jobs') return;
  await fsp.chmod(task, 0o711);
  await fsp.chmod(job, 0o711);
}

let tools: { setpriv: string; env: string } | null | undefined;

/**
 * Absolute paths of setpriv (util-linux: sets uid, gid and supplementary groups, then execs) and
 * env, or null when this machine lacks one (no attempt can start as an account then).
 */
export function accountTools(): { setpriv: string; env: string } | null {
  if (tools === undefined) {
    const setpriv = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].find((p) => existsSync(p));
    const env = ['/usr/bin/env', '/bin/env'].find((p) => existsSync(p));
    tools = setpriv && env ? { setpriv, env } : null;
  }
  return tools;
}

