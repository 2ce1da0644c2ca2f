/**
 * Measure 15 — an idle server's memory. On a data folder used before (lib/server.ts warmHome; on
 * PostgreSQL with its own fresh database), a server is started and left alone: no request but the
 * bench's own `GET /api/monitor` at the end. Its RSS (/proc/<pid>/status VmRSS) is read 1.5 s
 * after `listening` (what the other measures call "idle before"), then sampled every 100 ms over a
 * window that starts once start-up is over (8 s after `listening`: the server's one collection of
 * start-up's garbage, 5 s after it, is included); the window's maximum is held to the target. Each database is started `rounds` times, alternating, and the worst start counts.
 */
import type { Measure, MeasureResult, Row } from './lib/context';
import { createPgDatabase } from './lib/pg';
import { rssBytes, sampleRss } from './lib/proc';
import { serverMemory, startBenchServer, warmHome } from './lib/server';
import { fmtBytes, fmtMs, sleep } from './lib/util';
import type { ProcessMemory } from '../lib/monitor/state';

/** Idle RSS targets, bytes (the memory issue: < 150 MB on PostgreSQL, < 250 MB on PGlite). */
export const IDLE_RSS_TARGETS = { postgresql: 150e6, pglite: 250e6 } as const;

type Kind = keyof typeof IDLE_RSS_TARGETS;

/** One idle start: RSS soon after listening, the window's maximum and last sample, the server's own report. */
interface IdleStart {
  kind: Kind;
  startupMs: number;
  rssEarlyBytes: number;
  rssMaxBytes: number;
  rssLastBytes: number;
  memory: ProcessMemory | null;
}

async function idleStart(kind: Kind, label: string, env: Record<string, string>, warm: { home: string; token: string }, settleMs: number, windowMs: number): Promise<IdleStart> {
  const server = await startBenchServer({ label, env, ...warm });
  await sleep(1500);
  const rssEarlyBytes = rssBytes(server.pid) ?? 0;
  await sleep(Math.max(0, settleMs - 1500));
  const sampler = sampleRss(server.pid, 100);
  await sleep(windowMs);
  const rss = sampler.stop();
  const memory = await serverMemory(server);
  await server.stop();
  return { kind, startupMs: server.startupMs, rssEarlyBytes, rssMaxBytes: rss.maxBytes, rssLastBytes: rss.lastBytes, memory };
}

export const idle: Measure = {
  name: 'idle',
  title: 'Idle server memory',
  async run(ctx): Promise<MeasureResult> {
    const rounds = ctx.quick ? 1 : 2;
    // Past the start-up collection (lib/server/v8-flags.ts STARTUP_GC_DELAY_MS, 5 s), with a margin for a loaded machine.
    const settleMs = 8000;
    const windowMs = ctx.quick ? 3000 : 5000;
    const pg = await createPgDatabase(ctx.pgUrl, 'idle');
    const envs: Record<Kind, Record<string, string>> = { postgresql: { DATABASE_URL: pg.url }, pglite: {} };
    const warm = { postgresql: await warmHome('idle-pg', envs.postgresql), pglite: await warmHome('idle-pglite', envs.pglite) };
    const starts: IdleStart[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const kind of ['postgresql', 'pglite'] as const) {
        ctx.log(`idle: ${kind}, start ${r + 1} of ${rounds}…`);
        starts.push(await idleStart(kind, `idle-${kind}-${r + 1}`, envs[kind], warm[kind], settleMs, windowMs));
      }
    }
    const rows: Row[] = [];
    for (const kind of ['postgresql', 'pglite'] as const) {
      const mine = starts.filter((s) => s.kind === kind);
      const worst = Math.max(...mine.map((s) => s.rssMaxBytes));
      const name = kind === 'postgresql' ? 'PostgreSQL' : 'PGlite';
      rows.push({
        metric: `${name}: idle RSS, max over ${windowMs / 1000} s from ${settleMs / 1000} s after listening (${mine.length} start${mine.length > 1 ? 's' : ''}; each)`,
        value: `${fmtBytes(worst)} (${mine.map((s) => fmtBytes(s.rssMaxBytes)).join(', ')})`,
        target: `< ${fmtBytes(IDLE_RSS_TARGETS[kind])}`,
        pass: worst < IDLE_RSS_TARGETS[kind],
      });
      const m = mine.at(-1)!.memory;
      rows.push({ metric: `${name}: RSS 1.5 s after listening; time until listening`, value: `${mine.map((s) => fmtBytes(s.rssEarlyBytes)).join(', ')}; ${mine.map((s) => fmtMs(s.startupMs)).join(', ')}` });
      rows.push({ metric: `${name}: JS heap used / total; external (PGlite's WebAssembly memory) — the last start`, value: m ? `${fmtBytes(m.heapUsedBytes)} / ${fmtBytes(m.heapTotalBytes)}; ${fmtBytes(m.externalBytes)}` : 'not reported' });
    }
    return { rows, data: { rounds, settleMs, windowMs, targets: IDLE_RSS_TARGETS, starts }, notes: [] };
  },
};
