/**
 * Helper process for db-pglite-worker.test.ts (not a test): opens an in-memory PGlite with
 * openDatabase() (JOBDECK_PGLITE_WORKER and JOBDECK_WASM_OPTIMIZE from the environment; PostgreSQL
 * with CHILD_DATABASE_URL), runs
 * a few hundred queries, closes it and prints `closed <JSON of process.getActiveResourcesInfo()>`.
 * It never calls process.exit(): the test checks that the process ends by itself.
 */
import { openDatabase } from '../../lib/db/client';

async function main(): Promise<void> {
  // CHILD_DATABASE_URL: the same on PostgreSQL (Prisma's query compiler is the only WebAssembly then).
  const db = await openDatabase(process.env.CHILD_DATABASE_URL ? { databaseUrl: process.env.CHILD_DATABASE_URL } : { pgliteDir: 'memory://' });
  for (let i = 0; i < 100; i++) {
    const job = await db.prisma.job.create({ data: { name: `child-${i}`, specYaml: 'x', spec: { i }, specHash: 'h' } });
    await db.prisma.job.findUnique({ where: { id: job.id } });
  }
  await Promise.all(Array.from({ length: 200 }, () => db.prisma.job.findMany({ take: 20, orderBy: { id: 'desc' } })));
  process.stdout.write(`queried ${await db.prisma.job.count()}\n`);
  await db.close();
  process.stdout.write(`closed ${JSON.stringify(process.getActiveResourcesInfo())}\n`);
}

main().catch((err: Error) => {
  process.stdout.write(`failed: ${err.stack}\n`);
  process.exitCode = 1;
});
