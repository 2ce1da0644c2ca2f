import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Isolation } from '../config';
import { accountProblem, lookupAccount } from '../accounts';
import { accountTools } from '../executors/hand-over';

/**
 * The data folder's modes when jobs run as other OS accounts (docs/design.md §16 "What each
 * account can read"), checked and set at start, before the database opens:
 *
 * - the data folder and its `jobs` folder: 0711 — a job's account passes through to its
 *   attempt's workspace (`jobs/<job>/task-<i>/attempt-<n>/work`) and can list or open nothing;
 * - everything else in the data folder (the database, the admin token and its hash, the session
 *   and webhook keys, the revoked sessions, the uploads, `database.json`): closed to group and
 *   others at its top — jobdeck's own files are made so, with a warning naming each (a secret that
 *   was open may have been read: rotate it); a file jobdeck does not own refuses the start;
 * - every folder above the data folder must let others pass (x), or no job could reach its
 *   workspace: the start is refused, naming the folder (a private home such as /root is the usual
 *   one: set JOBDECK_HOME elsewhere, e.g. /var/lib/jobdeck);
 * - setpriv (util-linux) and env must be there: the enter step uses them.
 *
 * Refused rather than fixed: what jobdeck cannot make right alone (another owner's file, a
 * folder above it, a missing tool). Fixed with a warning: what is jobdeck's own and only too open.
 */

/** A start refused for the data folder's sake: the message says what and what to do. */
export class DataFolderModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFolderModeError';
  }
}

const mode = (m: number) => `0${(m & 0o7777).toString(8)}`;

/** The first folder above `home` that others may not pass through (mode without o+x), or null. */
function closedAbove(home: string): string | null {
  for (let dir = path.dirname(home); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir;
    if (dir === path.dirname(dir)) return null;
  }
}

/**
 * `JOBDECK_ISOLATION=auto` as root turns isolation on only when it can work: the enter step's
 * tools, a data folder the jobs' accounts can pass through, and the run account are there. When
 * one is missing — the README's quick start as root on a fresh machine: `~/.jobdeck` in root's
 * private home, no `jobdeck-run` yet — jobdeck serves single-user, as for a non-root start (the
 * first admin's jobs only; another user's job is refused, saying why), and says what to do.
 * An explicit `on` keeps its refusals (prepareDataFolderModes). Answers the isolation to use.
 */
export async function settleAutoIsolation(home: string, isolation: Isolation): Promise<Isolation> {
  if (!isolation.on || isolation.setting !== 'auto') return isolation;
  let missing: string | null = null;
  if (!accountTools()) missing = 'setpriv (util-linux) or env(1) is missing';
  else {
    const closed = closedAbove(home);
    if (closed) missing = `the jobs' accounts cannot pass through ${closed} to the data folder ${home} (set JOBDECK_HOME outside a private folder, e.g. /var/lib/jobdeck)`;
    else {
      const account = await lookupAccount(isolation.runAccount);
      const problem = account ? accountProblem(account, { minUid: isolation.minUid, serverUid: isolation.serverUid }) : `there is no OS account ${isolation.runAccount} (useradd --create-home --user-group ${isolation.runAccount})`;
      if (problem) missing = `the run account cannot run jobs: ${problem}`;
    }
  }
  if (!missing) return isolation;
  return {
    ...isolation,
    on: false,
    singleUser: true,
    why: `single-user: jobdeck runs as root, but ${missing}; it runs only the first admin's jobs, as its own account, and refuses other users' — to run each job as its user's OS account, fix that (README "Isolation") or set JOBDECK_ISOLATION=on to be refused until it is fixed`,
  };
}

/**
 * Applies the rules above to the data folder `home` when isolation is on (nothing otherwise).
 * @returns warnings for the start log (what was closed, and why it matters).
 * @throws DataFolderModeError naming the file or folder and what to do.
 */
export function prepareDataFolderModes(home: string, isolation: Isolation): string[] {
  if (!isolation.on) return [];
  if (!accountTools()) throw new DataFolderModeError('isolation is on, but setpriv (util-linux) or env(1) is missing: jobs cannot start as their accounts (install util-linux)');
  const uid = process.getuid?.() ?? -1;
  const warnings: string[] = [];
  const closed = closedAbove(home);
  if (closed) {
    throw new DataFolderModeError(`isolation is on, and the jobs' accounts must pass through ${closed} (mode ${mode(statSync(closed).mode)}) to reach their workspaces in the data folder ${home}: give it o+x, or set JOBDECK_HOME to a folder outside a private one (e.g. /var/lib/jobdeck)`);
  }
  mkdirSync(path.join(home, 'jobs'), { recursive: true, mode: 0o711 });
  for (const dir of [home, path.join(home, 'jobs')]) chmodSync(dir, 0o711);
  for (const name of readdirSync(home)) {
    if (name === 'jobs') continue;
    const p = path.join(home, name);
    const st = lstatSync(p);
    if (st.uid !== uid) throw new DataFolderModeError(`${p} belongs to uid ${st.uid}, not to jobdeck (uid ${uid}): with isolation on, everything in the data folder is jobdeck's alone — chown it, or move it out`);
    if (st.isSymbolicLink() || (st.mode & 0o077) === 0) continue;
    chmodSync(p, st.mode & 0o7700);
    warnings.push(`${p} was open to other users (mode ${mode(st.mode)}); now ${mode(st.mode & 0o7700)}: jobs run as other accounts${/token|key|revoked/.test(name) ? ' — if jobs ran while it was open, rotate it (SECURITY.md, "Rotating the token")' : ''}`);
  }
  return warnings;
}
