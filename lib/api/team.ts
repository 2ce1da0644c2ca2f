/**
 * Personal API tokens and users over HTTP (docs/design.md §15): create / list / revoke tokens
 * (a user its own, an admin anyone's), create / list / change users (admins). Each change is
 * written to the database, then to the server's auth directory at once (a revoke holds from the
 * next request and closes the token's WebSockets), then audited.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AuthDirectory } from '../auth/directory';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from '../auth/password';
import { hashToken } from '../auth/tokens';
import { TOKEN_PREFIX_CHARS } from '../auth/guard';
import type { ApiToken, User } from '../generated/prisma/client';
import { effectiveQuota, MAX_QUOTA, type RoleQuotas } from '../jobs/quotas';
import { isRole, ROLES, type Actor } from '../jobs/roles';
import { countLiveTokens, createToken, createUser, listTokens, listUsers, MAX_TOKENS_PER_USER, revokeTokenRow, tokenRow, updateUser, userRow, type Store } from '../store';
import { record } from './audit';
import { badRequest, conflict, forbidden, notFound } from './errors';
import { readJson, validate } from './request';
import type { TokenView, UserView } from './types';

export type { TokenView, UserView } from './types';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function tokenView(t: ApiToken & { user?: { name: string } }): TokenView {
  return { id: t.id, userId: t.userId, ...(t.user ? { userName: t.user.name } : {}), name: t.name, prefix: t.prefix, createdAt: t.createdAt.toISOString(), lastUsedAt: iso(t.lastUsedAt), expiresAt: iso(t.expiresAt), revokedAt: iso(t.revokedAt) };
}

/** A User row as the API shows it, with the quotas that apply given the role defaults `quotas`. */
export function userView(u: User, quotas: RoleQuotas): UserView {
  const q = { role: isRole(u.role) ? u.role : 'viewer', maxRunningCpus: u.maxRunningCpus, maxPendingJobs: u.maxPendingJobs } as const;
  return {
    id: u.id,
    name: u.name,
    role: u.role,
    hasPassword: u.passwordHash !== null,
    sso: u.oidcSubject !== null,
    maxRunningCpus: u.maxRunningCpus,
    maxPendingJobs: u.maxPendingJobs,
    quotas: { maxRunningCpus: effectiveQuota(q, 'maxRunningCpus', quotas), maxPendingJobs: effectiveQuota(q, 'maxPendingJobs', quotas) },
    disabled: u.disabledAt !== null,
    createdAt: u.createdAt.toISOString(),
  };
}

const Id = z.number().int().min(1).max(2_147_483_647);
const TokenName = z.string().trim().min(1, 'must not be empty').max(63, 'must be at most 63 characters').regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');
const CreateTokenSchema = z
  .object({
    name: TokenName,
    expiresInDays: z.number().int().min(1).max(3650).optional(),
    expiresAt: z.iso.datetime({ offset: true }).optional(),
    userId: Id.optional(),
  })
  .strict()
  .refine((b) => !(b.expiresInDays && b.expiresAt), { message: 'give expiresInDays or expiresAt, not both', path: ['expiresAt'] })
  .refine((b) => !b.expiresAt || (Date.parse(b.expiresAt) > Date.now() && Date.parse(b.expiresAt) < Date.now() + 3650 * 86_400_000), {
    message: 'must be in the future and within 10 years',
    path: ['expiresAt'],
  });

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
export async function createTokenFor(store: Store, dir: AuthDirectory, actor: Actor, req: Request): Promise<TokenView & { token: string }> {
  const body = validate(CreateTokenSchema, await readJson(req), 'request body');
  const userId = body.userId ?? actor.userId;
  if (userId !== actor.userId && actor.role !== 'admin') throw forbidden("only an admin creates another user's token");
  const user = await userRow(store, { id: userId });
  if (!user) throw notFound(`user ${userId} not found`);
  if ((await countLiveTokens(store, userId)) >= MAX_TOKENS_PER_USER) throw conflict(`user ${user.name} has ${MAX_TOKENS_PER_USER} live tokens, the most allowed; revoke one first`);
  const token = newToken();
  const expiresAt = body.expiresAt ? new Date(body.expiresAt) : body.expiresInDays ? new Date(Date.now() + body.expiresInDays * 86_400_000) : null;
  const row = await createToken(store, { userId, name: body.name, prefix: token.slice(0, TOKEN_PREFIX_CHARS), hash: hashToken(token).toString('hex'), expiresAt });
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

const UserName = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be lower-case letters, digits, ".", "-" or "_", starting with a letter or digit');
const Password = z.string().min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`).max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`);
const Quotas = {
  maxRunningCpus: z.number().min(0).max(MAX_QUOTA).nullable().optional(),
  maxPendingJobs: z.number().int().min(0).max(MAX_QUOTA).nullable().optional(),
};
const CreateUserSchema = z.object({ name: UserName, role: z.enum(ROLES), password: Password.optional(), ...Quotas }).strict();
const PatchUserSchema = z.object({ role: z.enum(ROLES).optional(), password: Password.nullable().optional(), disabled: z.boolean().optional(), ...Quotas }).strict();

/** GET /api/users — every user, with the quotas that apply given the role defaults `quotas`. */
export async function userList(store: Store, quotas: RoleQuotas): Promise<{ users: UserView[] }> {
  return { users: (await listUsers(store)).map((u) => userView(u, quotas)) };
}

/**
 * POST /api/users `{name, role, password?, maxRunningCpus?, maxPendingJobs?}` → 201 the user
 * (its view with the role defaults `quotas`).
 * @throws ApiError 400 naming the field; 409 when the name is taken.
 */
export async function createUserFrom(store: Store, dir: AuthDirectory, actor: Actor, req: Request, quotas: RoleQuotas): Promise<UserView> {
  const body = validate(CreateUserSchema, await readJson(req), 'request body');
  if (await userRow(store, { name: body.name })) throw conflict(`user ${body.name} exists`, { field: 'name' });
  const user = await createUser(store, {
    name: body.name,
    role: body.role,
    passwordHash: body.password ? await hashPassword(body.password) : null,
    maxRunningCpus: body.maxRunningCpus ?? null,
    maxPendingJobs: body.maxPendingJobs ?? null,
  });
  dir.putUser(user);
  await record(store, actor, 'user.create', `user:${user.id}`, { name: user.name, role: user.role });
  return userView(user, quotas);
}

/**
 * PATCH /api/users/{id} `{role?, password?, disabled?, maxRunningCpus?, maxPendingJobs?}`.
 * The first admin (user 1) keeps its role and cannot be disabled: the admin token is it.
 * Answers the user's view with the role defaults `quotas`.
 * @throws ApiError 400 naming the field (or the first admin's role); 404 unknown user.
 */
export async function patchUser(store: Store, dir: AuthDirectory, actor: Actor, id: number, req: Request, quotas: RoleQuotas): Promise<UserView> {
  const body = validate(PatchUserSchema, await readJson(req), 'request body');
  if (id === 1 && ((body.role && body.role !== 'admin') || body.disabled)) throw badRequest('the first admin (user 1) stays an enabled admin: the admin token authenticates as it', { field: body.role ? 'role' : 'disabled' });
  const { password, ...rest } = body;
  const patch = { ...rest, ...(password === undefined ? {} : { passwordHash: password === null ? null : await hashPassword(password) }) };
  const user = await updateUser(store, id, patch);
  if (!user) throw notFound(`user ${id} not found`);
  dir.putUser(user);
  const changed = Object.keys(body).map((k) => (k === 'password' ? 'password' : k));
  await record(store, actor, 'user.update', `user:${id}`, { name: user.name, changed, ...(body.role ? { role: body.role } : {}), ...(body.disabled !== undefined ? { disabled: body.disabled } : {}) });
  return userView(user, quotas);
}
