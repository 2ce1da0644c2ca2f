/**
 * The log compressor's settings (docs/design.md §8 "Compressed logs", README "Configuration"),
 * from the environment:
 *
 *   JOBDECK_COMPRESS_LOGS_AFTER   a finished attempt's logs are compressed this long after it
 *                                 ended: a duration — `0`, seconds (`3600`) or with a unit
 *                                 (`90s`, `30m`, `1h`, `2d`), at most 365 days — or `off`;
 *                                 default `1h` (recently finished logs, the ones being read,
 *                                 stay plain files)
 *   JOBDECK_COMPRESS_INTERVAL_MS  how often a round looks for logs to compress (default 60000,
 *                                 100–86400000)
 */

/** Env by name (process.env or a plain object in tests). */
type Env = Readonly<Record<string, string | undefined>>;

/** The compressor's settings. */
export interface CompressSettings {
  /** How long after its attempt ended a log is compressed (ms); null: never (`off`). */
  afterMs: number | null;
  /** Between rounds (ms). */
  intervalMs: number;
}

const UNIT_MS: Record<string, number> = { '': 1000, ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const MAX_AFTER_MS = 365 * 86_400_000;

function after(env: Env): number | null {
  const name = 'JOBDECK_COMPRESS_LOGS_AFTER';
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return 3_600_000;
  if (raw === 'off') return null;
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d)?$/.exec(raw);
  const ms = m ? Math.round(Number(m[1]) * UNIT_MS[m[2] ?? '']) : NaN;
  if (!Number.isFinite(ms) || ms > MAX_AFTER_MS) throw new Error(`${name}: expected "off" or a duration from 0 to 365d (seconds, or with a unit: 90s, 30m, 1h, 2d), got "${env[name]}"`);
  return ms;
}

function interval(env: Env): number {
  const name = 'JOBDECK_COMPRESS_INTERVAL_MS';
  const raw = env[name]?.trim();
  if (!raw) return 60_000;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || n < 100 || n > 86_400_000) throw new Error(`${name}: expected an integer from 100 to 86400000, got "${env[name]}"`);
  return n;
}

/** Reads the settings. @throws Error naming the variable when a value is malformed or out of range. */
export function compressSettingsFromEnv(env: Env = process.env): CompressSettings {
  return { afterMs: after(env), intervalMs: interval(env) };
}
