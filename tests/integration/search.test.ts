/**
 * The job search (lib/store/list.ts jobFilterWhere, GET /api/jobs and /api/jobs/counts), on both
 * databases: a name substring in any case, `%`, `_` and `\` matching themselves; the
 * submitted-time range (bounds, a date meaning midnight UTC, refused when malformed or empty,
 * naming the field); and the indexes that answer them: the planner can answer a name
 * substring from the trigram GIN index (pg_trgm loaded on PGlite too) and a status + time range
 * from (status, submittedAt); the metadata filter (`metadata=key:value`, repeatable, all must hold,
 * bounded) and its GIN index. The speed at a million jobs is bench/scale.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { ApiError } from '../../lib/api/errors';
import { counts, list, submit } from '../../lib/api/jobs';
import { parseCountsQuery, parseListQuery } from '../../lib/api/request';
import { createStore, type Store } from '../../lib/store';

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

describe.each(DB_KINDS)('job search on %s', (kind) => {
  let t: TestDatabase;
  let store: Store;
  const NAMES = ['Train-Alpha', 'pre_train', 'wild_1', 'wildX1', '100%-done', '100x-done', 'back\\slash', 'backXslash', 'EVAL-nightly'];
  const id: Record<string, number> = {};
  // Ray-style client metadata on some of the jobs (a number, a nested object, a colon in a value).
  const META: Record<string, Record<string, unknown>> = {
    'Train-Alpha': { team: 'vision', stage: 'train', url: 'http://x:8/' },
    pre_train: { team: 'vision', stage: 'prep', n: 3 },
    'EVAL-nightly': { team: 'nlp', stage: 'train', nested: { deep: 'yes' } },
  };
  beforeAll(async () => {
    t = await createTestDatabase(kind, `search-${kind}`);
    store = createStore(t.db.prisma);
    for (const [i, name] of NAMES.entries()) {
      id[name] = (await submit(store, { source: { kind: 'cmd', cmd: 'true' }, name, metadata: META[name] ?? null })).result.id;
      // Submitted one day apart, from 2026-11-01 (UTC midnight) on.
      await t.db.prisma.job.update({ where: { id: id[name] }, data: { submittedAt: new Date(Date.UTC(2026, 10, 1 + i)) } });
    }
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const names = async (query: string) => (await list(store, q(query))).jobs.map((j) => j.name).sort();

  it('finds a name substring in any case', async () => {
    expect(await names('q=TRAIN')).toEqual(['Train-Alpha', 'pre_train']);
    expect(await names('q=Nightly')).toEqual(['EVAL-nightly']);
    expect(await names('q=rain-al')).toEqual(['Train-Alpha']);
    // Shorter than a trigram: still the same semantics (answered by a scan).
    expect(await names('q=pH')).toEqual(['Train-Alpha']);
    expect(await names('q=zzzz')).toEqual([]);
  });

  it('matches %, _ and \\ literally', async () => {
    expect(await names('q=wild_1')).toEqual(['wild_1']);
    expect(await names('q=_')).toEqual(['pre_train', 'wild_1']);
    expect(await names('q=100%25')).toEqual(['100%-done']);
    expect(await names('q=%25')).toEqual(['100%-done']);
    expect(await names('q=k%5Cs')).toEqual(['back\\slash']);
    expect(await names('q=%5C')).toEqual(['back\\slash']);
    expect(await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts?q=_')))).toEqual({ total: 2, byStatus: { PENDING: 2 } });
  });

  it('filters by submitted time: at or after, before, a date as midnight UTC, with the name and the status', async () => {
    expect(await names('submittedAfter=2026-11-08')).toEqual(['EVAL-nightly', 'backXslash']);
    expect(await names('submittedBefore=2026-11-02T00:00:00Z')).toEqual(['Train-Alpha']);
    expect(await names('submittedAfter=2026-11-02T00:00:00%2B00:00&submittedBefore=2026-11-04')).toEqual(['pre_train', 'wild_1']);
    // 2026-11-03T01:00+02:00 is 2026-11-02T23:00Z: wild_1 (2026-11-03) is after it.
    expect(await names('submittedAfter=2026-11-03T01:00:00%2B02:00&submittedBefore=2026-11-04')).toEqual(['wild_1']);
    expect(await names('q=wild&submittedAfter=2026-11-04')).toEqual(['wildX1']);
    expect(await names('status=PENDING&submittedBefore=2026-11-03')).toEqual(['Train-Alpha', 'pre_train']);
    expect(await names('status=FAILED&submittedBefore=2026-11-03')).toEqual([]);
    expect(await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts?submittedAfter=2026-11-05')))).toEqual({ total: 5, byStatus: { PENDING: 5 } });
  });

  it('refuses a malformed time, an impossible date and an empty range, naming the field', () => {
    const bad = badRequest(() => q('submittedAfter=yesterday'));
    expect(bad.status).toBe(400);
    expect(bad.detail).toContain('submittedAfter must be an ISO-8601 time with a zone');
    expect(badRequest(() => q('submittedBefore=2026-11-01T08:00:00')).detail).toContain('submittedBefore must be an ISO-8601 time with a zone');
    expect(badRequest(() => q('submittedBefore=2026-13-45')).detail).toContain('submittedBefore is not a calendar date');
    expect(badRequest(() => q(`submittedAfter=${'2'.repeat(41)}`)).detail).toContain('at most 40 characters');
    const empty = badRequest(() => q('submittedAfter=2026-11-05&submittedBefore=2026-11-05'));
    expect(empty.detail).toContain('submittedBefore (2026-11-05T00:00:00.000Z) must be later than submittedAfter (2026-11-05T00:00:00.000Z)');
    expect(badRequest(() => parseCountsQuery(new URL('http://x/api/jobs/counts?submittedAfter=x'))).detail).toContain('submittedAfter');
    // Both malformed (equal strings): each refused, not compared (the API fuzz found a 500 here).
    const both = badRequest(() => q('submittedAfter=true&submittedBefore=true'));
    expect([both.status, both.detail]).toEqual([400, expect.stringMatching(/submittedAfter must be .*submittedBefore must be /s)]);
  });

  it('filters by metadata pairs: each must hold, as a string value, with the other filters and in the counts', async () => {
    expect(await names('metadata=team:vision')).toEqual(['Train-Alpha', 'pre_train']);
    expect(await names('metadata=team:vision&metadata=stage:train')).toEqual(['Train-Alpha']);
    expect(await names('metadata=stage:train')).toEqual(['EVAL-nightly', 'Train-Alpha']);
    // The first colon splits: the value may hold more.
    expect(await names(`metadata=${encodeURIComponent('url:http://x:8/')}`)).toEqual(['Train-Alpha']);
    // A key twice with two values: no job has both.
    expect(await names('metadata=team:vision&metadata=team:nlp')).toEqual([]);
    // Values are strings: 3 (a number) is not "3"; a nested object is not its key.
    expect(await names('metadata=n:3')).toEqual([]);
    expect(await names('metadata=deep:yes')).toEqual([]);
    expect(await names('metadata=team:')).toEqual([]);
    expect(await names('metadata=team:vision&q=pre')).toEqual(['pre_train']);
    expect(await names('metadata=team:vision&submittedAfter=2026-11-02')).toEqual(['pre_train']);
    expect(await counts(store, parseCountsQuery(new URL('http://x/api/jobs/counts?metadata=stage:train')))).toEqual({ total: 2, byStatus: { PENDING: 2 } });
  });

  it('refuses a metadata pair without a key or colon, too long, or too many, naming the field', () => {
    for (const [query, text] of [
      ['metadata=team', 'metadata must be key:value'],
      ['metadata=:vision', 'metadata must be key:value'],
      [`metadata=${'k'.repeat(65)}:v`, 'metadata key must be at most 64 characters, got 65'],
      [`metadata=k:${'v'.repeat(201)}`, 'metadata value must be at most 200 characters, got 201'],
      [Array.from({ length: 9 }, (_, i) => `metadata=k${i}:v`).join('&'), 'metadata: at most 8 key:value pairs'],
    ] as const) {
      const bad = badRequest(() => q(query));
      expect([bad.status, bad.detail]).toEqual([400, expect.stringContaining(text)]);
    }
    expect(badRequest(() => parseCountsQuery(new URL('http://x/api/jobs/counts?metadata=x'))).detail).toContain('metadata must be key:value');
    expect(q(`metadata=${'k'.repeat(64)}:${'v'.repeat(200)}`).metadata).toEqual([['k'.repeat(64), 'v'.repeat(200)]]);
  });

  it('can answer a name substring from the trigram index and a status + time range from (status, submittedAt)', async () => {
    // With the tiny table the planner would scan it; forbidding the scan shows which index can answer.
    const plan = (sql: string) =>
      t.db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
        const rows = await tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN ${sql}`);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    expect(await plan(`SELECT id FROM "Job" WHERE "name" ILIKE '%rain-al%'`)).toContain('Job_name_trgm_idx');
    expect(await plan(`SELECT id FROM "Job" WHERE "status" = 'FAILED' AND "submittedAt" >= '2026-11-02' AND "submittedAt" < '2026-11-04'`)).toContain('Job_status_submittedAt_idx');
    // The metadata filter as the store writes it (Prisma's array_contains: `@>` and an array check).
    expect(await plan(`SELECT id FROM "Job" WHERE "metadataSet" @> '[{"team":"vision"}]'::jsonb AND jsonb_typeof("metadataSet") = 'array'`)).toContain('Job_metadataSet_idx');
  });
});
