/**
 * The zod schemas of users, personal tokens and the audit log (/api/tokens, /api/users,
 * /api/audit; docs/design.md §15): the requests lib/api/team.ts and audit.ts validate with, and
 * the answers, registered as OpenAPI components like lib/api/schemas.ts. The paths of
 * lib/api/openapi-team.ts are generated from them; compile-time checks at the end hold the answers
 * to lib/api/types.ts, the contract the CLI and the dashboard read.
 */
import { z } from 'zod';
import { ACCOUNT_NAME } from '../accounts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../auth/password';
import { MAX_QUOTA } from '../jobs/quotas';
import { ROLES } from '../jobs/roles';
import { AUDIT_ACTIONS } from '../store';
import { isoTime, MAX_PG_INT, named } from './schemas';
import type { AuditRow, CreatedTokenView, QuotaView, TokenView, UserMe, UserView } from './types';

// ─── requests ────────────────────────────────────────────────────────────────────────────────

const Id = z.number().int().min(1).max(MAX_PG_INT);
const TokenName = z.string().trim().min(1, 'must not be empty').max(63, 'must be at most 63 characters').regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');

/** Body of POST /api/tokens. */
export const CreateTokenSchema = named(
  z
    .object({
      name: TokenName,
      expiresInDays: z.number().int().min(1).max(3650).optional(),
      expiresAt: z.iso.datetime({ offset: true }).optional().meta({ description: 'Instead of expiresInDays: in the future, within 10 years.' }),
      userId: Id.optional().meta({ description: 'Admins: another user\u2019s token.' }),
    })
    .strict()
    .refine((b) => !(b.expiresInDays && b.expiresAt), { message: 'give expiresInDays or expiresAt, not both', path: ['expiresAt'] })
    .refine((b) => !b.expiresAt || (Date.parse(b.expiresAt) > Date.now() && Date.parse(b.expiresAt) < Date.now() + 3650 * 86_400_000), {
      message: 'must be in the future and within 10 years',
      path: ['expiresAt'],
    }),
  'CreateTokenRequest',
  'A new personal token: its name and when it expires (never, by default).',
);

const UserName = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be lower-case letters, digits, ".", "-" or "_", starting with a letter or digit');
const Password = z.string().min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`).max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`);
const Quotas = {
  maxRunningCpus: z.number().min(0).max(MAX_QUOTA).nullable().optional(),
  maxRunningGpus: z.number().min(0).max(MAX_QUOTA).nullable().optional(),
  maxPendingJobs: z.number().int().min(0).max(MAX_QUOTA).nullable().optional(),
};
const OsUser = z
  .string()
  .regex(ACCOUNT_NAME, 'must be an OS account name: 1–32 letters, digits, "_", "." or "-", not starting with "." or "-"')
  .nullable()
  .optional()
  .meta({ description: 'The OS account its jobs run as when isolation is on (docs/design.md §16); null: the run account.' });

/** Body of POST /api/users. */
export const CreateUserSchema = named(z.object({ name: UserName, role: z.enum(ROLES), password: Password.optional(), osUser: OsUser, ...Quotas }).strict(), 'CreateUserRequest', 'A new user (admins).');

/** Body of PATCH /api/users/{id}: the fields to change. */
export const PatchUserSchema = named(
  z.object({ role: z.enum(ROLES).optional(), password: Password.nullable().optional(), disabled: z.boolean().optional(), osUser: OsUser, ...Quotas }).strict(),
  'PatchUserRequest',
  'Fields of a user to change (admins); a null password removes password login, a null quota falls back to the role\u2019s default.',
);

/** Query of GET /api/audit. */
export const AuditQuerySchema = z
  .object({
    action: z.enum(AUDIT_ACTIONS).optional(),
    userId: z.coerce.number().int().min(1).max(MAX_PG_INT).optional(),
    before: z.coerce.number().int().min(1).max(MAX_PG_INT).optional().meta({ description: 'The `next` of the previous page.' }),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();

// ─── answers ─────────────────────────────────────────────────────────────────────────────────

const int = () => z.number().int();
const quotaNote = 'The user\u2019s own quota; null: its role\u2019s default, if any (see quotas).';

export const TokenViewSchema = named(
  z.object({
    id: int(),
    userId: int(),
    userName: z.string().optional(),
    name: z.string(),
    prefix: z.string(),
    createdAt: isoTime(),
    lastUsedAt: isoTime().nullable(),
    expiresAt: isoTime().nullable(),
    revokedAt: isoTime().nullable(),
  }),
  'Token',
  'A personal token as listed (never the token itself).',
);

export const TokenListSchema = named(z.object({ tokens: z.array(TokenViewSchema) }), 'TokenList', 'Personal tokens.');
export const CreatedTokenSchema = named(TokenViewSchema.extend({ token: z.string().meta({ description: 'The token itself, shown this once.' }) }), 'CreatedToken', 'A new personal token and the token itself (only in this answer).');

const QuotaViewSchema = named(
  z.object({
    value: z.number().nullable().meta({ description: 'null: no limit.' }),
    source: z.enum(['user', 'role']).nullable().meta({ description: 'user: its own value; role: its role\u2019s default; null: none.' }),
  }),
  'Quota',
  'A quota that applies to a user: its value and where it comes from.',
);

export const UserViewSchema = named(
  z.object({
    id: int(),
    name: z.string(),
    // The column is text: the answer's type is a string; every write of it takes a role (ROLES).
    role: z.string().meta({ enum: [...ROLES] }),
    hasPassword: z.boolean(),
    sso: z.boolean(),
    maxRunningCpus: z.number().nullable().meta({ description: quotaNote }),
    maxRunningGpus: z.number().nullable().meta({ description: quotaNote }),
    maxPendingJobs: int().nullable().meta({ description: quotaNote }),
    quotas: z
      .object({ maxRunningCpus: QuotaViewSchema, maxRunningGpus: QuotaViewSchema, maxPendingJobs: QuotaViewSchema })
      .meta({ description: 'The quotas that apply: the user\u2019s own value, else its role\u2019s default (JOBDECK_QUOTA_<ROLE>_PENDING_JOBS, _RUNNING_CPUS, _RUNNING_GPUS), else none.' }),
    osUser: z.string().nullable().meta({ description: 'The OS account its jobs run as when isolation is on (docs/design.md §16); null: the run account.' }),
    disabled: z.boolean(),
    createdAt: isoTime(),
  }),
  'User',
  'A user as listed (never the password hash).',
);

export const UserListSchema = named(z.object({ users: z.array(UserViewSchema) }), 'UserList', 'Every user.');
export const UserMeSchema = named(
  z.object({
    id: int(),
    name: z.string(),
    role: z.enum(ROLES),
    tokenPrefix: z.string().nullable(),
    maxPriority: int().min(0).max(1000).nullable().meta({ description: 'Highest priority it may give a job in any queue (its role\u2019s cap, JOBDECK_QUOTA_MEMBER_MAX_PRIORITY; a queue may set a lower one: Queue.memberMaxPriority); null: none (admins are never capped).' }),
    may: z.record(z.string(), z.enum(['any', 'own'])).meta({ description: 'Every row of the authorization table (docs/design.md §15) the caller passes, keyed `METHOD pattern` (`"PUT /api/queues/[name]"`): `any`, or `own` — only its own jobs or tokens. A row that is absent is refused.' }),
  }),
  'UserMe',
  'The caller: its user, the prefix of the token it came with (null: a session), its priority cap and what it may call.',
);

export const AuditRowSchema = named(
  z.object({
    id: int(),
    at: isoTime(),
    action: z.string(),
    userId: int().nullable(),
    userName: z.string().nullable(),
    tokenPrefix: z.string().nullable(),
    ip: z.string().nullable(),
    target: z.string().nullable(),
    detail: z.unknown(),
  }),
  'AuditEvent',
  'One audit row.',
);

export const AuditPageSchema = named(z.object({ events: z.array(AuditRowSchema), next: int().nullable().meta({ description: 'The `before` of the next page; null: the last page.' }) }), 'AuditPage', 'A page of audit rows, newest first.');

// ─── compile-time checks: the answers and lib/api/types.ts describe the same shapes ──────────

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Check<T extends true> = T;
export type TeamSchemaChecks = [
  Check<Equals<z.infer<typeof TokenViewSchema>, TokenView>>,
  Check<Equals<z.infer<typeof CreatedTokenSchema>, CreatedTokenView>>,
  Check<Equals<z.infer<typeof QuotaViewSchema>, QuotaView>>,
  Check<Equals<z.infer<typeof UserViewSchema>, UserView>>,
  Check<Equals<z.infer<typeof UserMeSchema>, UserMe>>,
  Check<Equals<z.infer<typeof AuditRowSchema>, AuditRow>>,
];
