'use client';
/** Relative time ("5 minutes ago") with the exact local time on hover, and live durations. */
import { elapsedMs, formatDuration, formatExact, formatRelative } from '@/lib/ui/format';

export function RelativeTime({ iso, now }: { iso: string | null; now: number }) {
  if (!iso) return <span className="faint">—</span>;
  return (
    <time dateTime={iso} title={formatExact(iso)}>
      {formatRelative(iso, now)}
    </time>
  );
}

export function Elapsed({ start, end, now }: { start: string | null; end: string | null; now: number }) {
  const ms = elapsedMs(start, end, now);
  if (ms === null) return <span className="faint">—</span>;
  return <span title={start ? `from ${formatExact(start)}${end ? ` to ${formatExact(end)}` : ' (still running)'}` : undefined}>{formatDuration(ms)}</span>;
}
