/**
 * Roles and who may act on a job (docs/design.md §15 "Authorization"). Pure: the auth layer
 * finds the caller, lib/control applies mayChangeJob() to the jobs it touches.
 *
 * - `admin`: everything — users, queues, webhooks, anyone's jobs and tokens.
 * - `member`: submits; cancels, re-runs, re-prioritises and deletes its own jobs; reads everyone's.
 * - `viewer`: reads only (and manages its own tokens).
 */

/** The roles, least to most. */
export const ROLES = ['viewer', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** True when `s` names a role. */
export function isRole(s: unknown): s is Role {
  return typeof s === 'string' && (ROLES as readonly string[]).includes(s);
}

/** True when `role` is `min` or above it (viewer < member < admin). */
export function roleAtLeast(role: Role, min: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(min);
}

/** Who acts: the authenticated user, and the token it came with (for ownership and the audit log). */
export interface Actor {
  /** User.id. */
  userId: number;
  /** User.name. */
  name: string;
  role: Role;
  /** ApiToken.id of a personal token; null for the admin token, JOBDECK_TOKEN or a session. */
  tokenId: number | null;
  /** The token's first characters (ApiToken.prefix, or the admin token's); null for a session. */
  tokenPrefix: string | null;
  /** The client's address, as the server saw it (for the audit log); null when unknown. */
  ip: string | null;
  /**
   * Jobs it may have PENDING at once: User.maxPendingJobs, else its role's default
   * (lib/jobs/quotas.ts effectiveQuota, whose EffectiveQuota this is); absent or a null value:
   * no quota.
   */
  pendingQuota?: { value: number | null; source: 'user' | 'role' | null };
  /**
   * The highest priority it may give a job in any queue: its role's cap (lib/jobs/quotas.ts
   * roleMaxPriority; a queue may lower it: lib/jobs/priority-cap.ts); absent or null: none.
   */
  maxPriority?: number | null;
}

/**
 * True when `actor` may change (cancel, delete, re-run, re-prioritise) a job submitted by user
 * `jobUserId`: admins any job, members their own, viewers none. A job without a submitter
 * (null: written outside any request) is an admin's to change.
 */
export function mayChangeJob(actor: Actor, jobUserId: number | null): boolean {
  if (actor.role === 'admin') return true;
  return actor.role === 'member' && jobUserId !== null && jobUserId === actor.userId;
}
