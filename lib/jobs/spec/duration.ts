/**
 * `max_duration` (SkyPilot's task key, docs/spec.md "max_duration"): how long one attempt of a
 * task may run before it is stopped and the task ends FAILED. Written with units — `10h`, `90m`,
 * `5s`, `1h30m`, `2d` — never a bare number (minutes or seconds? the reader cannot tell). Pure.
 */
import { z } from 'zod';

/** Longest max_duration accepted: 366 days. */
export const MAX_DURATION_MS = 366 * 24 * 3600 * 1000;

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** The message for a value that is not a duration. */
export const DURATION_EXPECTED = 'expected a duration with units, e.g. 10h, 90m, 5s or 1h30m (d, h, m, s), from 1s to 366d';

/**
 * Reads a duration (`10h`, `90m`, `1h30m`, `5s`, `2d`; units d h m s, each at most once, largest
 * first; whole numbers) in ms; a string saying what is wrong with it.
 */
export function parseDuration(v: unknown): number | string {
  if (typeof v !== 'string') return DURATION_EXPECTED;
  const text = v.trim().toLowerCase();
  const m = /^(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?$/.exec(text);
  if (!m || text === '') return DURATION_EXPECTED;
  const ms = ['d', 'h', 'm', 's'].reduce((sum, u, i) => sum + (m[i + 1] ? Number(m[i + 1]) * UNIT_MS[u] : 0), 0);
  if (!(ms >= 1000) || ms > MAX_DURATION_MS) return DURATION_EXPECTED;
  return ms;
}

/** A duration in ms as `max_duration` is written: `2h`, `1h30m`, `5s`, `1d2h` (whole seconds). */
export function formatDuration(ms: number): string {
  let left = Math.max(0, Math.round(ms / 1000));
  let out = '';
  for (const [u, size] of [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    const n = Math.floor(left / size);
    if (n > 0) out += `${n}${u}`;
    left -= n * size;
  }
  return out || '0s';
}

/** `max_duration` in the task schema: the duration in ms. */
export const MaxDurationSchema = z.unknown().transform((v, ctx) => {
  const ms = parseDuration(v);
  if (typeof ms === 'string') {
    ctx.addIssue({ code: 'custom', message: ms });
    return z.NEVER;
  }
  return ms;
});
