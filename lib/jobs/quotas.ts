/**
 * Per-user quotas and their role defaults (docs/design.md §15 "Quotas"). A user's own value
 * (User.maxPendingJobs, User.maxRunningCpus, User.maxRunningGpus) wins; where it is null, its
 * role's default applies — an operator setting read at start from
 * `JOBDECK_QUOTA_<ROLE>_PENDING_JOBS`, `…_RUNNING_CPUS` and `…_RUNNING_GPUS` for the roles that
 * submit (member, admin; a viewer submits nothing). Pure: the parser takes the environment as an
 * argument (lib/config.ts reads each variable).
 */
import { MEMBER_MAX_PRIORITY_VARIABLE } from './priority-cap';
import { setting, type Env } from '../config';
import type { Role } from './roles';

/** The quotas, each null when there is none, and (members only) the highest priority it may give a job. */
export interface QuotaValues {
  /** Jobs PENDING at once. */
  maxPendingJobs: number | null;
  /** CPUs its running (active) jobs hold at once. */
  maxRunningCpus: number | null;
  /** The highest priority it may give a job, 0–1000 (lib/jobs/priority-cap.ts; members only); absent: no cap. */
  maxPriority?: number;
  /** GPUs its running (active) jobs hold at once (Job.gpus; a share counts as its fraction). Absent: none. */
  maxRunningGpus?: number | null;
}

/** The quotas by name, in the order the variables are listed. */
const QUOTA_NAMES = ['maxPendingJobs', 'maxRunningCpus', 'maxRunningGpus'] as const;
/** One quota's name. */
export type QuotaName = (typeof QUOTA_NAMES)[number];
const SUFFIX = { maxPendingJobs: 'PENDING_JOBS', maxRunningCpus: 'RUNNING_CPUS', maxRunningGpus: 'RUNNING_GPUS' } as const satisfies Record<QuotaName, string>;

/** The roles that submit, so may have a default. */
export const QUOTA_ROLES = ['member', 'admin'] as const satisfies readonly Role[];
export type QuotaRole = (typeof QUOTA_ROLES)[number];

/** The operator's defaults per role (a role not listed, or a null value: no default). */
export type RoleQuotas = Readonly<Partial<Record<QuotaRole, QuotaValues>>>;

/** No role defaults (the default when no variable is set). */
export const NO_ROLE_QUOTAS: RoleQuotas = {};

/** Largest quota value accepted (the API's bound for the user's own values too). */
export const MAX_QUOTA = 1_000_000;

/** Where an effective quota comes from: the user's own value, its role's default, or none. */
export type QuotaSource = 'user' | 'role' | null;

/** One effective quota: its value (null: no limit) and where it comes from. */
export interface EffectiveQuota {
  value: number | null;
  source: QuotaSource;
}

/** The variable of one role's default of one quota: `JOBDECK_QUOTA_MEMBER_PENDING_JOBS`. */
export function quotaVariable(role: QuotaRole, quota: QuotaName) {
  return `JOBDECK_QUOTA_${role.toUpperCase() as Uppercase<QuotaRole>}_${SUFFIX[quota]}` as const;
}

const PREFIX = 'JOBDECK_QUOTA_';

/**
 * Reads the role defaults from `env` through lib/config.ts: for each role that submits,
 * `JOBDECK_QUOTA_<ROLE>_PENDING_JOBS` (an integer 0–1,000,000), `…_RUNNING_CPUS` and
 * `…_RUNNING_GPUS` (a number 0–1,000,000, e.g. `0.5`); and the members'
 * `JOBDECK_QUOTA_MEMBER_MAX_PRIORITY` (an integer 0–1000: admins are never capped, so there is
 * no admin one); unset or empty: no default.
 * @throws Error naming the variable for a malformed value, or for any other `JOBDECK_QUOTA_*`
 *   variable (a misspelt name, or a viewer's, which would silently do nothing).
 */
export function roleQuotasFromEnv(env: Env): RoleQuotas {
  const known = new Set<string>();
  const out: Partial<Record<QuotaRole, QuotaValues>> = {};
  for (const role of QUOTA_ROLES) {
    const values: QuotaValues = { maxPendingJobs: null, maxRunningCpus: null };
    for (const quota of QUOTA_NAMES) {
      const name = quotaVariable(role, quota);
      known.add(name);
      const v = setting(name, env);
      if (v !== null) values[quota] = v;
    }
    if (role === 'member') {
      known.add(MEMBER_MAX_PRIORITY_VARIABLE);
      const cap = setting(MEMBER_MAX_PRIORITY_VARIABLE, env);
      if (cap !== null) values.maxPriority = cap;
    }
    if (values.maxPendingJobs !== null || values.maxRunningCpus !== null || values.maxRunningGpus != null || values.maxPriority !== undefined) out[role] = values;
  }
  for (const name of Object.keys(env)) {
    if (name.startsWith(PREFIX) && !known.has(name)) {
      throw new Error(`${name}: not a jobdeck setting; the role quotas are ${[...known].join(', ')} (viewers submit nothing; admins have no priority cap)`);
    }
  }
  return out;
}

/** A user as the quotas see it: its role and its own values (null: its role's default). */
export interface QuotaUser {
  role: Role;
  maxPendingJobs: number | null;
  maxRunningCpus: number | null;
  maxRunningGpus?: number | null;
}

/** The quota of `quota` that applies to `user`: its own value, else its role's default, else none. */
export function effectiveQuota(user: QuotaUser, quota: QuotaName, defaults: RoleQuotas): EffectiveQuota {
  const own = user[quota] ?? null;
  if (own !== null) return { value: own, source: 'user' };
  const d = user.role === 'viewer' ? null : (defaults[user.role]?.[quota] ?? null);
  return d === null ? { value: null, source: null } : { value: d, source: 'role' };
}

/**
 * What a pending reason or a refusal adds about a quota that is a role's default: `, the member
 * role's default` for `roleDefault` "member"; empty for the user's own value (null/undefined).
 */
export function quotaOrigin(roleDefault: string | null | undefined): string {
  return roleDefault ? `, the ${roleDefault} role's default` : '';
}

/** The highest priority `role` may give a job in any queue (its role's cap; lib/jobs/priority-cap.ts); null: none (admins, viewers, or none set). */
export function roleMaxPriority(role: Role, defaults: RoleQuotas): number | null {
  return role === 'member' ? (defaults.member?.maxPriority ?? null) : null;
}
