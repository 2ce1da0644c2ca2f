/**
 * The list's query path uses its indexes on its own (docs/design.md §12 "Search"): the SQL
 * Prisma emits for lib/store listJobRows and jobStatusCounts — captured from Prisma's query
 * events, not written by hand — is EXPLAINed with its own parameters on 20,000 seeded jobs (the
 * bench's seed: bench/list.ts seedSql, names, metadata, labels, owners), the planner free to choose, and
 * no plan may read "Job" with a Seq Scan: a name matching nothing and one matching 10 jobs,
 * status + a one-day submitted range, the metadata filter, the label filter, the owner filter, and
 * the counts of a name search, of a metadata filter and of a label filter. And a submitted range in the past, read from the range
 * (lib/store/list.ts pageOfPastRange) or by the plain query, pages exactly in id order. Both
 * databases.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSql } from '../../bench/list';
import { PrismaClient } from '../../lib/generated/prisma/client';
import { migrate, type RawSql } from '../../lib/db/migrate';
import { jobStatusCounts, listJobRows, type JobFilter, type ListJobsOptions } from '../../lib/store';
import { RANGE_FIRST_MAX } from '../../lib/store/list';
import { createEmptyPgDatabase, DB_KINDS, type DbKind } from '../helpers/db';
import { storeOf } from '../helpers/store';

const N = 20_000;
/** Seconds between two seeded jobs' submissions (bench/list.ts seedSql). */
const SPACING_S = 10;

/** A database whose Prisma client reports every statement it sends, and a raw channel for EXPLAIN. */
interface LoggedDatabase {
  prisma: PrismaClient;
  raw: RawSql;
  statements: Array<{ sql: string; params: unknown[] }>;
  close(): Promise<void>;
}

async function openLogged(kind: DbKind): Promise<LoggedDatabase> {
  const log = [{ emit: 'event' as const, level: 'query' as const }];
  const statements: LoggedDatabase['statements'] = [];
  if (kind === 'pglite') {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PrismaPGlite } = await import('pglite-prisma-adapter');
    const extensions = await (await import('../../lib/db/pglite-extensions.mjs')).pgliteExtensions();
    const db = await PGlite.create(undefined, { extensions });
    const raw: RawSql = { exec: async (sql) => void (await db.exec(sql)), query: async <T,>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params)).rows };
    await migrate(raw);
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(db), log });
    prisma.$on('query', (e) => statements.push({ sql: e.query, params: JSON.parse(e.params) as unknown[] }));
    return { prisma, raw, statements, close: async () => (await prisma.$disconnect(), await db.close()) };
  }
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const empty = await createEmptyPgDatabase('search-plan');
  const client = new pg.Client({ connectionString: empty.url });
  await client.connect();
  const raw: RawSql = { exec: async (sql) => void (await client.query(sql)), query: async <T,>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[] };
  await migrate(raw);
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: empty.url }), log });
  prisma.$on('query', (e) => statements.push({ sql: e.query, params: JSON.parse(e.params) as unknown[] }));
  return {
    prisma,
    raw,
    statements,
    close: async () => {
      await prisma.$disconnect();
      await client.end();
      await empty.drop();
    },
  };
}

/** Every node of an EXPLAIN (FORMAT JSON) plan, depth first. */
function nodes(plan: Record<string, unknown>): Array<Record<string, unknown>> {
  return [plan, ...((plan.Plans as Array<Record<string, unknown>> | undefined) ?? []).flatMap(nodes)];
}

describe.each(DB_KINDS)('the list query path uses its indexes unforced (%s)', (kind) => {
  let db: LoggedDatabase;
  beforeAll(async () => {
    db = await openLogged(kind);
    for (const sql of seedSql(N, 10)) await db.raw.exec(sql);
  });
  afterAll(async () => db?.close());

  /** The statements on "Job" one call sends, as Prisma sent them. */
  const captured = async (run: () => Promise<unknown>) => {
    db.statements.length = 0;
    await run();
    return db.statements.filter((s) => /FROM "public"\."Job"/.test(s.sql));
  };

  const end = new Date(Date.now() - (N / 2) * SPACING_S * 1000);
  const start = new Date(end.getTime() - 86_400_000);
  const pages: Array<[string, ListJobsOptions, number]> = [
    ['q matching nothing', { q: 'nomatch' }, 0],
    ['q matching 10', { q: 'rare-needle' }, 10],
    ['status + a one-day submitted range', { status: ['FAILED'], submittedAfter: start, submittedBefore: end }, 50],
    ['metadata matching 1', { metadata: [['run', `r${N / 2}`]] }, 1],
    ['metadata matching nothing', { metadata: [['team', 'nomatch']] }, 0],
    ['owner', { userId: 3 }, 50],
    ['labels matching 1', { labels: [['run-id', `r${N / 2}`]] }, 1],
    ['two labels matching nothing', { labels: [['team', 'vision'], ['run-id', 'r2']] }, 0],
  ];
  const counts: Array<[string, Omit<JobFilter, 'status'>]> = [
    ['counts of q matching 10', { q: 'rare-needle' }],
    ['counts of metadata matching 1', { metadata: [['run', `r${N / 2}`]] }],
    ['counts of labels matching 1', { labels: [['run-id', `r${N / 2}`]] }],
  ];

  it.each(pages)('a page of %s: no Seq Scan on "Job"', async (_name, opts, rows) => {
    let found = -1;
    const sent = await captured(async () => (found = (await listJobRows(storeOf(db.prisma), { limit: 50, ...opts })).jobs.length));
    expect(found).toBe(rows);
    // One statement; a range in the past two (its matching ids, then the page's rows).
    expect(sent.length).toBe(opts.submittedBefore ? 2 : 1);
    for (const s of sent) await expectNoSeqScan(s);
  });

  it('a submitted range in the past pages exactly as id order says, newest and oldest first, within and past RANGE_FIRST_MAX', async () => {
    const store = storeOf(db.prisma);
    const at = (id: number) => new Date(Date.now() - (N - id) * SPACING_S * 1000);
    // Seeded times are now() − (N − id) × 10 s at the seed: read them back rather than compute them.
    const times = new Map((await db.prisma.job.findMany({ select: { id: true, submittedAt: true } })).map((j) => [j.id, j.submittedAt.getTime()]));
    const status = (id: number) => (id % 10 < 7 ? 'SUCCEEDED' : id % 10 < 9 ? 'FAILED' : 'CANCELLED');
    const sizes: number[] = [];
    for (const [after, before, st] of [
      [at(9_000), at(10_000), ['FAILED']],
      [at(2_000), at(12_000), []],
      [at(100), at(19_000), ['CANCELLED', 'FAILED']],
    ] as const) {
      const want = [...times].filter(([id, t]) => t >= after.getTime() && t < before.getTime() && (st.length === 0 || (st as readonly string[]).includes(status(id)))).map(([id]) => id);
      sizes.push(want.length);
      for (const sort of ['newest', 'oldest'] as const) {
        const ordered = [...want].sort((a, b) => (sort === 'newest' ? b - a : a - b));
        const got: number[] = [];
        let beforeId: number | null = null;
        for (let page = 0; page < 4; page++) {
          const r = await listJobRows(store, { limit: 50, sort, status: [...st], submittedAfter: after, submittedBefore: before, beforeId });
          got.push(...r.jobs.map((j) => j.job.id));
          expect(r.more).toBe(got.length < ordered.length);
          if (!r.more) break;
          beforeId = got[got.length - 1];
        }
        expect(got, `${sort} ${want.length} matches`).toEqual(ordered.slice(0, got.length));
        expect(got.length).toBe(Math.min(ordered.length, 200));
      }
    }
    // Both ways were taken: from the range (at most RANGE_FIRST_MAX matches) and the plain query.
    expect(sizes.some((n) => n <= RANGE_FIRST_MAX) && sizes.some((n) => n > RANGE_FIRST_MAX)).toBe(true);
  });

  it.each(counts)('%s: no Seq Scan on "Job"', async (_name, f) => {
    const sent = await captured(() => jobStatusCounts(storeOf(db.prisma), f));
    expect(sent.length).toBe(1);
    await expectNoSeqScan(sent[0]);
  });

  async function expectNoSeqScan(s: { sql: string; params: unknown[] }) {
    const [row] = await db.raw.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params);
    const json = typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'];
    const all = nodes((json as Array<{ Plan: Record<string, unknown> }>)[0].Plan);
    const onJob = all.filter((n) => n['Relation Name'] === 'Job');
    expect(onJob.length, s.sql).toBeGreaterThan(0);
    expect(
      onJob.map((n) => n['Node Type']),
      `${s.sql}\n${JSON.stringify(json)}`,
    ).not.toContain('Seq Scan');
  }
});
