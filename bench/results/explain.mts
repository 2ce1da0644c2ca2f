const { openDatabase } = await import(`${process.argv[3]}/lib/db/client.ts`);
const { createStore, transitionJob } = await import(`${process.argv[3]}/lib/store/index.ts`);
const kind = process.argv[2];
const db = await openDatabase(kind === 'pg' ? { databaseUrl: process.env.URL! } : { pgliteDir: 'memory://' });
const store = createStore(db.prisma);
await db.prisma.$executeRawUnsafe(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash") SELECT 'j' || g, 'run: x', '{}'::jsonb, 'h' FROM generate_series(1, 3000) g`);
let captured: { sql: string; params: unknown[] } | null = null;
const orig = store.prisma.$queryRawUnsafe.bind(store.prisma);
(store.prisma as any).$queryRawUnsafe = (sql: string, ...params: unknown[]) => { if (!captured && sql.startsWith('WITH')) captured = { sql, params }; return orig(sql, ...params); };
const t0 = performance.now();
await transitionJob(store, 1, 'PENDING", "CANCELLED');
console.log('first write ms', performance.now() - t0);
const c = captured!;
c.params[1] = 2; // the job id param? print params
console.log(JSON.stringify(c.params));
const plan = await orig(`EXPLAIN (ANALYZE, BUFFERS, SUMMARY) ${c.sql}`, ...c.params.map((p, i) => (i === 1 ? 2 : p)));
for (const r of plan as any[]) console.log(r['QUERY PLAN']);
await db.close();
