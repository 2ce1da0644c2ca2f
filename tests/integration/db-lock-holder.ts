/**
 * Helper process for db-lock.test.ts (not a test): opens the PGlite folder given as argv[2] with
 * openDatabase(), writes one job row, prints "open <pid>" and then keeps the database open until
 * it is killed (SIGTERM closes it; SIGKILL is the crash case). Prints "refused: <message>" and
 * exits 3 when the open is refused.
 */
import { openDatabase } from '../../lib/db/client';

const dir = process.argv[2];
openDatabase({ pgliteDir: dir }).then(
  async (db) => {
    await db.prisma.job.create({ data: { name: `held-by-${process.pid}`, specYaml: 'x', spec: {}, specHash: 'h' } });
    process.stdout.write(`open ${process.pid}\n`);
    const keep = setInterval(() => undefined, 1000);
    process.on('SIGTERM', () => {
      clearInterval(keep);
      void db.close().then(() => process.exit(0));
    });
  },
  (err: Error) => {
    process.stdout.write(`refused: ${err.message}\n`);
    process.exit(3);
  },
);
