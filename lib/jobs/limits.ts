/**
 * Why an attempt was stopped at one of its limits (docs/spec.md "resources", "max_duration"): the
 * reason texts the task, the job, the API, the CLI and the job page show — "out of memory: limit
 * 8 GB", "exceeded max_duration 2h" — the same for every executor, and the rule that an attempt
 * that ran past its max_duration exceeded it (derived from its recorded start and end, so it
 * holds after a restart of jobdeck too). Pure.
 */
import { formatDuration } from './spec/duration';

/**
 * How an executor holds its attempts to what they asked for (GET /api/health `limits`): the control
 * groups it uses (`v1`, `v2`; null: none), which limits they enforce, and notes saying what is not
 * enforced and why (docs/design.md §7 "Limits").
 */
export interface LimitsStatus {
  cgroups: 'v1' | 'v2' | null;
  enforced: Array<'memory' | 'cpu' | 'pids' | 'devices'>;
  notes: string[];
}

/** Which limit ended an attempt (ProbeResult.limit): its memory, or its time. */
export type LimitKind = 'memory' | 'time';

/** A size in bytes as the spec's memory is written, binary units: `8 GB`, `512 MB`, `1.5 GB`. */
export function formatMemory(bytes: number): string {
  const units: Array<[string, number]> = [
    ['TB', 1024 ** 4],
    ['GB', 1024 ** 3],
    ['MB', 1024 ** 2],
    ['KB', 1024],
  ];
  for (const [u, size] of units) {
    if (bytes >= size) return `${Math.round((bytes / size) * 100) / 100} ${u}`;
  }
  return `${bytes} B`;
}

/** "out of memory: limit 8 GB" (or "out of memory" when the task gave no memory: a limit of the executor's own). */
export function outOfMemoryReason(memoryBytes: number | undefined): string {
  return memoryBytes !== undefined ? `out of memory: limit ${formatMemory(memoryBytes)}` : 'out of memory';
}

/** "exceeded max_duration 2h" (or the executor's own time limit when the task gave none). */
export function timeLimitReason(maxDurationMs: number | undefined): string {
  return maxDurationMs !== undefined ? `exceeded max_duration ${formatDuration(maxDurationMs)}` : 'exceeded its time limit';
}

/**
 * True when an attempt that started at `startedAt` and ended (or is now) at `at` ran its whole
 * `max_duration` (ms): past it, it is stopped, and its end is that limit's, whatever its exit code.
 */
export function pastMaxDuration(startedAt: Date | null | undefined, at: Date, maxDurationMs: number | undefined): boolean {
  return maxDurationMs !== undefined && startedAt != null && at.getTime() - startedAt.getTime() >= maxDurationMs;
}
