import path from 'node:path';
import type { AttemptHandle, UsageSample } from '../executors/types';
import { appendSample, mergePoints, placeSample, seriesParts, USAGE_MAX_POINTS, USAGE_PART_POINTS, type SeriesShape, type UsagePoint } from '../jobs/usage';
import type { UsageTarget, UsageWrite } from '../store';
import { PeriodicRound } from './periodic';
import { noteError, type MonitorResources } from './resources';
import type { UsageStats } from './types';

/**
 * The resource-usage sampler (docs/design.md §7, "Resource usage"): every
 * `JOBDECK_USAGE_INTERVAL_MS` one round reads the live attempts (one query), asks each executor
 * for all of its attempts at once (`Executor.sample`: one pass over `/proc` locally), and writes
 * the round in one statement (lib/store recordUsage): totals and peaks on the Attempt rows, one
 * point appended to each attempt's bounded series (halved when full: lib/jobs/usage.ts); then,
 * on PGlite, VACUUMs the two tables when autovacuum's threshold says so (lib/store vacuumUsageTables). What it
 * keeps in memory per attempt is a few numbers; the peaks and series shape of an attempt it has
 * not seen yet (after a restart, a re-attach) are read from the database once, so a series goes
 * on where the last server left it.
 */

/**
 * Live attempts a round samples at the configured interval; past this many the rounds space out
 * in proportion (2,000 attempts: every second tick), so the sampler's work per second stays
 * that of this many — a round costs ~72 ms of `/proc` reads and a 1,000-row write at 1,000
 * attempts (~3.7 % of a core every 5 s, bench/README.md), and grew with every attempt.
 */
export const USAGE_FULL_RATE_ATTEMPTS = 1000;

/**
 * When the round after one that sampled `sampled` attempts is due (ms after that round began):
 * `intervalMs`, or longer in proportion past USAGE_FULL_RATE_ATTEMPTS (docs/design.md §7).
 */
export function nextUsageRoundMs(intervalMs: number, sampled: number): number {
  return intervalMs * Math.max(1, sampled / USAGE_FULL_RATE_ATTEMPTS);
}

/** What the sampler remembers of an attempt between rounds: its peaks, its series' shape and last stored part. */
interface Known extends SeriesShape {
  peakRssBytes: number;
  peakProcs: number;
  /** The series' last stored part and its points (a full one: the next point starts a new part). */
  part: number;
  partLength: number;
}

export class UsageSystem {
  private readonly rounds: PeriodicRound;
  private readonly known = new Map<number, Known>();
  /** When the next timed round may run (clock ms); run() is not held to it. */
  private dueAt = 0;
  readonly stats: UsageStats = { rounds: 0, lastSampled: 0, lastRoundMs: null, vacuums: 0 };

  constructor(
    private readonly res: MonitorResources,
    /** Most points a series holds (tests lower it). */
    private readonly maxPoints = USAGE_MAX_POINTS,
  ) {
    this.rounds = new PeriodicRound(res, 'usage sampling', () => this.sampleAll());
  }

  /** Starts the rounds (no-op when sampling is off: JOBDECK_USAGE_INTERVAL_MS=0). */
  start(): void {
    // The timer ticks at the interval; a tick before dueAt (many live attempts) is skipped, and
    // "before" allows a tenth of a tick for timer jitter.
    const every = this.res.settings.usageIntervalMs;
    this.rounds.start(every, () => this.res.clock.now() >= this.dueAt - every / 10);
  }

  /** Stops the rounds and waits for one in progress. */
  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /** One round (a round already running is joined, never doubled). Never throws: failures are logged. */
  round(): Promise<void> {
    return this.rounds.run();
  }

  private async sampleAll(): Promise<void> {
    const t0 = this.res.clock.now();
    const targets = await this.res.store.usageTargets();
    this.dueAt = t0 + nextUsageRoundMs(this.res.settings.usageIntervalMs, targets.length);
    const live = new Set(targets.map((t) => t.id));
    for (const id of this.known.keys()) if (!live.has(id)) this.known.delete(id);
    const samples = await this.sampleByExecutor(targets);
    const at = this.res.clock.now();
    const seen = targets.filter((t) => samples.get(t.id));
    const fresh = seen.filter((t) => !this.known.has(t.id)).map((t) => t.id);
    for (const s of await this.res.store.storedUsage(fresh)) {
      this.known.set(s.id, { peakRssBytes: s.peakRssBytes ?? 0, peakProcs: s.peakProcs ?? 0, length: s.length, weight: s.weight, last: s.last, part: s.lastPart, partLength: s.lastPartLength });
    }
    const writes: UsageWrite[] = [];
    for (const t of seen) {
      const w = await this.nextWrite(t.id, samples.get(t.id)!, at);
      if (w) writes.push(w);
    }
    try {
      await this.res.store.recordUsage(writes, new Date(at));
    } catch (err) {
      // What memory says of the series may no longer be what is stored: read it again next round.
      this.known.clear();
      throw err;
    }
    // Each round leaves a dead version of every row it wrote; without autovacuum (PGlite) their
    // space is reused only once the table is vacuumed (docs/design.md §7 "Resource usage").
    if (writes.length > 0) this.stats.vacuums += (await this.res.store.vacuumUsageTables()).length;
    this.stats.rounds++;
    this.stats.lastSampled = writes.length;
    this.stats.lastRoundMs = this.res.clock.now() - t0;
  }

  /** Samples grouped by executor: one Executor.sample call per executor per round. */
  private async sampleByExecutor(targets: UsageTarget[]): Promise<Map<number, UsageSample | null>> {
    const byExecutor = new Map<string, UsageTarget[]>();
    for (const t of targets) {
      const l = byExecutor.get(t.executor);
      if (l) l.push(t);
      else byExecutor.set(t.executor, [t]);
    }
    const out = new Map<number, UsageSample | null>();
    await Promise.all(
      [...byExecutor].map(async ([name, list]) => {
        let ex;
        try {
          ex = this.res.executor(name);
        } catch {
          return; // an executor this server does not know: nothing recorded
        }
        if (!ex.sample) return;
        try {
          const got = await ex.sample(list.map(handleOf));
          list.forEach((t, i) => out.set(t.id, got[i] ?? null));
        } catch (err) {
          noteError(this.res, err, `usage sampling (${name})`);
        }
      }),
    );
    return out;
  }

  /** This round's write for one attempt, its memory updated; the series is read only when it must be halved. */
  private async nextWrite(id: number, s: UsageSample, at: number): Promise<UsageWrite | null> {
    const k = this.known.get(id);
    if (!k) return null; // deleted between the reads
    k.peakRssBytes = Math.max(k.peakRssBytes, s.rssBytes);
    k.peakProcs = Math.max(k.peakProcs, s.procs);
    const p: UsagePoint = [at, Math.round(s.cpuMs), s.rssBytes, s.procs, 1];
    const base = { id, cpuMs: s.cpuMs, rssBytes: s.rssBytes, peakRssBytes: k.peakRssBytes, peakProcs: k.peakProcs };
    const op = placeSample(k, this.maxPoints);
    if (op === 'append') {
      // Into the last part while it has room, else a new one (lib/jobs/usage USAGE_PART_POINTS).
      if (k.partLength >= USAGE_PART_POINTS) {
        k.part++;
        k.partLength = 0;
      }
      k.partLength++;
      k.length++;
      k.last = p;
      return { ...base, op, part: k.part, points: [p] };
    }
    if (op === 'merge') {
      k.last = mergePoints(k.last!, p);
      return { ...base, op, part: k.part, points: [k.last] };
    }
    const next = appendSample((await this.res.store.usageSeries(id)) ?? [], p, this.maxPoints).points;
    const parts = seriesParts(next);
    k.length = next.length;
    k.weight = next[0][4];
    k.last = next[next.length - 1];
    k.part = parts.length - 1;
    k.partLength = parts[parts.length - 1].length;
    return { ...base, op: 'replace', part: k.part, points: next };
  }
}

/** The executor handle of a sampled attempt (the folder only matters to probes, not to sampling). */
function handleOf(t: UsageTarget): AttemptHandle {
  return { executor: t.executor, ref: t.executorRef, pid: t.pid, pidStartTime: t.pidStartTime, attemptDir: t.logPath ? path.dirname(t.logPath) : '' };
}

export type { UsageStats } from './types';
