/**
 * Personal API tokens and users over HTTP (docs/design.md §15): create / list / revoke tokens
 * (a user its own, an admin anyone's), create / list / change users (admins). Each change is
 * written to the database, then to the server's auth directory at once (a revoke holds from the
 * next request and closes the token's WebSockets), then audited.
 */
import { randomBytes } from 'node:crypto';
import type { AuthDirectory } from '../auth/directory';
import { accountProblem, lookupAccount, type AccountRules } from '../accounts';
import { hashPassword } from '../auth/password';
import { permissionsOf } from '../auth/rules';
import { hashToken } from '../auth/tokens';
import { TOKEN_PREFIX_CHARS } from '../auth/guard';
import type { ApiToken, User } from '../generated/prisma/client';
import { effectiveQuota, type RoleQuotas } from '../jobs/quotas';
import { isRole, type Actor } from '../jobs/roles';
import { countLiveTokens, createToken, createUser, listTokens, listUsers, MAX_TOKENS_PER_USER, revokeTokenRow, tokenRow, updateUser, userRow, type Store } from '../store';
import { record } from './audit';
import { badRequest, conflict, forbidden, notFound } from './errors';
import { readJson, validate } from './request';
import { CreateTokenSchema, CreateUserSchema, PatchUserSchema } from './team-schemas';
import type { CreatedTokenView, TokenView, UserMe, UserView } from './types';

export type { UserMe, TokenView, UserView } from './types';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** GET /api/users/me's answer for `actor`: who it is, its priority cap (maxPriority: null for none) and the rows of the authorization table it passes. */
export function meView(actor: Actor): UserMe {
  return { id: actor.userId, name: actor.name, role: actor.role, tokenPrefix: actor.tokenPrefix, maxPriority: actor.maxPriority ?? null, may: permissionsOf(actor.role) };
}

function tokenView(t: ApiToken & { user?: { name: string } }): TokenView {
  return { id: t.id, userId: t.userId, ...(t.user ? { userName: t.user.name } : {}), name: t.name, prefix: t.prefix, createdAt: t.createdAt.toISOString(), lastUsedAt: iso(t.lastUsedAt), expiresAt: iso(t.expiresAt), revokedAt: iso(t.revokedAt) };
}

/** A User row as the API shows it, with the quotas that apply given the role defaults `quotas`. */
export function userView(u: User, quotas: RoleQuotas): UserView {
  const q = { role: isRole(u.role) ? u.role : 'viewer', maxRunningCpus: u.maxRunningCpus, maxRunningGpus: u.maxRunningGpus, maxPendingJobs: u.maxPendingJobs } as const;
  return {
    id: u.id,
    name: u.name,
    role: u.role,
    hasPassword: u.passwordHash !== null,
    sso: u.oidcSubject !== null,
    maxRunningCpus: u.maxRunningCpus,
    maxRunningGpus: u.maxRunningGpus,
    maxPendingJobs: u.maxPendingJobs,
    quotas: { maxRunningCpus: effectiveQuota(q, 'maxRunningCpus', quotas), maxRunningGpus: effectiveQuota(q, 'maxRunningGpus', quotas), maxPendingJobs: effectiveQuota(q, 'maxPendingJobs', quotas) },
    osUser: u.osUser,
    disabled: u.disabledAt !== null,
    createdAt: u.createdAt.toISOString(),
  };
}

/** A new personal token: `jdp_` + 32 random bytes, base64url. */
function newToken(): string {
  return `jdp_${randomBytes(32).toString('base64url')}`;
}

/** The id of a path like /api/tokens/{id} or /api/users/{id}. @throws ApiError 400. */
export function parseId(raw: string | undefined, what: string): number {
  const n = /^[1-9][0-9]{0,9}$/.test(raw ?? '') ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n > 2_147_483_647) throw badRequest(`${what} id must be a positive integer, got "${String(raw).slice(0, 40)}"`, { issues: [{ path: 'id', message: 'must be a positive integer' }] });
  return n;
}

/**
 * POST /api/tokens `{name, expiresInDays? | expiresAt?, userId?}` → the token, shown this once. `userId`
 * (another user's token) is for admins.
 * @throws ApiError 400 naming the field; 403 for another user's token; 404 unknown user; 409 over MAX_TOKENS_PER_USER.
 */
export async function createTokenFor(store: Store, dir: AuthDirectory, actor: Actor, req: Request): Promise<CreatedTokenView> {
  const body = validate(CreateTokenSchema, await readJson(req), 'request body');
  const userId = body.userId ?? actor.userId;
  if (userId !== actor.userId && actor.role !== 'admin') throw forbidden("only an admin creates another user's token");
  const user = await userRow(store, { id: userId });
  if (!user) throw notFound(`user ${userId} not found`);
  if (user.disabledAt) throw conflict(`user ${user.name} is disabled: enable it before giving it a token`);
  if ((await countLiveTokens(store, userId)) >= MAX_TOKENS_PER_USER) throw conflict(`user ${user.name} has ${MAX_TOKENS_PER_USER} live tokens, the most allowed; revoke one first`);
  const token = newToken();
  const expiresAt = body.expiresAt ? new Date(body.expiresAt) : body.expiresInDays ? new Date(Date.now() + body.expiresInDays * 86_400_000) : null;
  const row = await createToken(store, { userId, name: body.name, prefix: token.slice(0, TOKEN_PREFIX_CHARS), hash: hashToken(token).toString('hex'), expiresAt, userEpoch: user.tokenEpoch });
  dir.putToken(row);
  await record(store, actor, 'token.create', `token:${row.id}`, { user: user.name, name: row.name, prefix: row.prefix });
  // With its user's name, as the list has it (`jobdeck tokens create` prints the same row).
  return { ...tokenView({ ...row, user: { name: user.name } }), token };
}

/** GET /api/tokens[?all=1] — the caller's tokens; `all=1` (admins) everyone's. @throws ApiError 400, 403. */
export async function tokenList(store: Store, actor: Actor, url: URL): Promise<{ tokens: TokenView[] }> {
  const all = url.searchParams.get('all');
  if (all !== null && all !== '1' && all !== 'true') throw badRequest('all: expected 1 or true', { issues: [{ path: 'all', message: 'expected 1 or true' }] });
  if (all !== null && actor.role !== 'admin') throw forbidden("only an admin lists everyone's tokens");
  const rows = await listTokens(store, all !== null ? null : actor.userId);
  return { tokens: rows.map(tokenView) };
}

/**
 * DELETE /api/tokens/{id} — revokes the token (its user's or an admin's call): it stops
 * authenticating at once and its WebSockets close. Revoking a revoked token is a no-op (204).
 * @throws ApiError 404 unknown token, or another user's for a non-admin (no hint that it exists).
 */
export async function revokeToken(store: Store, dir: AuthDirectory, actor: Actor, id: number): Promise<void> {
  const row = await tokenRow(store, id);
  if (!row || (row.userId !== actor.userId && actor.role !== 'admin')) throw notFound(`token ${id} not found`);
  if (row.revokedAt) return;
  await revokeTokenRow(store, id);
  dir.dropToken(id);
  await record(store, actor, 'token.revoke', `token:${id}`, { prefix: row.prefix });
}

/**
 * Checks an OS account named for a user (docs/design.md §16): it must exist on this machine and
 * be one a job may run as (lib/accounts.ts accountProblem: not root, not jobdeck's own, not a
 * system account). Null (no account of its own) passes.
 * @throws ApiError 400 naming the field `osUser`.
 */
async function checkOsUser(name: string | null | undefined, rules: AccountRules): Promise<void> {
  if (!name) return;
  const found = await lookupAccount(name);
  if (!found) throw badRequest(`osUser: there is no OS account named ${name} on this machine (create it first: useradd)`, { field: 'osUser', issues: [{ path: 'osUser', message: 'no such OS account' }] });
  const problem = accountProblem(found, rules);
  if (problem) throw badRequest(`osUser: ${problem}`, { field: 'osUser', issues: [{ path: 'osUser', message: problem }] });
}

/** GET /api/users — every user, with the quotas that apply given the role defaults `quotas`. */
export async function userList(store: Store, quotas: RoleQuotas): Promise<{ users: UserView[] }> {
  return { users: (await listUsers(store)).map((u) => userView(u, quotas)) };
}

/**
 * POST /api/users `{name, role, password?, maxRunningCpus?, maxRunningGpus?, maxPendingJobs?}` → 201 the user
 * (its view with the role defaults `quotas`).
 * @throws ApiError 400 naming the field; 409 when the name is taken.
 */
export async function createUserFrom(store: Store, dir: AuthDirectory, actor: Actor, req: Request, quotas: RoleQuotas, accounts: AccountRules): Promise<UserView> {
  const body = validate(CreateUserSchema, await readJson(req), 'request body');
  if (await userRow(store, { name: body.name })) throw conflict(`user ${body.name} exists`, { field: 'name' });
  await checkOsUser(body.osUser, accounts);
  const user = await createUser(store, {
    name: body.name,
    role: body.role,
    passwordHash: body.password ? await hashPassword(body.password) : null,
    maxRunningCpus: body.maxRunningCpus ?? null,
    maxRunningGpus: body.maxRunningGpus ?? null,
    maxPendingJobs: body.maxPendingJobs ?? null,
    osUser: body.osUser ?? null,
  });
  dir.putUser(user);
  await record(store, actor, 'user.create', `user:${user.id}`, { name: user.name, role: user.role, ...(user.osUser ? { osUser: user.osUser } : {}) });
  return userView(user, quotas);
}

/**
 * PATCH /api/users/{id} `{role?, password?, disabled?, maxRunningCpus?, maxRunningGpus?, maxPendingJobs?}`.
 * The first admin (user 1) keeps its role and cannot be disabled: the admin token is it.
 * Answers the user's view with the role defaults `quotas`.
 * @throws ApiError 400 naming the field (or the first admin's role); 404 unknown user.
 */
export async function patchUser(store: Store, dir: AuthDirectory, actor: Actor, id: number, req: Request, quotas: RoleQuotas, accounts: AccountRules): Promise<UserView> {
  const body = validate(PatchUserSchema, await readJson(req), 'request body');
  await checkOsUser(body.osUser, accounts);
  if (id === 1 && ((body.role && body.role !== 'admin') || body.disabled)) throw badRequest('the first admin (user 1) stays an enabled admin: the admin token authenticates as it', { field: body.role ? 'role' : 'disabled' });
  const { password, ...rest } = body;
  const patch = { ...rest, ...(password === undefined ? {} : { passwordHash: password === null ? null : await hashPassword(password) }) };
  const user = await updateUser(store, id, patch);
  if (!user) throw notFound(`user ${id} not found`);
  dir.putUser(user);
  const changed = Object.keys(body).map((k) => (k === 'password' ? 'password' : k));
  await record(store, actor, 'user.update', `user:${id}`, { name: user.name, changed, ...(body.role ? { role: body.role } : {}), ...(body.disabled !== undefined ? { disabled: body.disabled } : {}), ...(body.osUser !== undefined ? { osUser: body.osUser } : {}) });
  return userView(user, quotas);
}
