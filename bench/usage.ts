/**
 * Measure "usage" — the usage sampler's round write (lib/store/usage.ts recordUsage, docs/design.md
 * §7 "Resource usage") as its series grow. In-process, no server, on PGlite and on a fresh
 * PostgreSQL database: 1,000 attempts (200 with --quick) seeded as bench/list.ts seedSql stores
 * jobs, then rounds of one point per attempt, as the sampler writes them every 5 s:
 *
 * - short series: 10 warm-up rounds, then 10 timed (the series 11–20 points long);
 * - long series: every series set to 700 points (not timed), then 10 timed rounds;
 * - one halving round: every series replaced by what a full (720-point) one becomes, whole
 *   (361 points), as the sampler writes it once a series is full.
 *
 * Target: a round on long series costs at most 1.5× one on short series (same run) — the write
 * must not grow with the series, which a job an hour old has at full length. For information, the
 * share of a core the rounds take at the default 5 s interval.
 */
import { openDatabase, type Database } from '../lib/db/client';
import { appendSample, USAGE_MAX_POINTS, USAGE_PART_POINTS, type UsagePoint } from '../lib/jobs/usage';
import { createStore } from '../lib/store/handle';
import { recordUsage, type UsageWrite } from '../lib/store/usage';
import type { Measure, MeasureResult, Row } from './lib/context';
import { tempDir } from './lib/cleanup';
import { createPgDatabase } from './lib/pg';
import { seedSql } from './list';
import { nowMs, percentile, round } from './lib/util';

const ROUNDS = 10;
const LONG_POINTS = 700;
const INTERVAL_MS = 5000;

interface Result {
  shortMs: number;
  halvingMs: number;
  longMs: number;
}

/** Rounds against `db` with `n` attempts; each round's part per attempt follows the sampler's rule (a full part starts the next). */
async function rounds(db: Database, n: number): Promise<Result> {
  for (const sql of seedSql(n)) await db.prisma.$executeRawUnsafe(sql);
  const store = createStore(db.prisma);
  const ids = (await db.prisma.attempt.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map((a) => a.id);
  let t = Date.UTC(2026, 0, 1);
  let length = 0;
  const write = (op: UsageWrite['op'], points: (id: number) => UsagePoint[]): UsageWrite[] => {
    const part = Math.ceil(length / USAGE_PART_POINTS) - 1;
    return ids.map((id) => ({ id, cpuMs: length * 10, rssBytes: 3e6, peakRssBytes: 3e6, peakProcs: 2, op, part, points: points(id) }));
  };
  const appendRound = async (): Promise<number> => {
    t += INTERVAL_MS;
    length++;
    const p: UsagePoint = [t, length * 10, 3e6, 2, 1];
    const rows = write('append', () => [p]);
    const t0 = nowMs();
    await recordUsage(store, rows, new Date(t));
    return nowMs() - t0;
  };
  for (let i = 0; i < ROUNDS; i++) await appendRound();
  const short: number[] = [];
  for (let i = 0; i < ROUNDS; i++) short.push(await appendRound());
  // Set-up (not timed): every series LONG_POINTS long, as an hour of sampling leaves it.
  length = LONG_POINTS;
  const series = Array.from({ length: LONG_POINTS }, (_, i): UsagePoint => [t - (LONG_POINTS - i) * INTERVAL_MS, i * 10, 3e6, 2, 1]);
  await recordUsage(store, write('replace', () => series), new Date(t));
  const long: number[] = [];
  for (let i = 0; i < ROUNDS; i++) long.push(await appendRound());
  // A halving round as the sampler writes it when a series is full: the halved series whole.
  const halved = appendSample(Array.from({ length: USAGE_MAX_POINTS }, (_, i): UsagePoint => [t - (USAGE_MAX_POINTS - i) * INTERVAL_MS, i * 10, 3e6, 2, 1]), [t + INTERVAL_MS, 0, 3e6, 2, 1]).points;
  length = halved.length;
  const t0 = nowMs();
  await recordUsage(store, write('replace', () => halved), new Date(t + INTERVAL_MS));
  const halvingMs = nowMs() - t0;
  return { shortMs: percentile(short, 50), halvingMs, longMs: percentile(long, 50) };
}

export const usage: Measure = {
  name: 'usage',
  title: 'Usage rounds as the series grow',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.quick ? 200 : 1000;
    const data: Record<string, Result> = {};
    const rows: Row[] = [];
    for (const kind of ['pglite', 'postgresql'] as const) {
      ctx.log(`usage: ${n} attempts on ${kind}…`);
      const db = kind === 'pglite' ? await openDatabase({ pgliteDir: tempDir('usage') }) : await openDatabase({ databaseUrl: (await createPgDatabase(ctx.pgUrl, 'usage')).url });
      try {
        const r = await rounds(db, n);
        data[kind] = r;
        const ratio = r.longMs / r.shortMs;
        rows.push(
          { metric: `${kind}: round of ${n} points on short / ${LONG_POINTS}-point series (median of ${ROUNDS}); ratio`, value: `${round(r.shortMs)} / ${round(r.longMs)} ms; ${ratio.toFixed(2)}×`, target: '≤ 1.5×', pass: ratio <= 1.5 },
          { metric: `${kind}: halving round (every series written whole, ${USAGE_MAX_POINTS} → ${USAGE_MAX_POINTS / 2 + 1} points); long rounds' share of a core at one round per ${INTERVAL_MS / 1000} s`, value: `${round(r.halvingMs)} ms; ${round((100 * r.longMs) / INTERVAL_MS, 2)} %` },
        );
      } finally {
        await db.close();
      }
    }
    return { rows, data: { attempts: n, rounds: ROUNDS, longPoints: LONG_POINTS, ...data }, notes: [] };
  },
};
