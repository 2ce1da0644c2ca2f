/**
 * The log compressor's settings (docs/design.md §8 "Compressed logs"), read from the environment
 * through lib/config.ts: JOBDECK_COMPRESS_LOGS_AFTER (a duration, or `off`; default `1h`, so
 * recently finished logs, the ones being read, stay plain files) and JOBDECK_COMPRESS_INTERVAL_MS
 * (their grammar and bounds are in its table, and in the README's).
 */
import { setting, type Env } from '../config';

/** The compressor's settings. */
export interface CompressSettings {
  /** How long after its attempt ended a log is compressed (ms); null: never (`off`). */
  afterMs: number | null;
  /** Between rounds (ms). */
  intervalMs: number;
}

/** Reads the settings. @throws ConfigError naming the variable when a value is malformed or out of range. */
export function compressSettingsFromEnv(env: Env = process.env): CompressSettings {
  return { afterMs: setting('JOBDECK_COMPRESS_LOGS_AFTER', env), intervalMs: setting('JOBDECK_COMPRESS_INTERVAL_MS', env) };
}
