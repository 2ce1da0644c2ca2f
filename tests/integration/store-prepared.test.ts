import { describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { inTransaction, submitJob, transitionJob } from '../../lib/store';
import { PREPARED_MAX, queryPrepared } from '../../lib/store/prepared';

/**
 * The store's large statements prepared once in PGlite's one session (lib/store/prepared.ts,
 * docs/design.md §12 "Statements on PGlite"): values sent as literals arrive exactly, whatever
 * they hold; a statement prepared inside a transaction that rolls back is still there; the
 * session never holds more than PREPARED_MAX; a value that is no plain scalar runs unprepared.
 * On PostgreSQL (a pool) nothing is prepared.
 */

function newJob(name: string) {
  return { name, specYaml: `name: ${name}\nrun: true\n`, spec: { name }, specHash: 'h', cpus: 1, tasks: [{ name: 't0', spec: { run: 'true' } }] };
}

/** Reasons a literal must carry exactly: quotes, backslashes, a parameter marker, SQL, non-ASCII, a newline. */
const REASONS = [`it's a "test"`, `C:\\path\\ \\' \\\\`, `$1 $$ $tag$ ?`, `'); DELETE FROM "Job"; --`, 'ünïcødé ✓ 日本語\nsecond line\ttab', ''];

describe.each(DB_KINDS)('prepared statements on %s', (kind) => {
  const t = useDatabase(kind, `store-prepared-${kind}`);

  it(kind === 'pglite' ? 'prepares the submit and the guarded write once per shape and sends every value exactly' : 'prepares nothing (a pool of connections)', async () => {
    const { store, prisma } = t;
    if (kind === 'postgresql') {
      expect(store.prepared).toBeNull();
      return;
    }
    expect(store.prepared).not.toBeNull();
    const before = store.prepared!.size;
    for (const reason of REASONS) {
      const job = await submitJob(store, newJob('quoted'));
      const w = await transitionJob(store, job.id, 'PENDING', 'CANCELLED', { reason });
      expect(w.outcome).toBe('applied');
      const row = await prisma.job.findUniqueOrThrow({ where: { id: job.id } });
      expect(row.statusReason).toBe(reason);
      const event = await prisma.jobEvent.findFirstOrThrow({ where: { jobId: job.id, to: 'CANCELLED' } });
      expect(event.reason).toBe(reason);
    }
    // One statement per shape — the submit's and the guarded write's; the session holds what the store counts.
    expect(store.prepared!.size).toBe(before + 2);
    const [{ n }] = await prisma.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM pg_prepared_statements`);
    expect(n).toBe(store.prepared!.size);
    expect(await prisma.job.count()).toBe(REASONS.length);
  });

  it.runIf(kind === 'pglite')('keeps a statement prepared inside a transaction that rolled back', async () => {
    const { store, prisma } = t;
    const job = await submitJob(store, newJob(`rolled-back ${"it's"}`));
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.id } })).name).toBe("rolled-back it's");
    const reason = 'rolled back first';
    const size = store.prepared!.size;
    class Rollback extends Error {}
    await expect(
      prisma.$transaction(async (tx) => {
        const w = await transitionJob(inTransaction(store, tx), job.id, 'PENDING', 'CANCELLED', { reason, data: { restartCount: 7 } });
        expect(w.outcome).toBe('applied');
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    expect((await prisma.job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe('PENDING');
    expect(store.prepared!.size).toBe(size + 1);
    // The same write again in a transaction that commits: EXECUTE of the statement the rolled-back one prepared.
    const w = await prisma.$transaction((tx) => transitionJob(inTransaction(store, tx), job.id, 'PENDING', 'CANCELLED', { reason, data: { restartCount: 7 } }));
    expect(w.outcome).toBe('applied');
    expect(store.prepared!.size).toBe(size + 1);
    const row = await prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    expect([row.status, row.statusReason, row.restartCount]).toEqual(['CANCELLED', reason, 7]);
  });

  it.runIf(kind === 'pglite')('holds at most PREPARED_MAX statements, deallocating the least recently used', async () => {
    const { store, prisma } = t;
    const prepared = store.prepared!;
    const sql = (k: number) => `SELECT $1::int + ${k} AS v`;
    const count = async () => (await prisma.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM pg_prepared_statements`))[0].n;
    for (let k = 0; k < PREPARED_MAX + 5; k++) {
      const [{ v }] = await queryPrepared<{ v: number }>(prisma, prepared, sql(k), [1000]);
      expect(v).toBe(1000 + k);
    }
    expect(prepared.size).toBe(PREPARED_MAX);
    expect(await count()).toBe(PREPARED_MAX);
    // The first one was evicted: prepared again (evicting the next oldest), same answer.
    const [{ v }] = await queryPrepared<{ v: number }>(prisma, prepared, sql(0), [1]);
    expect(v).toBe(1);
    expect(await count()).toBe(PREPARED_MAX);
  });

  it.runIf(kind === 'pglite')('prepares a statement without parameters', async () => {
    const { store, prisma } = t;
    for (let i = 0; i < 3; i++) {
      const [{ v }] = await queryPrepared<{ v: number }>(prisma, store.prepared, `SELECT 40 + 2 AS v`, []);
      expect(v).toBe(42);
    }
    const [{ n }] = await prisma.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%AS SELECT 40 + 2 AS v'`);
    expect(n).toBe(1);
  });

  it.runIf(kind === 'pglite')('runs a statement with a value that is no plain scalar unprepared', async () => {
    const { store, prisma } = t;
    const size = store.prepared!.size;
    const [{ n }] = await queryPrepared<{ n: number }>(prisma, store.prepared, `SELECT cardinality($1::int[])::int AS n`, [[1, 2, 3]]);
    expect(n).toBe(3);
    expect(store.prepared!.size).toBe(size);
  });
});
