/**
 * Real OS accounts for the isolation tests (docs/testing.md, "Isolation"): `useOsAccounts(names)`
 * at the top of a describe creates each with `useradd --create-home --user-group` before its
 * first test and removes it (`userdel --remove`) after its last. Names are the file's own (each
 * file picks a prefix), so files side by side never share one; an account left by a run that
 * crashed is removed first. Tests run as root (CI does): without it, creating one fails the file.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

/** One created account. */
export interface TestAccount {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** The account `name` as /etc/passwd has it, or null. */
export function passwdEntry(name: string): TestAccount | null {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const f = line.split(':');
    if (f[0] === name && f.length >= 7) return { name, uid: Number(f[2]), gid: Number(f[3]), home: f[5] };
  }
  return null;
}

/** Pids of the processes whose real uid is `uid` (from /proc/<pid>/status). */
export function pidsOfUid(uid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${d}/status`, 'utf8'));
      if (m && Number(m[1]) === uid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Stops what still runs as the account (only this file's jobs run as it), then removes it. */
function remove(name: string): void {
  const a = passwdEntry(name);
  if (!a) return;
  for (const pid of pidsOfUid(a.uid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  try {
    execFileSync('userdel', ['--remove', name], { stdio: 'ignore' });
  } catch {
    // userdel answers non-zero for a home or mail spool it could not remove: the account is what counts
  }
  if (passwdEntry(name)) throw new Error(`userdel could not remove the test account ${name}`);
}

/**
 * Creates the accounts `names` (1–32 characters, the file's own prefix) before the suite and
 * removes them after it. The handle's `get(name)` answers the created account.
 */
export function useOsAccounts(names: readonly string[]): { get(name: string): TestAccount } {
  const made = new Map<string, TestAccount>();
  beforeAll(() => {
    for (const n of names) {
      remove(n); // a crashed run's leftover
      execFileSync('useradd', ['--create-home', '--user-group', '--shell', '/bin/bash', n], { stdio: 'pipe' });
      const a = passwdEntry(n);
      if (!a) throw new Error(`useradd made no account ${n}`);
      made.set(n, a);
    }
  });
  afterAll(() => {
    for (const n of names) remove(n);
  });
  return {
    get(name) {
      const a = made.get(name);
      if (!a) throw new Error(`no test account ${name} (created in beforeAll)`);
      return a;
    },
  };
}
