/**
 * The OpenAPI paths of users, personal tokens and the audit log (lib/api/team.ts, audit.ts);
 * merged into the document by lib/api/openapi.ts. Bodies, answers and the audit query are
 * generated from the zod schemas of lib/api/team-schemas.ts, the ones the handlers validate
 * with. Which role may call each is in its description and in docs/design.md §15 (the table
 * itself: lib/auth/rules.ts).
 */
import { json, jsonBody, problem, queryParams, type Json } from './openapi-json';
import { AuditQuerySchema } from './team-schemas';

const idParam = (what: string): Json => ({ name: 'id', in: 'path', required: true, description: `${what} id (a positive integer). Another → 400.`, schema: { type: 'integer', minimum: 1 } });

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
        responses: { 200: json('TokenList', 'The tokens (never the token itself).'), 400: E400, 403: E403 },
      }),
      post: op('createToken', 'Create a personal token; the token is in this answer only', 'users', {
        requestBody: jsonBody('CreateTokenRequest'),
        responses: { 201: json('CreatedToken', 'The token, shown once.'), 400: E400, 403: E403, 404: E404, 409: problem('The user is disabled, or holds the most live tokens allowed (50).') },
      }),
    },
    '/api/tokens/{id}': {
      delete: op('revokeToken', 'Revoke a token (the caller\u2019s own; admins anyone\u2019s): it fails from the next request, its WebSockets close', 'users', {
        parameters: [idParam('Token')],
        responses: { 204: { description: 'Revoked (or already revoked).' }, 400: E400, 404: E404 },
      }),
    },
    '/api/users': {
      get: op('listUsers', 'Every user (admins)', 'users', { responses: { 200: json('UserList', 'The users.'), 403: E403 } }),
      post: op('createUser', 'Create a user (admins)', 'users', {
        requestBody: jsonBody('CreateUserRequest'),
        responses: { 201: json('User', 'The user.'), 400: E400, 403: E403, 409: problem('The name is taken.') },
      }),
    },
    '/api/users/me': {
      get: op('whoAmI', 'Who the caller is, and what it may call', 'users', { responses: { 200: json('UserMe', 'The caller.') } }),
    },
    '/api/users/{id}': {
      patch: op('patchUser', 'Change a user\u2019s role, password, quotas, OS account, or disable it (admins)', 'users', {
        parameters: [idParam('User')],
        requestBody: jsonBody('PatchUserRequest'),
        responses: { 200: json('User', 'The user.'), 400: E400, 403: E403, 404: E404 },
      }),
    },
    '/api/audit': {
      get: op('listAudit', 'The audit log, newest first (admins; read-only)', 'users', {
        parameters: queryParams(AuditQuerySchema),
        responses: { 200: json('AuditPage', 'A page of rows.'), 400: E400, 403: E403 },
      }),
    },
  };
}
