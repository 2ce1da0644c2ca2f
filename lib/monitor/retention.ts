import { readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { uploadsDir, UPLOAD_HASH } from '../uploads/upload';
import { jobDir, jobsRoot } from '../jobs/paths';
import { isCompressTemp } from '../logs/compress';
import { noteError, type MonitorResources } from './resources';
import { PeriodicRound } from './periodic';
import type { RetentionJob } from '../store';
import type { RetentionStats } from './state';

/**
 * The retention system (docs/design.md "Retention"): every `JOBDECK_RETENTION_INTERVAL_MS` a
 * pass removes, in batches of `JOBDECK_RETENTION_BATCH` jobs,
 *
 * 1. the logs of finished jobs older than their period (the job's `retention: logs`, else
 *    JOBDECK_RETAIN_LOGS_DAYS), oldest first;
 * 2. while all logs under `$JOBDECK_HOME/jobs` take more than JOBDECK_RETAIN_LOGS_BYTES, the
 *    logs of the oldest finished jobs (not those kept forever);
 * 3. finished jobs older than their record's period (`retention: job`, else
 *    JOBDECK_RETAIN_JOBS_DAYS): rows (tasks, attempts, events by cascade) and folder, with one
 *    `retention.jobs` audit row per batch (ids, folder bytes) in the delete's transaction;
 * 4. at most hourly, stored uploads (`$JOBDECK_HOME/uploads`, POST /api/uploads) older than a
 *    day that no job's launch names any more (a kept job's re-run reuses its uploads; a younger
 *    one may belong to a submit still in flight), with one `retention.uploads` audit row.
 *
 * A pass runs when the monitor starts (the disk usage /api/monitor shows is measured then), then
 * every interval.
 *
 * Only terminal jobs are selected and written (the store's guarded statements), and a terminal
 * job never runs again, so its files may go first and the write after: a pass that dies between
 * the two leaves the job selected, and the next pass removes nothing more and writes it. Each
 * removal is recorded (Job.logsRemovedAt and a `LOGS_REMOVED` history entry with the files and
 * bytes) and announced, so a client following the job's log is told and closed (lib/ws).
 */


/** Without a size limit, how often a pass walks the jobs folder for the disk usage (ms). */
const MEASURE_EVERY_MS = 3_600_000;

/** How often a pass looks for stored uploads no job names (ms), and how old one must be (ms). */
const UPLOADS_EVERY_MS = 3_600_000;
const UPLOAD_MIN_AGE_MS = 86_400_000;

/** Most batches one step of a pass handles (the rest waits for the next pass: a pass stays short). */
const MAX_BATCHES = 20;

/**
 * A log's files: the log, its rank logs and their time indexes (lib/jobs/paths.ts), each log's
 * compressed form and a compression's temp (lib/logs/compress.ts).
 */
function isLogFileOf(logPath: string, name: string): boolean {
  const base = path.basename(logPath).replace(/\.[^.]*$/, '');
  return name.startsWith(`${base}.`) && /^(\.rank-[0-9]+)?\.(log|times|log\.gz|log\.gz\.tmp-[A-Za-z0-9_-]+)$/.test(name.slice(base.length));
}

/**
 * The files of one attempt's log as they are on disk now: the log, its rank logs and their time
 * indexes (paths; none when the folder is gone). What a job's log usage counts and a removal unlinks.
 */
export async function attemptLogFiles(logPath: string): Promise<string[]> {
  const dir = path.dirname(logPath);
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((name) => isLogFileOf(logPath, name)).map((name) => path.join(dir, name));
}

/** Sums the sizes of every file under `dir` (bytes; 0 when it is gone). */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await bytesUnder(p);
    else if (e.isFile()) total += (await stat(p).catch(() => null))?.size ?? 0;
  }
  return total;
}

/** A file the disk usage counts: a log, a time index, a compressed log or a compression's temp. */
function isLogFile(name: string): boolean {
  return /\.(log|times|log\.gz)$/.test(name) || isCompressTemp(name);
}

/** Sums the sizes of the log files under `dir`: plain and compressed logs, time indexes, compression temps. */
export async function logBytesUnder(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await logBytesUnder(p);
    else if (e.isFile() && isLogFile(e.name)) total += (await stat(p).catch(() => null))?.size ?? 0;
  }
  return total;
}

export class RetentionSystem {
  private readonly rounds: PeriodicRound;
  /** When a pass last walked the jobs folder without a size limit (clock ms), null: never. */
  private measuredAt: number | null = null;
  readonly stats: RetentionStats = { passes: 0, logsRemovedJobs: 0, filesRemoved: 0, bytesFreed: 0, jobsDeleted: 0, uploadsRemoved: 0, uploadBytesFreed: 0, logBytes: null, lastPassMs: null };
  private uploadsAt: number | null = null;

  constructor(private readonly res: MonitorResources) {
    this.rounds = new PeriodicRound(res, 'retention pass', () => this.pass());
  }

  /** Starts the passes: one now (so the disk usage is known from the start), then every interval. */
  start(): void {
    const every = this.res.settings.retention.intervalMs;
    this.rounds.start(every);
    if (every > 0) void this.rounds.run();
  }

  /** Stops the passes and waits for one in progress. */
  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /** One pass (joined when one runs). Never throws: failures are logged, the next pass retries. */
  round(): Promise<void> {
    return this.rounds.run();
  }

  private async pass(): Promise<void> {
    const t0 = this.res.clock.now();
    const policy = this.res.settings.retention;
    const st = this.res.store.retention;
    for (let i = 0; i < MAX_BATCHES && !this.res.life.stopped; i++) {
      const jobs = await st.expiredLogs({ now: new Date(this.res.clock.now()), logsDays: policy.logsDays, limit: policy.batch });
      if (jobs.length === 0) break;
      await this.removeLogs(jobs);
    }
    if (policy.logsBytes !== null) await this.trimToSize(policy.logsBytes);
    else if (this.measuredAt === null || t0 - this.measuredAt >= MEASURE_EVERY_MS) {
      // Without a size limit the walk is only for the disk usage shown: at most hourly.
      this.measuredAt = t0;
      this.stats.logBytes = await logBytesUnder(jobsRoot(this.res.home));
    }
    for (let i = 0; i < MAX_BATCHES && !this.res.life.stopped; i++) {
      const ids = await st.pastRetention({ now: new Date(this.res.clock.now()), jobsDays: policy.jobsDays, limit: policy.batch });
      if (ids.length === 0) break;
      // Measured before the rows go: the audit row of the delete records what the folders held.
      const bytes = new Map<number, number>();
      for (const id of ids) bytes.set(id, await bytesUnder(jobDir(id, this.res.home)));
      const deleted = await st.deleteJobs(ids, bytes);
      for (const id of deleted) await rm(jobDir(id, this.res.home), { recursive: true, force: true }).catch((err: unknown) => noteError(this.res, err, `retention: job ${id}'s folder`));
      this.stats.jobsDeleted += deleted.length;
      if (deleted.length) this.res.log.info({ jobs: deleted.length }, `retention: deleted ${deleted.length} finished job(s) past their retention`);
      if (deleted.length < ids.length) break;
    }
    if (!this.res.life.stopped && (this.uploadsAt === null || t0 - this.uploadsAt >= UPLOADS_EVERY_MS)) {
      this.uploadsAt = t0;
      await this.removeUnusedUploads(t0);
    }
    this.stats.passes++;
    this.stats.lastPassMs = this.res.clock.now() - t0;
  }

  /** Removes stored uploads older than a day that no job's launch names (archive and manifest). */
  private async removeUnusedUploads(now: number): Promise<void> {
    const dir = uploadsDir(this.res.home);
    const names = await readdir(dir).catch(() => [] as string[]);
    const old: string[] = [];
    for (const name of names) {
      const hash = name.endsWith('.tar.gz') ? name.slice(0, -'.tar.gz'.length) : null;
      if (!hash || !UPLOAD_HASH.test(hash)) continue;
      const st = await stat(path.join(dir, name)).catch(() => null);
      if (st && now - st.mtimeMs > UPLOAD_MIN_AGE_MS) old.push(hash);
    }
    if (old.length === 0) return;
    const kept = await this.res.store.retention.referencedUploads(old);
    let removed = 0;
    let bytes = 0;
    const gone: string[] = [];
    for (const hash of old.filter((h) => !kept.has(h))) {
      for (const file of [`${hash}.tar.gz`, `${hash}.json`]) {
        const p = path.join(dir, file);
        const size = (await stat(p).catch(() => null))?.size ?? 0;
        if (await unlink(p).then(() => true, () => false)) bytes += size;
      }
      gone.push(hash);
      removed++;
    }
    await this.res.store.retention.uploadsRemoved(gone, bytes);
    this.stats.uploadsRemoved += removed;
    this.stats.uploadBytesFreed += bytes;
    if (removed) this.res.log.info({ uploads: removed, bytes }, `retention: removed ${removed} stored upload(s) no job names (${bytes} bytes)`);
  }

  /** Removes the oldest finished jobs' logs while all logs take more than `limit` bytes. */
  private async trimToSize(limit: number): Promise<void> {
    let total = await logBytesUnder(jobsRoot(this.res.home));
    let after: { endedAt: Date; id: number } | undefined;
    for (let i = 0; i < MAX_BATCHES && total > limit && !this.res.life.stopped; i++) {
      const jobs = await this.res.store.retention.oldestWithLogs({ limit: this.res.settings.retention.batch, after });
      if (jobs.length === 0) break;
      const take: RetentionJob[] = [];
      let freed = 0;
      for (const j of jobs) {
        if (total - freed <= limit) break;
        take.push(j);
        freed += await this.sizeOf(j);
      }
      total -= await this.removeLogs(take);
      after = { endedAt: jobs[jobs.length - 1].endedAt, id: jobs[jobs.length - 1].id };
    }
    this.stats.logBytes = total;
  }

  private async sizeOf(job: RetentionJob): Promise<number> {
    let n = 0;
    for (const f of await this.filesOf(job)) n += (await stat(f).catch(() => null))?.size ?? 0;
    return n;
  }

  private async filesOf(job: RetentionJob): Promise<string[]> {
    const out: string[] = [];
    for (const logPath of job.logPaths) out.push(...(await attemptLogFiles(logPath)));
    return out;
  }

  /** Unlinks the jobs' log files, then records the removals (guarded). @returns the bytes freed. */
  private async removeLogs(jobs: readonly RetentionJob[]): Promise<number> {
    if (jobs.length === 0) return 0;
    const removed = [];
    let bytes = 0;
    for (const job of jobs) {
      let files = 0;
      let size = 0;
      for (const f of await this.filesOf(job)) {
        const s = (await stat(f).catch(() => null))?.size ?? 0;
        if (await unlink(f).then(() => true, () => false)) {
          files++;
          size += s;
        }
      }
      removed.push({ jobId: job.id, files, bytes: size });
      bytes += size;
    }
    const written = await this.res.store.retention.recordLogsRemoved(removed, new Date(this.res.clock.now()));
    const w = new Set(written);
    // Once more after the write: a compression that renamed its `.gz` in place between the first
    // sweep and the write left it here (one renaming after the write sees the removal itself:
    // lib/monitor/compress.ts), so no compressed log outlives its job's recorded removal.
    for (const job of jobs.filter((j) => w.has(j.id))) for (const f of await this.filesOf(job)) await unlink(f).catch(() => undefined);
    for (const r of removed.filter((x) => w.has(x.jobId))) {
      this.stats.logsRemovedJobs++;
      this.stats.filesRemoved += r.files;
      this.stats.bytesFreed += r.bytes;
    }
    this.res.log.info({ jobs: written.length, bytes }, `retention: removed the logs of ${written.length} finished job(s), ${bytes} bytes`);
    // Between two walks of the jobs folder the usage shown follows what the passes removed.
    if (this.stats.logBytes !== null) this.stats.logBytes = Math.max(0, this.stats.logBytes - bytes);
    return bytes;
  }
}
