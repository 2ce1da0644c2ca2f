/**
 * Users and personal API tokens (docs/design.md §15 "Authorization"): their rows. The server
 * keeps what authentication needs in memory (lib/auth/directory.ts) and reloads it from
 * directoryRows(); a token is stored as its sha256 only.
 */
import { Prisma, type ApiToken, type User } from '../generated/prisma/client';
import type { Store, StoreScope } from './handle';
import { pgTimestamp } from './sql';
import { queryPrepared } from './prepared';

/** The first admin's id: its row comes from the migration; the admin token authenticates as it. */
export const FIRST_ADMIN_ID = 1;

/** A user's settable fields (validated by the caller). */
export interface UserFields {
  name: string;
  role: string;
  passwordHash?: string | null;
  oidcSubject?: string | null;
  maxRunningCpus?: number | null;
  maxRunningGpus?: number | null;
  maxPendingJobs?: number | null;
  /** The OS account its jobs run as (isolation on); null: the run account. */
  osUser?: string | null;
}

/** What authentication reads: every user, and every token not revoked. */
export async function directoryRows(store: StoreScope): Promise<{ users: User[]; tokens: ApiToken[] }> {
  const [users, tokens] = await Promise.all([store.prisma.user.findMany({ orderBy: { id: 'asc' } }), store.prisma.apiToken.findMany({ where: { revokedAt: null } })]);
  return { users, tokens };
}

/**
 * The live (not revoked) tokens as a set: how many, and the md5 of their ids in ascending order
 * joined by commas (liveTokenDigest computes the same from a list of ids). A live token's other
 * columns never change (a revoke ends it; lastUsedAt is not what authentication reads), so an
 * equal answer means the same live tokens: the directory's reload reads no token row then.
 */
export async function liveTokenSet(store: StoreScope): Promise<{ count: number; digest: string }> {
  const [row] = await store.prisma.$queryRaw<Array<{ count: number; digest: string }>>(Prisma.sql`
    SELECT count(*)::int AS "count", md5(COALESCE(string_agg("id"::text, ',' ORDER BY "id"), '')) AS "digest"
    FROM "ApiToken" WHERE "revokedAt" IS NULL`);
  return { count: row?.count ?? 0, digest: row?.digest ?? '' };
}

/** The ids of the live tokens, ascending. */
export async function liveTokenIds(store: StoreScope): Promise<number[]> {
  const rows = await store.prisma.$queryRaw<Array<{ id: number }>>(Prisma.sql`SELECT "id" FROM "ApiToken" WHERE "revokedAt" IS NULL ORDER BY "id"`);
  return rows.map((r) => r.id);
}

/** The live tokens among `ids` (one query; [] for none). */
export function liveTokensById(store: StoreScope, ids: readonly number[]): Promise<ApiToken[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return store.prisma.apiToken.findMany({ where: { id: { in: [...ids] }, revokedAt: null } });
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

/**
 * Changes a user's fields; `disabled` sets or clears disabledAt. Disabling moves both its epochs
 * on (every session and token it had ends, and stays ended after an enable); a new password
 * (or none) moves its session epoch on (every session ends; tokens stay). Null when there is no
 * such user.
 */
export async function updateUser(store: StoreScope, id: number, patch: Partial<Omit<UserFields, 'name'>> & { disabled?: boolean }): Promise<User | null> {
  const { disabled, ...rest } = patch;
  const endSessions = disabled === true || patch.passwordHash !== undefined;
  const data = {
    ...rest,
    ...(disabled === undefined ? {} : { disabledAt: disabled ? new Date() : null }),
    ...(endSessions ? { sessionEpoch: { increment: 1 } } : {}),
    ...(disabled === true ? { tokenEpoch: { increment: 1 } } : {}),
  };
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
  /** The user's tokenEpoch as read when it was made (a disable since ends it). */
  userEpoch: number;
}

/** Most tokens a user may hold that are not revoked. */
export const MAX_TOKENS_PER_USER = 50;

/** Creates a token row. */
export function createToken(store: StoreScope, t: NewToken): Promise<ApiToken> {
  return store.prisma.apiToken.create({ data: t });
}

/** Personal tokens not revoked of one user (attempts' own tokens are not counted). */
export function countLiveTokens(store: StoreScope, userId: number): Promise<number> {
  return store.prisma.apiToken.count({ where: { userId, revokedAt: null, attemptId: null } });
}

/** Personal tokens (revoked ones included; attempts' own are not listed), newest first: one user's, or everyone's (null). At most 500. */
export function listTokens(store: StoreScope, userId: number | null): Promise<Array<ApiToken & { user: { name: string } }>> {
  return store.prisma.apiToken.findMany({ where: userId === null ? { attemptId: null } : { userId, attemptId: null }, orderBy: { id: 'desc' }, take: 500, include: { user: { select: { name: true } } } });
}

/**
 * Creates an attempt's own token (docs/design.md §16 "An attempt's token"): a token of the job's
 * submitter tied to the attempt — any earlier one of the same attempt (a launch tried again) is
 * replaced — and announces it on the bus (`token`), so the server authenticates it at once. The
 * database revokes it when the attempt ends (the trigger of migration 20261227000000_os_accounts).
 * Null when the attempt has ended already or its user is gone or disabled (no token then).
 */
export async function createAttemptToken(store: Store, t: { jobId: number; attemptId: number; userId: number; name: string; prefix: string; hash: string }): Promise<ApiToken | null> {
  // One statement (a launch makes one per attempt): the user's epoch, the attempt still live, the
  // earlier token gone — `d` is read by the INSERT, so it runs first and frees the attempt's
  // unique slot — and the new row.
  // Every value cast: on PGlite the statement is prepared once (prepared.ts).
  const sql = Prisma.sql`
    WITH u AS (SELECT "tokenEpoch" FROM "User" WHERE "id" = ${t.userId}::int AND "disabledAt" IS NULL),
    a AS (SELECT 1 FROM "Attempt" WHERE "id" = ${t.attemptId}::int AND "status" IN ('STARTING', 'RUNNING')),
    d AS (DELETE FROM "ApiToken" WHERE "attemptId" = ${t.attemptId}::int AND EXISTS (SELECT 1 FROM u) AND EXISTS (SELECT 1 FROM a) RETURNING 1)
    INSERT INTO "ApiToken" ("userId", "name", "prefix", "hash", "createdAt", "userEpoch", "attemptId")
    SELECT ${t.userId}::int, ${t.name}::text, ${t.prefix}::text, ${t.hash}::text, ${pgTimestamp(new Date())}::timestamp(3), u."tokenEpoch", ${t.attemptId}::int
    FROM u WHERE EXISTS (SELECT 1 FROM a) AND (SELECT count(*) FROM d) >= 0
    RETURNING *`;
  const rows = await queryPrepared<ApiToken>(store.prisma, store.prepared, sql.text, sql.values);
  const row = rows[0];
  if (!row) return null;
  store.bus.emit({ type: 'token', jobId: t.jobId, token: row });
  return row;
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
