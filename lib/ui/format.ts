/**
 * Display formatting for the dashboard: durations, relative and exact times, status tones.
 * Pure (the current time is passed in), browser-safe.
 */
import { format, formatDistanceStrict } from 'date-fns';
import { isTerminal, type AnyStatus } from '../jobs/status';

/**
 * A compact duration: `850ms`, `4.2s`, `12s`, `3m 05s`, `2h 03m`, `3d 4h`. Negative → `0s`.
 * @param ms duration in milliseconds
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)}s`;
  const total = Math.floor(s);
  if (total < 60) return `${total}s`;
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${two(m)}m`;
  return `${m}m ${two(sec)}s`;
}

/** ms between two ISO times; `end` null means "still going" (uses `now`, ms epoch). Null when `start` is null. */
export function elapsedMs(start: string | null, end: string | null, now: number): number | null {
  if (!start) return null;
  const a = Date.parse(start);
  const b = end ? Date.parse(end) : now;
  return Number.isFinite(a) && Number.isFinite(b) ? Math.max(0, b - a) : null;
}

/** "just now", "5 minutes ago", "in 2 seconds" (clock skew) relative to `now` (ms epoch). */
export function formatRelative(iso: string | null, now: number): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '—';
  if (Math.abs(now - t) < 5000) return 'just now';
  return formatDistanceStrict(t, now, { addSuffix: true });
}

/** Exact local time with the zone offset: `2025-01-31 14:03:07 +01:00`. */
export function formatExact(iso: string | null): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  return Number.isFinite(t) ? format(t, 'yyyy-MM-dd HH:mm:ss xxx') : '';
}

/** Clock time only, for timelines: `14:03:07`. */
export function formatClock(iso: string | null): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isFinite(t) ? format(t, 'HH:mm:ss') : '—';
}

/** `21:37:13.042` — a local time of day with milliseconds (a status history's events come close together); "—" for none. */
export function formatClockMs(iso: string | null): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isFinite(t) ? format(t, 'HH:mm:ss.SSS') : '—';
}

/** How a status badge is coloured. */
export type StatusTone = 'success' | 'error' | 'warning' | 'running' | 'pending' | 'neutral';

/** The badge tone of each job, task and attempt status. */
const STATUS_TONE: { readonly [S in AnyStatus]: StatusTone } = {
  PENDING: 'pending',
  STARTING: 'pending',
  RUNNING: 'running',
  RECOVERING: 'warning',
  CANCELLING: 'warning',
  SUCCEEDED: 'success',
  CANCELLED: 'neutral',
  FAILED: 'error',
  FAILED_SETUP: 'error',
  FAILED_PRECHECKS: 'error',
  FAILED_NO_RESOURCE: 'error',
  FAILED_CONTROLLER: 'error',
  LOST: 'warning',
};

/** Tone of any job, task or attempt status (STATUS_TONE); a name this page does not know is an error when it says FAILED…, else neutral. */
export function statusTone(status: string): StatusTone {
  if (Object.hasOwn(STATUS_TONE, status)) return STATUS_TONE[status as AnyStatus];
  return status.startsWith('FAILED') ? 'error' : 'neutral';
}

/** A status as people read it: `FAILED_SETUP` → `Failed setup`. */
export function statusLabel(status: string): string {
  const s = status.toLowerCase().replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** True when a job can still be cancelled (not terminal, not already cancelling). */
export function canCancel(status: string): boolean {
  return !isTerminal('job', status) && status !== 'CANCELLING';
}

/** True when a job may be deleted (terminal jobs only; cancel first). */
export function canDelete(status: string): boolean {
  return isTerminal('job', status);
}
