/**
 * The list API's search, order and counts (lib/api/request.ts parseListQuery, lib/store/list.ts),
 * against both databases: `#4` and `4` find job 4; sort=oldest and sort=name page through every
 * job exactly once with their cursors; a cursor of another sort is refused; GET /api/jobs/counts
 * counts per status among what a search finds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { ApiError } from '../../lib/api/errors';
import { counts, list, submit } from '../../lib/api/jobs';
import { setQueue } from '../../lib/api/queues';
import { parseCountsQuery, parseListQuery } from '../../lib/api/request';
import { createStore, transitionMany, type Store } from '../../lib/store';

const q = (query: string) => parseListQuery(new URL(`http://x/api/jobs?${query}`));

function badRequest(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe.each(DB_KINDS)('job list search, sort and counts on %s', (kind) => {
  let t: TestDatabase;
  let store: Store;
  const ids: number[] = [];
  // Names out of id order, two of them equal (the id breaks the tie).
  const NAMES = ['delta', 'alpha', 'charlie', 'bravo', 'alpha', 'echo-4'];
  beforeAll(async () => {
    t = await createTestDatabase(kind, `api-list-${kind}`);
    store = createStore(t.db.prisma);
    for (const name of NAMES) ids.push((await submit(store, { source: { kind: 'cmd', cmd: 'true' }, name })).result.id);
    // Two failed (no resource), one cancelled; the rest stay PENDING.
    await transitionMany(store, [ids[0], ids[1]].map((id) => ({ entity: 'job' as const, id, from: 'PENDING' as const, to: 'FAILED_NO_RESOURCE' as const, reason: 'test' })));
    await transitionMany(store, [{ entity: 'job', id: ids[2], from: 'PENDING', to: 'CANCELLED', reason: 'test' }]);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('finds a job by "#ID" as by "ID" (and still by name)', async () => {
    const id = ids[3];
    for (const text of [`${id}`, `%23${id}`, `%20%23${id}%20`]) {
      const page = await list(store, q(`q=${text}`));
      expect(page.jobs.map((j) => j.id)).toContain(id);
    }
    expect((await list(store, q(`q=%23${id}`))).jobs.every((j) => j.id === id || j.name.includes(`#${id}`))).toBe(true);
    expect((await list(store, q('q=echo-4'))).jobs.map((j) => j.name)).toEqual(['echo-4']);
  });

  it('pages oldest first and by name through every job once, in order', async () => {
    const walk = async (sort: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let guard = 0; guard < 10; guard++) {
        const page = await list(store, q(`sort=${sort}&limit=2${cursor ? `&cursor=${cursor}` : ''}`));
        seen.push(...page.jobs.map((j) => `${j.name}#${j.id}`));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      return seen;
    };
    expect(await walk('oldest')).toEqual(NAMES.map((n, i) => `${n}#${ids[i]}`));
    const byName = NAMES.map((n, i) => ({ n, id: ids[i] })).sort((a, b) => (a.n < b.n ? -1 : a.n > b.n ? 1 : a.id - b.id));
    expect(await walk('name')).toEqual(byName.map((x) => `${x.n}#${x.id}`));
    expect(await walk('newest')).toEqual(NAMES.map((n, i) => `${n}#${ids[i]}`).reverse());
  });

  it('refuses an unknown sort and a cursor made for another sort, naming the field', async () => {
    const sort = badRequest(() => q('sort=size'));
    expect(sort.status).toBe(400);
    expect(sort.detail).toContain('sort must be one of newest, oldest, name');
    const byName = await list(store, q('sort=name&limit=1'));
    expect(badRequest(() => q(`sort=newest&cursor=${byName.nextCursor}`)).detail).toMatch(/cursor .* is malformed for sort=newest/);
    const byId = await list(store, q('limit=1'));
    expect(badRequest(() => q(`sort=name&cursor=${byId.nextCursor}`)).detail).toMatch(/malformed for sort=name/);
  });

  it('counts jobs per status, among what the search finds', async () => {
    const all = await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts')));
    expect(all).toEqual({ total: 6, byStatus: { FAILED_NO_RESOURCE: 2, CANCELLED: 1, PENDING: 3 } });
    expect(await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts?q=alpha')))).toEqual({ total: 2, byStatus: { FAILED_NO_RESOURCE: 1, PENDING: 1 } });
    expect(await counts(store, parseCountsQuery(new URL(`http://x/api/jobs/counts?q=%23${ids[2]}`)))).toEqual({ total: 1, byStatus: { CANCELLED: 1 } });
    expect(badRequest(() => parseCountsQuery(new URL(`http://x/api/jobs/counts?q=${'x'.repeat(201)}`))).status).toBe(400);
  });

  it('filters the list and the counts by queue (queue=, validated, naming the field)', async () => {
    await setQueue(store, 'gpu', {});
    const inGpu = [];
    for (const name of ['g1', 'alpha-g2']) inGpu.push((await submit(store, { source: { kind: 'yaml', text: `queue: gpu\nrun: 'true'\n` }, name })).result.id);
    expect((await list(store, q('queue=gpu'))).jobs.map((j) => j.id)).toEqual([...inGpu].reverse());
    expect((await list(store, q('queue=gpu&q=alpha'))).jobs.map((j) => j.id)).toEqual([inGpu[1]]);
    expect((await list(store, q('queue=default'))).jobs.map((j) => j.id)).toEqual([...ids].reverse());
    expect((await list(store, q('queue=nope'))).jobs).toEqual([]);
    expect(await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts?queue=gpu')))).toEqual({ total: 2, byStatus: { PENDING: 2 } });
    expect(await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts?queue=gpu&q=alpha')))).toEqual({ total: 1, byStatus: { PENDING: 1 } });
    const bad = badRequest(() => q('queue=GPU!'));
    expect([bad.status, bad.detail]).toEqual([400, 'query: queue: queue "GPU!": expected a queue name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit)']);
    expect(badRequest(() => parseCountsQuery(new URL('http://x/api/jobs/counts?queue=a%20b'))).status).toBe(400);
  });
});
