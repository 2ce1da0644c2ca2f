/**
 * Personal tokens are stored hashed (docs/design.md §15), on each database: after a create through
 * lib/api (the route's own work), the ApiToken row — every column, read back raw — and the audit
 * row hold the token's sha256 and its 12-character prefix, never the token nor any of it past the
 * prefix; the token list answers the prefix only.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTokenFor, tokenList } from '../../lib/api/team';
import { AuthDirectory } from '../../lib/auth/directory';
import type { Actor } from '../../lib/jobs/roles';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';

const ADMIN: Actor = { userId: 1, name: 'admin', role: 'admin', tokenId: null, tokenPrefix: null, ip: '127.0.0.1' };

describe.each(DB_KINDS)('tokens stored as their hash (%s)', (kind) => {
  const t = useDatabase(kind, `tokens-stored-${kind}`);

  it('keeps the sha256 and the prefix, never the token', async () => {
    const req = new Request('http://x/api/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'laptop' }) });
    const created = await createTokenFor(t.store, new AuthDirectory(), ADMIN, req);
    const token = created.token;
    expect(token).toMatch(/^jdp_[A-Za-z0-9_-]{43}$/);
    const secretPart = token.slice(12);

    const rows = await t.prisma.$queryRawUnsafe<Array<Record<string, unknown>>>('SELECT * FROM "ApiToken"');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ prefix: token.slice(0, 12), hash: createHash('sha256').update(token).digest('hex') });
    const stored = JSON.stringify(rows[0]);
    const audit = JSON.stringify(await t.prisma.$queryRawUnsafe('SELECT * FROM "AuditEvent"'));
    expect(audit).toContain(token.slice(0, 12));
    for (const [where, text] of [
      ['ApiToken row', stored],
      ['audit rows', audit],
      ['GET /api/tokens', JSON.stringify(await tokenList(t.store, ADMIN, new URL('http://x/api/tokens?all=1')))],
    ]) {
      // Not the token, nor any 8 characters of it past the prefix.
      for (let i = 0; i + 8 <= secretPart.length; i++) expect(text, `${where} holds part of the token`).not.toContain(secretPart.slice(i, i + 8));
    }
  });
});
