/**
 * The auth directory's reload against this server's own writes (docs/design.md §15), on each
 * database. A reload reads users and tokens, and a write made by this server while that read is
 * under way may be newer than what the read returns. Each test starts a reload, makes the write
 * before the read answers (the interleaving is forced: the write runs synchronously after the
 * read is sent), and checks that the write still holds after the reload swaps its read in.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuthDirectory } from '../../lib/auth/directory';
import type { ApiToken } from '../../lib/generated/prisma/client';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

describe.each(DB_KINDS)('auth directory reload against local writes (%s)', (kind) => {
  const t = useDatabase(kind, `auth-directory-${kind}`);

  it('a token created while a reload reads authenticates at once, and no revoke is announced for it', async () => {
    const mia = await t.prisma.user.create({ data: { name: 'mia', role: 'member' } });
    const dir = new AuthDirectory();
    await dir.reload(t.store);
    const announced: number[] = [];
    dir.onTokenRevoke.add((id) => announced.push(id));
    // The row as the create route writes it; its INSERT commits after the reload's read began.
    const row: ApiToken = { id: 4242, userId: mia.id, name: 'laptop', prefix: 'jdp_abcdefgh', hash: hashOf('jdp_created-during-read'), createdAt: new Date(), lastUsedAt: null, expiresAt: null, revokedAt: null, userEpoch: 0, attemptId: null };
    const reading = dir.reload(t.store);
    dir.putToken(row);
    await reading;
    expect(dir.token(row.hash)?.token.id).toBe(4242);
    expect(announced).toEqual([]);
    await t.prisma.apiToken.create({ data: row });
    await dir.reload(t.store);
    expect(dir.token(row.hash)?.user?.name).toBe('mia');
  });

  it('a token revoked while a reload reads stays revoked (never live again from the older read)', async () => {
    const max = await t.prisma.user.create({ data: { name: 'max', role: 'member' } });
    const row = await t.prisma.apiToken.create({ data: { userId: max.id, name: 'ci', prefix: 'jdp_ijklmnop', hash: hashOf('jdp_revoked-during-read') } });
    const dir = new AuthDirectory();
    await dir.reload(t.store);
    expect(dir.token(row.hash)).toBeDefined();
    const reading = dir.reload(t.store);
    dir.dropToken(row.id);
    await reading;
    expect(dir.token(row.hash)).toBeUndefined();
    await t.prisma.apiToken.update({ where: { id: row.id }, data: { revokedAt: new Date() } });
    await dir.reload(t.store);
    expect(dir.token(row.hash)).toBeUndefined();
  });

  it('a user disabled while a reload reads stays disabled', async () => {
    const ann = await t.prisma.user.create({ data: { name: 'ann', role: 'member' } });
    const dir = new AuthDirectory();
    await dir.reload(t.store);
    const reading = dir.reload(t.store);
    dir.putUser({ ...ann, disabledAt: new Date() });
    await reading;
    expect(dir.user(ann.id)?.disabled).toBe(true);
  });

  it('reloads do not overlap: a second call joins the one under way', async () => {
    const dir = new AuthDirectory();
    const a = dir.reload(t.store);
    expect(dir.reload(t.store)).toBe(a);
    await a;
    expect(dir.reload(t.store)).not.toBe(a);
  });
});
