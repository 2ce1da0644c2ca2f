/**
 * Small text formatters of the CLI: durations, relative times, status colours. Pure functions
 * (the clock and the colour switch are parameters) so renderers are unit-testable.
 */
import { formatDistanceStrict } from 'date-fns';
import pc from 'picocolors';
import type { AnyStatus, AttemptStatus } from '../jobs/status';

/** The colour functions a renderer uses; identity functions when colours are off. */
export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Whether to colour a stream: FORCE_COLOR (non-"0") forces on, NO_COLOR forces off, otherwise
 * only on a terminal.
 */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return !!stream.isTTY;
}

/** Colour functions, on or off. */
export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

/**
 * A duration in ms as SkyPilot's queue shows it: `45s`, `2m 5s`, `1h 2m 3s`, `3d 4h 5m`
 * (seconds dropped once days show). Negative or NaN → `-`; under a second → `0s`.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return '-';
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  s -= d * 86_400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return `${d}d ${h}h ${m}m`;
  if (h > 0) return `${h}h ${m}m ${s}s`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

/** `iso` relative to `now`: "3 minutes ago" (date-fns, strict units). `-` for null/invalid. */
export function formatAgo(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '-';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return '-';
  // A clock slightly ahead on the server must not print "in 1 second".
  if (t.getTime() >= now.getTime()) return '0 seconds ago';
  return formatDistanceStrict(t, now, { addSuffix: true });
}

/** The colour of each status word: success green, failure red, cancel yellow, live cyan, waiting plain. */
const STATUS_COLOR: { readonly [S in AnyStatus]: 'green' | 'red' | 'yellow' | 'cyan' | null } = {
  PENDING: null,
  STARTING: 'cyan',
  RUNNING: 'cyan',
  RECOVERING: 'cyan',
  CANCELLING: 'yellow',
  SUCCEEDED: 'green',
  CANCELLED: 'yellow',
  FAILED: 'red',
  FAILED_SETUP: 'red',
  FAILED_PRECHECKS: 'red',
  FAILED_NO_RESOURCE: 'red',
  FAILED_CONTROLLER: 'red',
  LOST: 'red',
};

/** Colours a status word (STATUS_COLOR); a name this CLI does not know is red when it says FAILED…, else plain. */
export function colorStatus(status: string, c: Colors): string {
  const color = Object.hasOwn(STATUS_COLOR, status) ? STATUS_COLOR[status as AnyStatus] : status.startsWith('FAILED') ? 'red' : null;
  return color ? c[color](status) : status;
}

/** What an attempt's end says, as the follow prints it. */
type AttemptEnd = { status: AttemptStatus; exitCode: number | null; reason: string | null };
const endedAs = (who: string, m: AttemptEnd) => `│   ${who} ended (status: ${m.status})`;
/** The follow's line for each way an attempt ends (a Record over AttemptStatus: tsc names it for a new one). */
const ATTEMPT_END: { readonly [S in AttemptStatus]: (who: string, m: AttemptEnd, onRank: string, c: Colors) => string } = {
  FAILED: (who, m, onRank, c) => c.red(`│   ${who} failed with exit code ${m.exitCode ?? '?'}${onRank}`),
  FAILED_SETUP: (who, m, onRank, c) => c.red(`│   ${who} setup failed with exit code ${m.exitCode ?? '?'}${onRank}`),
  LOST: (who, m, _onRank, c) => c.yellow(`│   ${who} was lost${m.reason ? `: ${m.reason}` : ''}`),
  SUCCEEDED: (who) => `│   ${who} succeeded`,
  CANCELLED: (who, m) => `│   ${who} cancelled${m.exitCode != null ? ` (exit code ${m.exitCode})` : ''}`,
  STARTING: endedAs,
  RUNNING: endedAs,
  CANCELLING: endedAs,
};

/**
 * `│   Task 0 attempt 1 failed with exit code 3`: the line `jobdeck logs -f` prints when an
 * attempt ends (`who` names it, `onRank` the rank of a multi-node attempt's first failure).
 */
export function attemptEndLine(who: string, m: AttemptEnd, onRank: string, c: Colors): string {
  return (Object.hasOwn(ATTEMPT_END, m.status) ? ATTEMPT_END[m.status] : endedAs)(who, m, onRank, c);
}

/** `Task 0 (name)` or `Task 0` when the task has no name. */
export function taskLabel(index: number, name: string | null | undefined): string {
  return name ? `Task ${index} (${name})` : `Task ${index}`;
}
