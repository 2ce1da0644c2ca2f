import { authSetting, AuthConfigError, type Env } from './binding';
import { ROLES, isRole, roleAtLeast, type Role } from '../jobs/roles';

/**
 * OIDC single sign-on settings (docs/design.md §15 "Single sign-on"), read from the environment
 * at start. All optional: without JOBDECK_OIDC_ISSUER there is no SSO; with it, the client id and
 * secret are required and every malformed value stops the start with a message naming the
 * variable.
 */

/** Path of the callback route (the redirect URI registered at the provider is base + this). */
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';
/** Path of the route that starts a login. */
export const OIDC_START_PATH = '/api/auth/oidc/start';

/** One `group=role` item of JOBDECK_OIDC_ROLES; group `*` matches everyone. */
export interface RoleRule {
  group: string;
  role: Role;
}

/** The validated OIDC settings. */
export interface OidcSettings {
  /** The issuer URL (https, or http on a loopback host: tests and local providers). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The public base URL of jobdeck (`scheme://host[:port]`) the redirect URI is built on; null: the request's origin. */
  baseUrl: string | null;
  /** The id-token claim holding the user's groups (string or string array). */
  roleClaim: string;
  /** group → role; the highest role among matching groups wins, `*` is the fallback. */
  roles: RoleRule[];
  /** The name the login page shows on its button ("Sign in with <label>"). */
  label: string;
  /**
   * The id-token claim naming the user's OS account (User.osUser, docs/design.md §16), set on
   * every login where the token carries it; null: the provider names none (an admin sets it).
   */
  osUserClaim: string | null;
}

/** Most `group=role` items in JOBDECK_OIDC_ROLES. */
export const MAX_ROLE_RULES = 100;
/** Longest group name in JOBDECK_OIDC_ROLES (characters). */
const MAX_GROUP = 256;

/** True when `hostname` is a loopback address or localhost (plain http is allowed only there). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function httpUrl(name: string, value: string): URL {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new AuthConfigError(`${name}: expected an absolute URL, got "${value}"`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) {
    throw new AuthConfigError(`${name}: must be an https:// URL (plain http only on a loopback host), got "${value}"`);
  }
  if (u.username || u.password || u.search || u.hash) throw new AuthConfigError(`${name}: must not carry credentials, a query or a fragment, got "${value}"`);
  return u;
}

/**
 * Parses JOBDECK_OIDC_ROLES: comma-separated `group=role` items (role admin, member or viewer;
 * group `*` = everyone), at most MAX_ROLE_RULES.
 * @throws AuthConfigError naming the variable and the bad item.
 */
export function parseRoleRules(value: string): RoleRule[] {
  const name = 'JOBDECK_OIDC_ROLES';
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (!items.length) throw new AuthConfigError(`${name}: expected group=role items separated by commas (e.g. admins=admin,*=viewer), got "${value}"`);
  if (items.length > MAX_ROLE_RULES) throw new AuthConfigError(`${name}: at most ${MAX_ROLE_RULES} items, got ${items.length}`);
  return items.map((item) => {
    const eq = item.lastIndexOf('=');
    const group = item.slice(0, eq).trim();
    const role = item.slice(eq + 1).trim();
    if (eq <= 0 || !group || group.length > MAX_GROUP) throw new AuthConfigError(`${name}: expected group=role (group 1–${MAX_GROUP} characters), got "${item}"`);
    if (!isRole(role)) throw new AuthConfigError(`${name}: role must be one of ${ROLES.join(', ')}, got "${role}" in "${item}"`);
    return { group, role };
  });
}

/**
 * The role of a user whose id token says `claim` (a string, or an array of strings; anything
 * else counts as no groups): the highest role among the rules whose group it lists, else the `*`
 * rule's, else null (the login is refused).
 */
export function mapRole(rules: readonly RoleRule[], claim: unknown): Role | null {
  const groups = new Set(typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : []);
  let best: Role | null = null;
  for (const r of rules) {
    if (r.group === '*' || !groups.has(r.group)) continue;
    if (!best || roleAtLeast(r.role, best)) best = r.role;
  }
  return best ?? rules.find((r) => r.group === '*')?.role ?? null;
}

/**
 * The OIDC settings from the environment (read through lib/config.ts, defaults there), or null
 * when JOBDECK_OIDC_ISSUER is unset. Variables: JOBDECK_OIDC_ISSUER, JOBDECK_OIDC_CLIENT_ID,
 * JOBDECK_OIDC_CLIENT_SECRET (required together), JOBDECK_OIDC_BASE_URL,
 * JOBDECK_OIDC_ROLE_CLAIM (default `groups`), JOBDECK_OIDC_ROLES (default `*=viewer`: everyone
 * the provider signs in is a viewer), JOBDECK_OIDC_LABEL (default the issuer's host),
 * JOBDECK_OIDC_OS_USER_CLAIM (none by default).
 * @throws AuthConfigError naming the variable that is missing or malformed.
 */
export function loadOidcSettings(env: Env): OidcSettings | null {
  const issuerRaw = authSetting('JOBDECK_OIDC_ISSUER', env);
  const clientId = authSetting('JOBDECK_OIDC_CLIENT_ID', env) ?? '';
  const clientSecret = authSetting('JOBDECK_OIDC_CLIENT_SECRET', env) ?? '';
  if (!issuerRaw) {
    if (clientId || clientSecret) throw new AuthConfigError('JOBDECK_OIDC_ISSUER: required when JOBDECK_OIDC_CLIENT_ID or JOBDECK_OIDC_CLIENT_SECRET is set');
    return null;
  }
  const issuer = httpUrl('JOBDECK_OIDC_ISSUER', issuerRaw);
  if (!clientId) throw new AuthConfigError('JOBDECK_OIDC_CLIENT_ID: required when JOBDECK_OIDC_ISSUER is set');
  if (!clientSecret) throw new AuthConfigError('JOBDECK_OIDC_CLIENT_SECRET: required when JOBDECK_OIDC_ISSUER is set');
  if (clientId.length > 256) throw new AuthConfigError('JOBDECK_OIDC_CLIENT_ID: at most 256 characters');
  if (clientSecret.length > 1024) throw new AuthConfigError('JOBDECK_OIDC_CLIENT_SECRET: at most 1024 characters');
  const baseRaw = authSetting('JOBDECK_OIDC_BASE_URL', env);
  let baseUrl: string | null = null;
  if (baseRaw) {
    const u = httpUrl('JOBDECK_OIDC_BASE_URL', baseRaw);
    if (u.pathname !== '/') throw new AuthConfigError(`JOBDECK_OIDC_BASE_URL: expected scheme://host[:port] with no path, got "${baseRaw}"`);
    baseUrl = u.origin;
  }
  const roleClaim = authSetting('JOBDECK_OIDC_ROLE_CLAIM', env);
  if (!/^[A-Za-z0-9_:.\/-]{1,128}$/.test(roleClaim)) throw new AuthConfigError(`JOBDECK_OIDC_ROLE_CLAIM: expected a claim name (1–128 letters, digits, _ : . / -), got "${roleClaim}"`);
  const label = authSetting('JOBDECK_OIDC_LABEL', env) ?? issuer.hostname;
  if (label.length > 64) throw new AuthConfigError('JOBDECK_OIDC_LABEL: at most 64 characters');
  const osUserClaim = authSetting('JOBDECK_OIDC_OS_USER_CLAIM', env);
  if (osUserClaim !== null && !/^[A-Za-z0-9_:.\/-]{1,128}$/.test(osUserClaim)) throw new AuthConfigError(`JOBDECK_OIDC_OS_USER_CLAIM: expected a claim name (1–128 letters, digits, _ : . / -), got "${osUserClaim}"`);
  return { issuer: issuer.href.replace(/\/$/, issuer.pathname === '/' ? '' : '/'), clientId, clientSecret, baseUrl, roleClaim, roles: parseRoleRules(authSetting('JOBDECK_OIDC_ROLES', env)), label, osUserClaim };
}
