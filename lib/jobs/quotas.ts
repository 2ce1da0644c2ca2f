/**
 * Per-user quotas and their role defaults (docs/design.md §15 "Quotas"). A user's own value
 * (User.maxPendingJobs, User.maxRunningCpus) wins; where it is null, its role's default applies
 * — an operator setting read at start from `JOBDECK_QUOTA_<ROLE>_PENDING_JOBS` and
 * `JOBDECK_QUOTA_<ROLE>_RUNNING_CPUS` for the roles that submit (member, admin; a viewer submits
 * nothing). Pure: the parser takes the environment as an argument.
 */
import type { Role } from './roles';

/** The two quotas, each null when there is none. */
export interface QuotaValues {
  /** Jobs PENDING at once. */
  maxPendingJobs: number | null;
  /** CPUs its running (active) jobs hold at once. */
  maxRunningCpus: number | null;
}

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
export function quotaVariable(role: QuotaRole, quota: keyof QuotaValues): string {
  return `JOBDECK_QUOTA_${role.toUpperCase()}_${quota === 'maxPendingJobs' ? 'PENDING_JOBS' : 'RUNNING_CPUS'}`;
}

const PREFIX = 'JOBDECK_QUOTA_';

/**
 * Reads the role defaults from `env`: for each role that submits, `JOBDECK_QUOTA_<ROLE>_PENDING_JOBS`
 * (an integer 0–1,000,000) and `JOBDECK_QUOTA_<ROLE>_RUNNING_CPUS` (a number 0–1,000,000, e.g.
 * `0.5`); unset or empty: no default.
 * @throws Error naming the variable for a malformed value, or for any other `JOBDECK_QUOTA_*`
 *   variable (a misspelt name, or a viewer's, which would silently do nothing).
 */
export function roleQuotasFromEnv(env: Readonly<Record<string, string | undefined>>): RoleQuotas {
  const known = new Set<string>();
  const out: Partial<Record<QuotaRole, QuotaValues>> = {};
  for (const role of QUOTA_ROLES) {
    const values: QuotaValues = { maxPendingJobs: null, maxRunningCpus: null };
    for (const quota of ['maxPendingJobs', 'maxRunningCpus'] as const) {
      const name = quotaVariable(role, quota);
      known.add(name);
      const raw = env[name]?.trim();
      if (!raw) continue;
      const n = /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : NaN;
      const whole = quota === 'maxPendingJobs';
      if (!Number.isFinite(n) || n > MAX_QUOTA || (whole && !Number.isInteger(n))) {
        throw new Error(`${name}: expected ${whole ? 'a whole number of jobs' : 'a number of CPUs'} from 0 to ${MAX_QUOTA}, got "${env[name]}"`);
      }
      values[quota] = n;
    }
    if (values.maxPendingJobs !== null || values.maxRunningCpus !== null) out[role] = values;
  }
  for (const name of Object.keys(env)) {
    if (name.startsWith(PREFIX) && !known.has(name)) {
      throw new Error(`${name}: not a jobdeck setting; the role quotas are ${[...known].join(', ')} (viewers submit nothing)`);
    }
  }
  return out;
}

/** A user as the quotas see it: its role and its own values (null: its role's default). */
export interface QuotaUser {
  role: Role;
  maxPendingJobs: number | null;
  maxRunningCpus: number | null;
}

/** The quota of `quota` that applies to `user`: its own value, else its role's default, else none. */
export function effectiveQuota(user: QuotaUser, quota: keyof QuotaValues, defaults: RoleQuotas): EffectiveQuota {
  if (user[quota] !== null) return { value: user[quota], source: 'user' };
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
