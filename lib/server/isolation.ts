import type { AuthState } from '../auth/state';
import type { Isolation } from '../config';
import type { Attempt } from '../generated/prisma/client';
import { ATTEMPT_TERMINAL } from '../jobs/status';
import type { Store, StoreListener } from '../store';

/**
 * The server's side of the isolation (docs/design.md §16): the mode's name, and the wiring that
 * keeps attempts' own tokens in step with their attempts in this server's auth directory.
 */

/** The mode as /api/health and the start log name it. */
export type IsolationMode = 'on' | 'single-user' | 'off';

/** The mode of `isolation` (lib/config.ts isolationFromEnv). */
export function isolationMode(isolation: Isolation): IsolationMode {
  return isolation.on ? 'on' : isolation.singleUser ? 'single-user' : 'off';
}

/**
 * A bus listener that puts an attempt's new token in the directory at once (lib/store
 * createAttemptToken announces it: the attempt may call from its first instant), and drops it
 * the moment its attempt's end is written here. The database revokes it in the same statement as
 * that end (the trigger of migration 20261227000000_os_accounts); another server's writes reach
 * this directory with its next read (lib/auth/directory.ts, within a second) — and a relayed
 * `token` (no row) makes this server read at once.
 */
export function attemptTokens(store: Store, auth: AuthState): StoreListener {
  return (e) => {
    if (e.type === 'token') {
      if (e.token) auth.directory.putToken(e.token);
      else void auth.directory.reload(store).catch(() => undefined);
      return;
    }
    if (e.type !== 'event' || e.event?.entity !== 'attempt' || !e.row) return;
    const row = e.row as Attempt;
    if (ATTEMPT_TERMINAL.has(row.status)) auth.directory.dropAttemptToken(row.id);
  };
}
