/** The shapes every bench measure shares: its context, its table rows, its result. */

/** One line of the results table. */
export interface Row {
  /** What was measured ("p50 exit → status"). */
  metric: string;
  /** The measured value, formatted ("12.3 ms"). */
  value: string;
  /** The target as the issue states it ("< 50 ms"); absent for information-only rows. */
  target?: string;
  /** true = target met, false = missed, null/absent = no target. */
  pass?: boolean | null;
}

/** What a measure returns: rows for the table, raw data for bench/results/<name>.json. */
export interface MeasureResult {
  rows: Row[];
  data: Record<string, unknown>;
  notes: string[];
}

/** What a measure gets from run.ts. */
export interface BenchContext {
  /** Smaller sizes for a smoke run. */
  quick: boolean;
  /** Start servers with --cpu-prof and summarise the profiles. */
  profile: boolean;
  /** Admin URL of the PostgreSQL server (a role that may CREATE DATABASE). */
  pgUrl: string;
  /** `--scale-jobs=N`: jobs the scale measure seeds (default 100,000; 10,000 with --quick). */
  scaleJobs?: number;
  /** `--grep-bytes=N`: bytes of logs the grep measure writes (default 200 MB; 50 MB with --quick). */
  grepBytes?: number;
  /** Progress line on stderr. */
  log(msg: string): void;
}

/** One measure (one module under bench/). */
export interface Measure {
  /** Selection name for --only ("latency") and the JSON file name. */
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<MeasureResult>;
}
