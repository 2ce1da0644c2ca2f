import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { compressLog, removeStaleTemps } from '../logs/compress';
import { gzPathOf } from '../logs/source';
import type { CompressCandidate } from '../store';
import type { CompressStats } from './state';
import { PeriodicRound } from './periodic';
import type { ReapSystem } from './reap';
import { errMessage, noteError, type MonitorResources } from './resources';

/**
 * The log compressor (docs/design.md §8 "Compressed logs"): every `JOBDECK_COMPRESS_INTERVAL_MS`
 * a round takes the finished attempts that ended more than `JOBDECK_COMPRESS_LOGS_AFTER` ago and
 * whose logs it has not handled (lib/store log-compress.ts, oldest end first, in batches), and
 * replaces each of their logs — rank 0's and every rank K's — by its compressed form
 * (lib/logs/compress.ts: temp, fsync, rename, unlink; readers never see a half state), then
 * records them handled in one statement per batch.
 *
 * Not yet, in this round: an attempt whose job still has leftovers being stopped (lib/monitor/
 * reap.ts: a leftover may still write the log) or whose log the time index still looks at
 * (its last look). A log that changed while it was compressed, or whose compression failed, is
 * tried again next round, at most MAX_TRIES times, then left plain (recorded handled). The job's
 * logs removed by the retention policy meanwhile: the statement that records the batch says so,
 * and what this round wrote for that job is removed (design §13).
 */

/** Attempts one statement reads. */
const BATCH = 50;
/** Most batches one round handles (the rest waits for the next round: a round stays short). */
const MAX_BATCHES = 20;
/** Rounds an attempt's compression may fail (or find its log changing) before its logs are left plain. */
const MAX_TRIES = 3;

/** The plain logs of an attempt: rank 0's (Attempt.logPath) and rank K's beside it (lib/jobs/paths.ts rankLogPath). */
async function plainLogsOf(logPath: string): Promise<string[]> {
  const dir = path.dirname(logPath);
  const ext = path.extname(logPath);
  const base = path.basename(logPath, ext);
  const rank = (name: string) => name.startsWith(`${base}.rank-`) && name.endsWith(ext) && /^[0-9]+$/.test(name.slice(base.length + 6, name.length - ext.length));
  const names = await readdir(dir).catch(() => [] as string[]);
  return [logPath, ...names.filter(rank).map((n) => path.join(dir, n))];
}

export class CompressSystem {
  private readonly rounds: PeriodicRound;
  private abort = new AbortController();
  /** Failed rounds per attempt id (in memory: a restart gives each MAX_TRIES more). */
  private readonly tries = new Map<number, number>();
  readonly stats: CompressStats = { rounds: 0, attempts: 0, files: 0, bytesIn: 0, bytesOut: 0, deferred: 0, leftPlain: 0, lastRoundMs: null };

  constructor(
    private readonly res: MonitorResources,
    private readonly reap: ReapSystem,
  ) {
    this.rounds = new PeriodicRound(res, 'log compression', () => this.pass());
  }

  /** Starts the rounds (none when JOBDECK_COMPRESS_LOGS_AFTER is off). */
  start(): void {
    if (this.res.settings.compress.afterMs !== null) this.rounds.start(this.res.settings.compress.intervalMs);
  }

  /** Stops the rounds: a compression in progress is abandoned (its temp removed), the round awaited. */
  stop(): Promise<void> {
    this.abort.abort(new Error('the monitor is stopping'));
    return this.rounds.stop();
  }

  /** One round now (joined when one runs). Never throws: failures are logged, the next round retries. */
  round(): Promise<void> {
    return this.rounds.run();
  }

  private async pass(): Promise<void> {
    const afterMs = this.res.settings.compress.afterMs;
    if (afterMs === null || this.res.life.stopped) return;
    const t0 = this.res.clock.now();
    const before = { ...this.stats };
    this.abort = new AbortController();
    let after: { endedAt: Date; id: number } | undefined;
    for (let i = 0; i < MAX_BATCHES && !this.res.life.stopped; i++) {
      const rows = await this.res.store.compress.candidates({ endedBefore: new Date(this.res.clock.now() - afterMs), limit: BATCH, after });
      if (rows.length === 0) break;
      after = { endedAt: rows[rows.length - 1].endedAt, id: rows[rows.length - 1].id };
      await this.batch(rows);
      if (rows.length < BATCH) break;
    }
    this.stats.rounds++;
    this.stats.lastRoundMs = this.res.clock.now() - t0;
    const files = this.stats.files - before.files;
    if (files > 0) {
      const bytesIn = this.stats.bytesIn - before.bytesIn;
      const bytesOut = this.stats.bytesOut - before.bytesOut;
      this.res.log.info({ files, bytesIn, bytesOut, ms: this.stats.lastRoundMs }, `log compression: ${files} finished log(s), ${bytesIn} → ${bytesOut} bytes`);
    }
  }

  private async batch(rows: readonly CompressCandidate[]): Promise<void> {
    const reaping = new Set(this.reap.jobIds());
    const done: number[] = [];
    const wrote = new Map<number, string[]>();
    for (const a of rows) {
      if (this.res.life.stopped) break;
      const files = await plainLogsOf(a.logPath);
      if (reaping.has(a.jobId) || files.some((f) => this.res.watches.indexing(f))) {
        this.stats.deferred++;
        continue;
      }
      const written = await this.attempt(a, files);
      if (written) {
        done.push(a.id);
        wrote.set(a.id, written);
      } else if ((this.tries.get(a.id) ?? 0) >= MAX_TRIES) {
        this.res.log.warn({ jobId: a.jobId, attemptId: a.id }, `log compression: job ${a.jobId}'s attempt log failed ${MAX_TRIES} rounds; left plain`);
        this.stats.leftPlain++;
        done.push(a.id);
      }
    }
    if (done.length === 0) return;
    const recorded = await this.res.store.compress.record(done, new Date(this.res.clock.now()));
    for (const r of recorded) {
      this.tries.delete(r.id);
      if (r.logsRemoved) for (const f of wrote.get(r.id) ?? []) await unlink(f).catch(() => undefined);
    }
  }

  /** Compresses an attempt's logs. @returns the compressed files written, or null to try again next round. */
  private async attempt(a: CompressCandidate, files: readonly string[]): Promise<string[] | null> {
    await removeStaleTemps(path.dirname(a.logPath));
    const written: string[] = [];
    let ok = true;
    for (const f of files) {
      if (this.res.life.stopped) return null;
      try {
        const r = await compressLog(f, { signal: this.abort.signal });
        if (r.outcome === 'compressed') {
          written.push(gzPathOf(f));
          this.stats.files++;
          this.stats.bytesIn += r.size;
          this.stats.bytesOut += r.diskBytes;
        } else if (r.outcome === 'changed') {
          ok = false;
          this.res.log.info({ jobId: a.jobId, file: f }, 'log compression: the log changed while it was compressed; trying again next round');
        }
      } catch (err) {
        if (this.res.life.stopped) return null;
        ok = false;
        noteError(this.res, new Error(`${f}: ${errMessage(err)}`), 'log compression');
      }
    }
    if (!ok) {
      this.tries.set(a.id, (this.tries.get(a.id) ?? 0) + 1);
      return null;
    }
    this.stats.attempts++;
    return written;
  }
}
