/**
 * The OpenAPI paths of users, personal tokens and the audit log (lib/api/team.ts, audit.ts);
 * merged into the document by lib/api/openapi.ts. Which role may call each is in its
 * description and in docs/design.md §15 (the table itself: lib/auth/rules.ts).
 */
type Json = Record<string, unknown>;

const problem = (description: string): Json => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
const obj = (properties: Record<string, Json>, required: string[] = []): Json => ({ type: 'object', properties, required, additionalProperties: false });
const body = (schema: Json): Json => ({ required: true, content: { 'application/json': { schema } } });
const ok = (description: string, schema: Json): Json => ({ description, content: { 'application/json': { schema } } });
const str = { type: 'string' };
const int = { type: 'integer' };
const time = { type: ['string', 'null'], format: 'date-time' };
const ROLE = { type: 'string', enum: ['admin', 'member', 'viewer'] };
const idParam = (what: string): Json => ({ name: 'id', in: 'path', required: true, description: `${what} id (a positive integer). Another → 400.`, schema: { type: 'integer', minimum: 1 } });

const QUOTA_VIEW = obj(
  { value: { type: ['number', 'null'], description: 'null: no limit.' }, source: { type: ['string', 'null'], enum: ['user', 'role', null], description: 'user: its own value; role: its role\u2019s default; null: none.' } },
  ['value', 'source'],
);
const TOKEN = obj({ id: int, userId: int, userName: str, name: str, prefix: str, createdAt: { type: 'string', format: 'date-time' }, lastUsedAt: time, expiresAt: time, revokedAt: time });
const USER = obj({
  id: int,
  name: str,
  role: ROLE,
  hasPassword: { type: 'boolean' },
  sso: { type: 'boolean' },
  maxRunningCpus: { type: ['number', 'null'], description: 'The user\u2019s own quota; null: its role\u2019s default, if any (see quotas).' },
  maxPendingJobs: { type: ['integer', 'null'], description: 'The user\u2019s own quota; null: its role\u2019s default, if any (see quotas).' },
  quotas: {
    ...obj({ maxRunningCpus: QUOTA_VIEW, maxPendingJobs: QUOTA_VIEW }, ['maxRunningCpus', 'maxPendingJobs']),
    description: 'The quotas that apply: the user\u2019s own value, else its role\u2019s default (JOBDECK_QUOTA_<ROLE>_PENDING_JOBS, _RUNNING_CPUS), else none.',
  },
  disabled: { type: 'boolean' },
  createdAt: { type: 'string', format: 'date-time' },
});
const QUOTAS = { maxRunningCpus: { type: ['number', 'null'], minimum: 0, maximum: 1_000_000 }, maxPendingJobs: { type: ['integer', 'null'], minimum: 0, maximum: 1_000_000 } };
const AUDIT = obj({ id: int, at: { type: 'string', format: 'date-time' }, action: str, userId: { type: ['integer', 'null'] }, userName: { type: ['string', 'null'] }, tokenPrefix: { type: ['string', 'null'] }, ip: { type: ['string', 'null'] }, target: { type: ['string', 'null'] }, detail: {} });
const E400 = problem('A bad field, named in detail and issues.');
const E403 = problem('The caller\u2019s role may not do this.');
const E404 = problem('No such user or token.');

/** Paths of /api/tokens, /api/users and /api/audit. */
export function teamPaths(): Record<string, Json> {
  const op = (operationId: string, summary: string, tag: string, rest: Json): Json => ({ operationId, summary, tags: [tag], ...rest });
  return {
    '/api/tokens': {
      get: op('listTokens', 'Personal tokens: the caller\u2019s, or everyone\u2019s with all=1 (admins)', 'users', {
        parameters: [{ name: 'all', in: 'query', required: false, schema: { type: 'string', enum: ['1', 'true'] } }],
        responses: { 200: ok('The tokens (never the token itself).', obj({ tokens: { type: 'array', items: TOKEN } })), 400: E400, 403: E403 },
      }),
      post: op('createToken', 'Create a personal token; the token is in this answer only', 'users', {
        requestBody: body(obj({ name: { type: 'string', minLength: 1, maxLength: 63 }, expiresInDays: { type: 'integer', minimum: 1, maximum: 3650 }, expiresAt: { type: 'string', format: 'date-time', description: 'Instead of expiresInDays: in the future, within 10 years.' }, userId: { type: 'integer', minimum: 1, description: 'Admins: another user\u2019s token.' } }, ['name'])),
        responses: { 201: ok('The token, shown once.', { allOf: [TOKEN, obj({ token: str })] }), 400: E400, 403: E403, 404: E404, 409: problem('The user holds the most live tokens allowed (50).') },
      }),
    },
    '/api/tokens/{id}': {
      delete: op('revokeToken', 'Revoke a token (the caller\u2019s own; admins anyone\u2019s): it fails from the next request, its WebSockets close', 'users', {
        parameters: [idParam('Token')],
        responses: { 204: { description: 'Revoked (or already revoked).' }, 400: E400, 404: E404 },
      }),
    },
    '/api/users': {
      get: op('listUsers', 'Every user (admins)', 'users', { responses: { 200: ok('The users.', obj({ users: { type: 'array', items: USER } })), 403: E403 } }),
      post: op('createUser', 'Create a user (admins)', 'users', {
        requestBody: body(obj({ name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }, role: ROLE, password: { type: 'string', minLength: 8, maxLength: 256 }, ...QUOTAS }, ['name', 'role'])),
        responses: { 201: ok('The user.', USER), 400: E400, 403: E403, 409: problem('The name is taken.') },
      }),
    },
    '/api/users/me': {
      get: op('whoAmI', 'Who the caller is', 'users', { responses: { 200: ok('The caller.', obj({ id: int, name: str, role: ROLE, tokenPrefix: { type: ['string', 'null'] } })) } }),
    },
    '/api/users/{id}': {
      patch: op('patchUser', 'Change a user\u2019s role, password, quotas, or disable it (admins)', 'users', {
        parameters: [idParam('User')],
        requestBody: body(obj({ role: ROLE, password: { type: ['string', 'null'], minLength: 8, maxLength: 256 }, disabled: { type: 'boolean' }, ...QUOTAS })),
        responses: { 200: ok('The user.', USER), 400: E400, 403: E403, 404: E404 },
      }),
    },
    '/api/audit': {
      get: op('listAudit', 'The audit log, newest first (admins; read-only)', 'users', {
        parameters: [
          { name: 'action', in: 'query', required: false, schema: str },
          { name: 'userId', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
          { name: 'since', in: 'query', required: false, schema: { type: 'string', format: 'date-time' } },
          { name: 'until', in: 'query', required: false, schema: { type: 'string', format: 'date-time' } },
          { name: 'before', in: 'query', required: false, description: 'The `next` of the previous page.', schema: { type: 'integer', minimum: 1 } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } },
        ],
        responses: { 200: ok('A page of rows.', obj({ events: { type: 'array', items: AUDIT }, next: { type: ['integer', 'null'] } })), 400: E400, 403: E403 },
      }),
    },
  };
}
