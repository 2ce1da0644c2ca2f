import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/**
 * OS accounts as the machine knows them (passwd(5)): what the isolation needs to run a job as
 * one (docs/design.md §16 "Isolation") — its uid, primary gid, home and shell — and the rules an
 * account must meet before a job may run as it. A leaf: the executors, the monitor and the users
 * API read it.
 *
 * A lookup reads `/etc/passwd` first (no process), then asks `getent passwd NAME`, which also
 * sees accounts from NSS (LDAP, sssd). Found accounts are remembered for ACCOUNT_CACHE_MS, so a
 * launch does not fork per attempt; an account not found is asked again next time (one created
 * a moment ago works at once).
 */

/** One passwd entry. */
export interface OsAccount {
  name: string;
  uid: number;
  /** Primary group id. */
  gid: number;
  home: string;
  shell: string;
}

/**
 * An OS account name jobdeck accepts: 1–32 characters of letters, digits, `_`, `.` and `-`, not
 * starting with `-` or `.` (useradd's portable set; no `$`, no spaces, nothing a shell or
 * setpriv(1) would read as an option).
 */
export const ACCOUNT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/;

/** How long a found account is remembered (ms). */
export const ACCOUNT_CACHE_MS = 60_000;

const cache = new Map<string, { at: number; account: OsAccount }>();

/** One line of passwd(5) (`name:x:uid:gid:gecos:home:shell`), or null when it is not one. */
export function parsePasswdLine(line: string): OsAccount | null {
  const f = line.split(':');
  if (f.length < 7 || !/^\d+$/.test(f[2]) || !/^\d+$/.test(f[3])) return null;
  return { name: f[0], uid: Number(f[2]), gid: Number(f[3]), home: f[5], shell: f[6] };
}

/** A clean environment for getent: nothing of the server's. */
const GETENT_ENV: Record<string, string> = { PATH: '/usr/bin:/bin' };

function getent(name: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('getent', ['passwd', '--', name], { timeout: 10_000, env: GETENT_ENV as NodeJS.ProcessEnv }, (err: Error | null, stdout: string) => resolve(err ? '' : String(stdout)));
  });
}

/**
 * The account `name`, or null when the machine has none of that name (or the name is not one
 * jobdeck accepts: ACCOUNT_NAME). Never throws: a passwd file that cannot be read leaves getent.
 */
export async function lookupAccount(name: string, now: number = Date.now()): Promise<OsAccount | null> {
  if (!ACCOUNT_NAME.test(name)) return null;
  const hit = cache.get(name);
  if (hit && now - hit.at < ACCOUNT_CACHE_MS) return hit.account;
  let found: OsAccount | null = null;
  try {
    for (const line of (await readFile('/etc/passwd', 'utf8')).split('\n')) {
      const a = parsePasswdLine(line);
      if (a && a.name === name) {
        found = a;
        break;
      }
    }
  } catch {
    // no readable /etc/passwd: getent decides
  }
  if (!found) {
    const a = parsePasswdLine((await getent(name)).split('\n')[0] ?? '');
    if (a && a.name === name) found = a;
  }
  if (found) cache.set(name, { at: now, account: found });
  else cache.delete(name);
  return found;
}

/** What an account must not be (accountProblem's rules). */
export interface AccountRules {
  /** Lowest uid a job may run as (JOBDECK_ACCOUNT_MIN_UID: system accounts are below it). */
  minUid: number;
  /** jobdeck's own uid: a job never runs as the service itself. */
  serverUid: number;
}

/**
 * Why no job may run as `account`, or null when one may: root (uid 0), jobdeck's own account,
 * and accounts below `minUid` (system and service accounts: `postgres`, `www-data`…) are
 * refused — the rule Open OnDemand's nginx_stage keeps with its min_uid.
 */
export function accountProblem(account: OsAccount, rules: AccountRules): string | null {
  if (account.uid === 0) return `${account.name} is root (uid 0): no job runs as root`;
  if (account.uid === rules.serverUid) return `${account.name} is jobdeck's own account (uid ${account.uid}): jobs run apart from the service`;
  if (account.uid < rules.minUid) return `${account.name} has uid ${account.uid}, below JOBDECK_ACCOUNT_MIN_UID (${rules.minUid}): system accounts do not run jobs`;
  return null;
}
