// Same-hour A/B of the guarded write's cost with and without the outbox CTE (no subscription):
// sequential PENDING → CANCELLED job writes (one batch statement each) on the code before
// webhooks (/tmp/jd-base) and with them (/work/wt/hooks), interleaved rounds, both DB kinds.
import pg from 'pg';
import { randomBytes } from 'node:crypto';

const TREES = { base: '/tmp/jd-base', mine: '/work/wt/hooks' } as const;
const PG = process.env.JOBDECK_TEST_PG_URL || 'postgresql://jobdeck:jobdeck@127.0.0.1:5432/jobdeck';
const ROUNDS = 8, PER = 400;

async function open(tree: string, kind: string) {
  const { openDatabase } = await import(`${tree}/lib/db/client.ts`);
  const { createStore, transitionJob } = await import(`${tree}/lib/store/index.ts`);
  let url: string | undefined, drop = async () => {};
  if (kind === 'postgresql') {
    const name = `jd_abx_${randomBytes(4).toString('hex')}`;
    const a = new pg.Client({ connectionString: PG }); await a.connect(); await a.query(`CREATE DATABASE "${name}"`); await a.end();
    const u = new URL(PG); u.pathname = `/${name}`; url = u.toString();
    drop = async () => { const b = new pg.Client({ connectionString: PG }); await b.connect(); await b.query(`DROP DATABASE "${name}" WITH (FORCE)`); await b.end(); };
  }
  const db = await openDatabase(url ? { databaseUrl: url } : { pgliteDir: 'memory://' });
  const store = createStore(db.prisma);
  await db.prisma.$executeRawUnsafe(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash") SELECT 'j' || g, 'run: x', '{}'::jsonb, 'h' FROM generate_series(1, ${ROUNDS * PER}) g`);
  let next = (await db.prisma.$queryRawUnsafe<Array<{ m: number }>>(`SELECT min(id)::int AS m FROM "Job"`))[0].m;
  return {
    async round() {
      const first = next; next += PER;
      const timed = async (from: string, to: string) => {
        const c0 = process.cpuUsage(); const t0 = performance.now();
        for (let i = 0; i < PER; i++) { const r = await transitionJob(store, first + i, from, to); if (r.outcome !== 'applied') throw new Error('lost'); }
        const ms = performance.now() - t0; const c = process.cpuUsage(c0);
        return { msPer: ms / PER, cpuPer: (c.user + c.system) / 1000 / PER };
      };
      const plain = await timed('PENDING', 'CANCELLING'); // no notification: no outbox in the statement
      const notice = await timed('CANCELLING', 'CANCELLED'); // job.cancelled: the outbox join runs (no subscription)
      return { plain, notice };
    },
    async close() { await db.close(); await drop(); },
  };
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const kind of ['pglite', 'postgresql']) {
  const base = await open(TREES.base, kind); const mine = await open(TREES.mine, kind);
  await base.round(); await mine.round(); // warm-up
  const r: Record<string, Record<string, { ms: number[]; cpu: number[] }>> = {};
  for (let i = 1; i < ROUNDS; i++) for (const [k, s] of (i % 2 ? [['base', base], ['mine', mine]] : [['mine', mine], ['base', base]]) as const) {
    const x = await s.round();
    for (const w of ['plain', 'notice'] as const) { const slot = ((r[k] ??= {})[w] ??= { ms: [], cpu: [] }); slot.ms.push(x[w].msPer); slot.cpu.push(x[w].cpuPer); }
  }
  for (const k of ['base', 'mine']) for (const w of ['plain', 'notice']) console.log(kind, k, w, 'wall ms/write median', med(r[k][w].ms).toFixed(3), 'cpu ms/write median', med(r[k][w].cpu).toFixed(3), 'rounds', r[k][w].ms.map((v) => v.toFixed(2)).join(' '));
  await base.close(); await mine.close();
}
