import type { Isolation } from '../config';

/**
 * Which OS account a job's attempts run as (docs/design.md §16 "Isolation"): the one rule,
 * pure. The monitor applies it at each launch (lib/monitor/run-as.ts), with the user as it is
 * then; the executors start the attempt as the account it names.
 */

/** The first admin (user 1): the admin token's user, and a single-user jobdeck's only user. */
const FIRST_ADMIN_ID = 1;

/** The submitter as the decision needs it (null: a job written outside any request). */
export interface RunAsUser {
  id: number;
  name: string;
  /** User.osUser: its own account; null: none. */
  osUser: string | null;
}

/** Where an attempt runs: as jobdeck itself, as an account, or not at all (why). */
export type RunAs = { as: 'server' } | { as: 'account'; name: string; own: boolean } | { as: 'refused'; why: string };

/**
 * The account of `user`'s jobs under `isolation`:
 * - isolation on → the user's own account (User.osUser), else the run account — never jobdeck's
 *   own (the account check refuses root and jobdeck's uid: lib/accounts.ts accountProblem);
 * - off (JOBDECK_ISOLATION=off) → jobdeck's own account, for every user;
 * - single-user (auto, not root) → jobdeck's own account for the first admin and for jobs with
 *   no submitter; any other user's job is refused: it would run as jobdeck itself.
 */
export function runAsFor(isolation: Pick<Isolation, 'on' | 'singleUser' | 'runAccount' | 'serverUid'>, user: RunAsUser | null): RunAs {
  if (isolation.on) return user?.osUser ? { as: 'account', name: user.osUser, own: true } : { as: 'account', name: isolation.runAccount, own: false };
  if (!isolation.singleUser || user === null || user.id === FIRST_ADMIN_ID) return { as: 'server' };
  return {
    as: 'refused',
    why:
      `user ${user.name}'s job would run as jobdeck's own OS account (uid ${isolation.serverUid}): this jobdeck runs without root, ` +
      `so it runs only the first admin's jobs (single-user). Run jobdeck as root to run each user's jobs as their own OS account, ` +
      `or set JOBDECK_ISOLATION=off to run every user's jobs as jobdeck's account (SECURITY.md, "Isolation")`,
  };
}
