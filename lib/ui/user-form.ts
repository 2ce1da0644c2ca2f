/**
 * The Users page's form, pure (docs/design.md §15): what was typed → the body of POST /api/users
 * or, for an existing user, the PATCH /api/users/{id} body of only what changed; an API refusal →
 * its message next to the field it names; how a user logs in, in words. Browser-safe.
 */
import type { UserView } from '../api/types';

/** The roles, least to most (lib/jobs/roles.ts ROLES). */
export const USER_ROLES = ['viewer', 'member', 'admin'] as const;

/** The form's fields, as typed. Quotas: '' is "not set". */
export interface UserDraft {
  name: string;
  role: string;
  /** Create: the password ('' for none). Edit: a new password ('' leaves it). */
  password: string;
  maxPendingJobs: string;
  maxRunningCpus: string;
  maxRunningGpus: string;
  /** The OS account its jobs run as ('' for none: the run account). */
  osUser: string;
}

/** The fields the API takes, each a key of an error map. */
export type UserField = 'name' | 'role' | 'password' | 'maxPendingJobs' | 'maxRunningCpus' | 'maxRunningGpus' | 'osUser' | 'disabled';

/** Field → message; `general` a message for no one field. */
export type FieldErrors = Partial<Record<UserField | 'general', string>>;

/** What POST/PATCH /api/users take (a field left out: unchanged; a null quota: not set). */
export interface UserBody {
  name?: string;
  role?: string;
  password?: string;
  maxPendingJobs?: number | null;
  maxRunningCpus?: number | null;
  maxRunningGpus?: number | null;
  osUser?: string | null;
  disabled?: boolean;
}

/** An empty form, a new member. */
export const EMPTY_USER: UserDraft = { name: '', role: 'member', password: '', maxPendingJobs: '', maxRunningCpus: '', maxRunningGpus: '', osUser: '' };

/** The form for an existing user (no password shown: it is never sent back). */
export function draftOfUser(u: Pick<UserView, 'name' | 'role' | 'maxPendingJobs' | 'maxRunningCpus'> & Partial<Pick<UserView, 'maxRunningGpus' | 'osUser'>>): UserDraft {
  const text = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));
  return { name: u.name, role: u.role, password: '', maxPendingJobs: text(u.maxPendingJobs), maxRunningCpus: text(u.maxRunningCpus), maxRunningGpus: text(u.maxRunningGpus), osUser: u.osUser ?? '' };
}

/** A quota as typed: null when empty, the number when it is one (the API checks its range). */
function quotaOf(text: string): number | null | 'nan' {
  const t = text.trim();
  if (t === '') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : 'nan';
}

/**
 * The request body for a draft: every field for a new user, only the changed ones for `was`.
 * Only "is it a number" is checked here; the ranges and the name and password rules are the API's,
 * whose answer names the field.
 */
export function userBody(d: UserDraft, was?: Pick<UserView, 'role' | 'maxPendingJobs' | 'maxRunningCpus'> & Partial<Pick<UserView, 'maxRunningGpus' | 'osUser'>>): { body: UserBody } | { errors: FieldErrors } {
  const pending = quotaOf(d.maxPendingJobs);
  const cpus = quotaOf(d.maxRunningCpus);
  const gpus = quotaOf(d.maxRunningGpus ?? '');
  const errors: FieldErrors = {};
  if (pending === 'nan') errors.maxPendingJobs = 'must be a whole number, or empty for none';
  if (cpus === 'nan') errors.maxRunningCpus = 'must be a number of CPUs, or empty for none';
  if (gpus === 'nan') errors.maxRunningGpus = 'must be a number of GPUs, or empty for none';
  if (pending === 'nan' || cpus === 'nan' || gpus === 'nan') return { errors };
  const osUser = (d.osUser ?? '').trim() || null;
  if (!was) return { body: { name: d.name.trim(), role: d.role, ...(d.password ? { password: d.password } : {}), maxPendingJobs: pending, maxRunningCpus: cpus, maxRunningGpus: gpus, ...(osUser ? { osUser } : {}) } };
  const body: UserBody = {};
  if (d.role !== was.role) body.role = d.role;
  if (pending !== (was.maxPendingJobs ?? null)) body.maxPendingJobs = pending;
  if (cpus !== (was.maxRunningCpus ?? null)) body.maxRunningCpus = cpus;
  if (gpus !== (was.maxRunningGpus ?? null)) body.maxRunningGpus = gpus;
  if (osUser !== (was.osUser ?? null)) body.osUser = osUser;
  if (d.password) body.password = d.password;
  return { body };
}

const FIELDS: readonly string[] = ['name', 'role', 'password', 'maxPendingJobs', 'maxRunningCpus', 'maxRunningGpus', 'osUser', 'disabled'];

/**
 * An API refusal as messages by field: a 400's `issues` (`[{path, message}]`, path like
 * `maxPendingJobs`), or a `field` member (409 name taken, the first admin's role) with the
 * `detail`; anything else is `general`. `err` is an ApiRequestError-like object (status, detail, body).
 */
export function fieldErrorsOf(err: unknown): FieldErrors {
  const e = (err ?? {}) as { detail?: unknown; message?: unknown; body?: Record<string, unknown> };
  const detail = typeof e.detail === 'string' && e.detail ? e.detail : String(e.message ?? 'the request failed');
  const out: FieldErrors = {};
  const issues = Array.isArray(e.body?.issues) ? (e.body.issues as { path?: unknown; message?: unknown }[]) : [];
  for (const i of issues) {
    const key = typeof i.path === 'string' ? i.path.split(/[.[]/)[0] : '';
    if (FIELDS.includes(key) && typeof i.message === 'string' && !out[key as UserField]) out[key as UserField] = i.message;
  }
  const field = e.body?.field;
  if (typeof field === 'string' && FIELDS.includes(field) && !out[field as UserField]) out[field as UserField] = detail;
  if (Object.keys(out).length === 0) out.general = detail;
  return out;
}

/** How a user logs in: "password", "single sign-on", both, or "token only". */
export function loginMethods(u: Pick<UserView, 'hasPassword' | 'sso'>): string {
  const ways = [u.hasPassword ? 'password' : '', u.sso ? 'single sign-on' : ''].filter(Boolean);
  return ways.length ? ways.join(', ') : 'token only';
}
