/**
 * Users and personal API tokens (docs/design.md §15 "Authorization"): their rows. The server
 * keeps what authentication needs in memory (lib/auth/directory.ts) and reloads it from
 * directoryRows(); a token is stored as its sha256 only.
 */
import type { ApiToken, User } from '../generated/prisma/client';
import type { StoreScope } from './store';

/** The first admin's id: its row comes from the migration; the admin token authenticates as it. */
export const FIRST_ADMIN_ID = 1;

/** A user's settable fields (validated by the caller). */
export interface UserFields {
  name: string;
  role: string;
  passwordHash?: string | null;
  oidcSubject?: string | null;
  maxRunningCpus?: number | null;
  maxPendingJobs?: number | null;
}

/** What authentication reads: every user, and every token not revoked. */
export async function directoryRows(store: StoreScope): Promise<{ users: User[]; tokens: ApiToken[] }> {
  const [users, tokens] = await Promise.all([store.prisma.user.findMany({ orderBy: { id: 'asc' } }), store.prisma.apiToken.findMany({ where: { revokedAt: null } })]);
  return { users, tokens };
}

/** Every user, by id. */
export function listUsers(store: StoreScope): Promise<User[]> {
  return store.prisma.user.findMany({ orderBy: { id: 'asc' } });
}

/** One user by id or by name, or null. */
export function userRow(store: StoreScope, by: { id: number } | { name: string }): Promise<User | null> {
  return store.prisma.user.findUnique({ where: by });
}

/** The user an OIDC login is linked to (`oidcSubject`: `<issuer> <sub>`), or null. */
export function userByOidcSubject(store: StoreScope, oidcSubject: string): Promise<User | null> {
  return store.prisma.user.findUnique({ where: { oidcSubject } });
}

/**
 * Creates a user.
 * @throws Prisma's P2002 when the name (or the OIDC subject) is taken.
 */
export function createUser(store: StoreScope, f: UserFields): Promise<User> {
  return store.prisma.user.create({ data: f });
}

/** Changes a user's fields; `disabled` sets or clears disabledAt. Null when there is no such user. */
export async function updateUser(store: StoreScope, id: number, patch: Partial<Omit<UserFields, 'name'>> & { disabled?: boolean }): Promise<User | null> {
  const { disabled, ...rest } = patch;
  const data = { ...rest, ...(disabled === undefined ? {} : { disabledAt: disabled ? new Date() : null }) };
  const r = await store.prisma.user.updateMany({ where: { id }, data });
  return r.count ? store.prisma.user.findUnique({ where: { id } }) : null;
}

/** A new token's row (the hash of the token, never the token). */
export interface NewToken {
  userId: number;
  name: string;
  prefix: string;
  hash: string;
  expiresAt: Date | null;
}

/** Most tokens a user may hold that are not revoked. */
export const MAX_TOKENS_PER_USER = 50;

/** Creates a token row. */
export function createToken(store: StoreScope, t: NewToken): Promise<ApiToken> {
  return store.prisma.apiToken.create({ data: t });
}

/** Tokens not revoked of one user. */
export function countLiveTokens(store: StoreScope, userId: number): Promise<number> {
  return store.prisma.apiToken.count({ where: { userId, revokedAt: null } });
}

/** Tokens (revoked ones included), newest first: one user's, or everyone's (null). At most 500. */
export function listTokens(store: StoreScope, userId: number | null): Promise<Array<ApiToken & { user: { name: string } }>> {
  return store.prisma.apiToken.findMany({ where: userId === null ? {} : { userId }, orderBy: { id: 'desc' }, take: 500, include: { user: { select: { name: true } } } });
}

/** One token row, or null. */
export function tokenRow(store: StoreScope, id: number): Promise<ApiToken | null> {
  return store.prisma.apiToken.findUnique({ where: { id } });
}

/** Marks a token revoked (once: an already revoked token keeps its time). The row, or null. */
export async function revokeTokenRow(store: StoreScope, id: number, at: Date = new Date()): Promise<ApiToken | null> {
  await store.prisma.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
  return store.prisma.apiToken.findUnique({ where: { id } });
}

/** Records a token's use (callers write it at most once a minute per token). */
export async function touchToken(store: StoreScope, id: number, at: Date): Promise<void> {
  await store.prisma.apiToken.updateMany({ where: { id }, data: { lastUsedAt: at } });
}
