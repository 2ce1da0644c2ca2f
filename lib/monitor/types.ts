import type { Isolation } from '../config';
import type { Attempt, Job, PrismaClient, Task } from '../generated/prisma/client';
import type { ServerInfo, Store } from '../store';
import type { WebhookSettings } from './webhooks/config';
import type { Executor, ProbeResult } from '../executors/types';
import type { LogTimeIndexer } from '../logs/time-index';
import type { MonitorSettings } from './config';
import type { CompressStats, MonitorHandle, RetentionStats } from './state';

/**
 * The monitor's public types (re-exported by lib/monitor/monitor.ts) and the row shapes its
 * systems pass each other.
 */

/** The monitor's sense of time (ms since the epoch). Timers stay real; tests shift `now`. */
export interface Clock {
  now(): number;
}

/** Whether the monitor was stopped; every timer and kick checks it. */
export interface Lifecycle {
  stopped: boolean;
}

/** Where in a step a guarded write is about to happen (for hooks and logs). */
export type StepPhase =
  | 'admit'
  | 'no-resource'
  | 'dependency'
  | 'nothing-to-run'
  | 'launch'
  | 'attach'
  | 'group-stop'
  | 'settle'
  | 'lost'
  | 'recover'
  | 'finish'
  | 'cancel-pending'
  | 'cancel-request'
  | 'cancel-begin'
  | 'cancel-finish'
  | 'exception';

/** What a hook sees right before a guarded write. */
export interface WriteContext {
  jobId: number;
  phase: StepPhase;
  /** The job row as this iteration read it. */
  job: Job;
  /** The probe result the write acts on, when there is one. */
  observed?: ProbeResult;
}

/**
 * Seams for tests (docs/design.md §5, the forced races): put a delete, a terminal write or a
 * status change exactly here.
 */
export interface MonitorHooks {
  /** After the start-up recovery scan listed the non-terminal jobs, before any is handled. */
  afterScan?(jobIds: number[]): void | Promise<void>;
  /** Between a read (and its probe) and the guarded write acting on it. May throw. */
  beforeWrite?(ctx: WriteContext): void | Promise<void>;
}

/** Options of createMonitor(); settings default to the environment (lib/monitor/config). */
export interface MonitorOptions extends Partial<MonitorSettings> {
  /**
   * The store the monitor writes through and listens to: pass the one the rest of the process
   * uses — its bus is how the monitor hears submits and cancels.
   */
  store: Store;
  /** The client the monitor reads through (default `store.prisma`). */
  db?: PrismaClient;
  /** The executor for every job, or a resolver by name (Job.executor / Attempt.executor). */
  executor: Executor | ((name: string) => Executor);
  clock?: Clock;
  hooks?: MonitorHooks;
  /** Data folder for attempt folders (default `$JOBDECK_HOME`). */
  home?: string;
  /** How long start() waits for the re-adopted jobs' first steps (ms, default 5000). */
  startWaitMs?: number;
  /** The webhook dispatcher's settings (each given one wins over the environment: lib/monitor/webhook-config). */
  webhooks?: Partial<WebhookSettings>;
  /**
   * Write the time index of running attempts' logs (docs/design.md §8 "Line times"; default
   * true), or with this indexer (a test's, to hold a last look and force the order of an end).
   */
  logTimes?: boolean | LogTimeIndexer;
  /** Longest an attempt's end waits for the last look at its logs' time index (ms, default 2,000). */
  lastLookWaitMs?: number;
  /**
   * Own jobs by lease (several servers on one PostgreSQL, docs/design.md "Replicas"): this
   * server's row, and the lease length. Absent: one server steps every job (PGlite, tests).
   */
  lease?: LeaseOptions;
  /**
   * As whom attempts run and how they call jobdeck back (docs/design.md §16): the isolation
   * settings (lib/config.ts isolationFromEnv) and the URL attempts get as JOBDECK_URL (null until
   * known: the server sets it once it listens). Absent: every attempt runs as this process's
   * account and gets no token (tests of the monitor alone).
   */
  runAs?: RunAsOptions;
}

/** MonitorOptions.runAs. */
export interface RunAsOptions {
  isolation: Isolation;
  /** The URL attempts are given as JOBDECK_URL (lib/config.ts jobApiUrl); null: not known yet (no token then). */
  api: { url: string | null };
}

/** The lease settings of a monitor (MonitorOptions.lease). */
export interface LeaseOptions {
  /** This server's row (lib/store ServerInfo): id new per process start. */
  server: ServerInfo;
  /** Lease length (ms); renewed every third of it (JOBDECK_LEASE_MS). */
  leaseMs: number;
  /** At most this many jobs claimed per round (default 256). */
  claimBatch?: number;
}

export type { CompressStats, RetentionStats } from './state';

/** Counters of the resource-usage sampler (lib/monitor/usage.ts). */
export interface UsageStats {
  rounds: number;
  /** Attempts sampled by the last round. */
  lastSampled: number;
  /** Duration of the last round (ms), null before the first. */
  lastRoundMs: number | null;
  /** VACUUMs of the tables the rounds rewrite (PGlite only: lib/store vacuumUsageTables), since start. */
  vacuums: number;
}

/** Where an injected read failure strikes. */
export type FaultSite = 'job' | 'admission' | 'scan' | 'held' | 'any';

/** A running (or stopped) monitor. */
export interface Monitor extends MonitorHandle {
  /** Start-up recovery (awaited: call before accepting requests), then the loop. */
  start(): Promise<void>;
  /** Stops the loop and the watches; running attempts keep running. Idempotent. */
  stop(): Promise<void>;
  /** One admission pass plus one step of every admitted non-terminal job, awaited. */
  reconcileNow(): Promise<void>;
  /** One admission pass, awaited (with the steps of the jobs it admitted or failed). */
  admitNow(): Promise<void>;
  /** Reconcile ticks seen and admission passes begun since start (lib/monitor/admission.ts tick). */
  admissionStats(): { ticks: number; passes: number };
  /** One serialized step of one job, awaited. */
  step(jobId: number): Promise<void>;
  /** Resolves once no step, admission pass (running or scheduled) or started reap is left. */
  idle(): Promise<void>;
  /** One resource-usage sampling round (lib/monitor/usage.ts), awaited. */
  sampleUsageNow(): Promise<void>;
  /** The sampler's counters (rounds, attempts sampled and duration of the last round). */
  usageStats(): UsageStats;
  /** Runs one retention pass now (lib/monitor/retention.ts; joins one in progress). */
  retainNow(): Promise<void>;
  /** What the retention passes removed since start, and the logs' size at the last measure. */
  retentionStats(): RetentionStats;
  /** Runs one log compression round now (lib/monitor/compress.ts; joins one in progress). */
  compressNow(): Promise<void>;
  /** What the compression rounds did since start. */
  compressStats(): CompressStats;
  /** Makes the next database read at `site` fail with `err` (default: a temporary failure). */
  failNextRead(site?: FaultSite, err?: Error): void;
}

/** A task as a step reads it: with its latest attempt only (`attempts` has 0 or 1 element). */
export type TaskRow = Task & { attempts: Attempt[] };

/** A job as a step reads it: its tasks by index, each with its latest attempt. */
export type JobRow = Job & { tasks: TaskRow[] };

/** What an iteration of a step asks for next: read the job again, or end the step. */
export type Next = 'again' | 'idle';
