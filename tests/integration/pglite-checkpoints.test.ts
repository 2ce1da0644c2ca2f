/**
 * PGlite's checkpoints (lib/db/pglite-checkpoints.ts, docs/design.md §9 "PGlite's folder"): with
 * no checkpointer, nothing recycles a write-ahead log segment and `pg_wal` grows by every write;
 * the checks run CHECKPOINT past their threshold and the log stops growing. A real PGlite; the
 * log's size is PostgreSQL's own listing of it (`pg_ls_waldir()`).
 */
import { describe, expect, it } from 'vitest';
import { startPgliteCheckpoints } from '../../lib/db/pglite-checkpoints';
import type { RawSql } from '../../lib/db/migrate';
import { useDatabase } from '../helpers/use-database';

const MiB = 2 ** 20;

describe('PGlite checkpoints', () => {
  const t = useDatabase('pglite', 'pglite-checkpoints');

  it('without checks the log grows by what is written; with them a checkpoint runs past the threshold and the log stops growing', async () => {
    expect(t.db.checkpoints).not.toBeNull();
    const prisma = t.prisma;
    const raw: RawSql = {
      exec: async (sql) => void (await prisma.$executeRawUnsafe(sql)),
      query: async <T,>(sql: string, params: unknown[] = []) => prisma.$queryRawUnsafe<T[]>(sql, ...params),
    };
    const walSize = async () => Number((await prisma.$queryRawUnsafe<Array<{ b: string }>>(`SELECT sum(size)::text AS b FROM pg_ls_waldir()`))[0].b);
    const sinceCheckpoint = async () => Number((await prisma.$queryRawUnsafe<Array<{ b: string }>>(`SELECT (pg_current_wal_insert_lsn() - (pg_control_checkpoint()).redo_lsn)::text AS b`))[0].b);
    await prisma.$executeRawUnsafe(`CREATE TABLE "walFill" (id int, x text)`);
    // ~2.5 MiB of log a chunk: 2,500 rows of ~1 KiB, each chunk replacing the last.
    const chunk = async (i: number) => {
      await prisma.$executeRawUnsafe(`DELETE FROM "walFill"`);
      await prisma.$executeRawUnsafe(`INSERT INTO "walFill" SELECT g, repeat(md5((g + ${i})::text), 32) FROM generate_series(1, 2500) g`);
    };
    const lsn = async () => Number((await prisma.$queryRawUnsafe<Array<{ b: string }>>(`SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text AS b`))[0].b);
    const checks = startPgliteCheckpoints(raw, { walBytes: 4 * MiB, everyMs: 0 });
    try {
      // Without checks: every byte written stays (segments are 16 MiB: the size moves in steps).
      let [w0, l0] = [await walSize(), await lsn()];
      for (let i = 0; i < 16; i++) await chunk(i);
      const writtenA = (await lsn()) - l0;
      expect(writtenA).toBeGreaterThan(32 * MiB);
      expect((await walSize()) - w0).toBeGreaterThan(writtenA - 16 * MiB);
      expect(await sinceCheckpoint()).toBeGreaterThan(32 * MiB);

      expect(await checks.check()).toBe(true);
      expect(await sinceCheckpoint()).toBeLessThan(MiB);
      // With a check after each chunk: as much written again, a checkpoint every ~4 MiB, and
      // the new log goes into the segments the checkpoints recycled.
      [w0, l0] = [await walSize(), await lsn()];
      let ran = 0;
      for (let i = 16; i < 32; i++) {
        await chunk(i);
        if (await checks.check()) ran++;
      }
      expect((await lsn()) - l0).toBeGreaterThan(32 * MiB);
      expect(ran).toBeGreaterThanOrEqual(6);
      expect(checks.count).toBe(ran + 1);
      expect((await walSize()) - w0).toBeLessThanOrEqual(16 * MiB);
      // Under the threshold, nothing runs.
      expect(await checks.check()).toBe(false);
    } finally {
      await checks.stop();
      await prisma.$executeRawUnsafe(`DROP TABLE "walFill"`);
    }
  });
});
