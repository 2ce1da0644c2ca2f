import type { LiveServer, SubmitStatementStats } from '../store';

/**
 * What the monitor shows to code outside lib/monitor: its state (GET /api/monitor) and wake().
 * The server keeps its monitor in its services (lib/server/services.ts).
 */

/** What `GET /api/monitor` answers. Times are ISO-8601; durations in ms. */
export interface MonitorState {
  /** True while the monitor's loop runs in this process. */
  running: boolean;
  startedAt: string | null;
  /** Interval of the reconcile pass (JOBDECK_RECONCILE_MS). */
  reconcileMs: number;
  /** When the last reconcile pass ended. */
  lastReconcileAt: string | null;
  /** How long the last reconcile pass took. */
  lastReconcileDurationMs: number | null;
  /** Time since the last reconcile pass ended (grows when the loop is stuck). */
  lagMs: number | null;
  /** Non-terminal jobs the monitor is following (admitted ones, plus cancels in progress). */
  jobsWatched: number;
  /** PENDING jobs waiting for capacity at the last admission pass. */
  jobsWaiting: number;
  /** Attempts with a live exit subscription (executor.watch). */
  attemptsWatched: number;
  /** Restarts after a task's own failure decided by this monitor since it started. */
  restarts: number;
  /** Recoveries (lost attempts) decided by this monitor since it started. */
  recoveries: number;
  /** Non-terminal jobs re-adopted by the start-up recovery. */
  readopted: number;
  /** Temporary database failures retried. */
  transientRetries: number;
  /** Jobs ended FAILED_CONTROLLER by the exception path. */
  controllerFailures: number;
  /** CPU budget: used by admitted jobs / total, summed over executors, and per executor. */
  capacity: { check: boolean; used: number; total: number; byExecutor: Record<string, { used: number; total: number }> };
  /** The server process's memory now, in bytes (Node's process.memoryUsage()). */
  memory: ProcessMemory;
  /**
   * Submit statements sent since the process started and the jobs they carried (the group commit
   * of lib/store submitJob: jobs ÷ statements is the mean batch under load).
   */
  submits: SubmitStatementStats;
  /**
   * The retention policy (JOBDECK_RETAIN_*, null: not set) and what its passes removed since
   * start; `logBytes`: all logs under the jobs folder when last measured (disk usage: the pass at start, then every pass with a size limit, else at most hourly).
   */
  retention: RetentionStats & { logsDays: number | null; logsBytesLimit: number | null; jobsDays: number | null; intervalMs: number };
  /**
   * The log compressor (JOBDECK_COMPRESS_LOGS_AFTER as `afterMs`, null: off) and what its rounds
   * did since start.
   */
  compression: CompressStats & { afterMs: number | null; intervalMs: number };
}

/** What the log compressor's rounds (lib/monitor/compress.ts) did since this monitor started. */
export interface CompressStats {
  rounds: number;
  /** Finished attempts whose logs were handled (compressed, or nothing to compress). */
  attempts: number;
  /** Log files compressed, their bytes before (log bytes) and after (on disk). */
  files: number;
  bytesIn: number;
  bytesOut: number;
  /** Attempts put off to a later round (leftovers being stopped, time index still looking). */
  deferred: number;
  /** Attempts whose compression failed MAX_TRIES rounds: their logs stay plain. */
  leftPlain: number;
  /** Duration of the last round (ms), null before the first. */
  lastRoundMs: number | null;
}

/** What the retention passes (lib/monitor/retention.ts) did since this monitor started. */
export interface RetentionStats {
  passes: number;
  /** Jobs whose logs were removed, log files removed and their bytes. */
  logsRemovedJobs: number;
  filesRemoved: number;
  bytesFreed: number;
  /** Finished jobs deleted (rows and folder). */
  jobsDeleted: number;
  /** Stored uploads no job names any more, removed (archive + manifest), and their bytes. */
  uploadsRemoved: number;
  uploadBytesFreed: number;
  /** Bytes of all logs under the jobs folder when last measured, null: not yet. */
  logBytes: number | null;
  /** Duration of the last pass (ms), null before the first. */
  lastPassMs: number | null;
}

/**
 * A process's memory in bytes (Node's `process.memoryUsage()`): `rssBytes` is what the OS counts;
 * `heapUsedBytes` / `heapTotalBytes` the JavaScript heap; `externalBytes` memory held for JS
 * objects outside the heap — on the embedded database mostly PGlite's WebAssembly memory (~150
 * MB) — of which `arrayBuffersBytes` is ArrayBuffers and Buffers. What is left of RSS is code,
 * V8's compiled WebAssembly, thread stacks and the allocator's free lists. heapUsed includes
 * garbage not yet collected.
 */
export interface ProcessMemory {
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
}

/** This process's memory now (ProcessMemory, bytes). */
export function processMemory(): ProcessMemory {
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, heapTotalBytes: m.heapTotal, externalBytes: m.external, arrayBuffersBytes: m.arrayBuffers };
}

/** What a monitor exposes to callers outside lib/monitor (the route reads its state()). */
export interface MonitorHandle {
  state(): MonitorState;
  wake(jobId?: number): void;
  /**
   * The live servers on this database (docs/design.md "Replicas"), as the store reads them (id,
   * host, started, heartbeat age in ms, jobs owned, takeovers), and which one is this server;
   * lib/api/monitor.ts makes the API's view of them. Null without leases (one server: PGlite).
   */
  servers?(): Promise<LiveServers | null>;
}

/** The live servers on the database and this server's id among them. */
export interface LiveServers {
  rows: LiveServer[];
  selfId: string;
}
