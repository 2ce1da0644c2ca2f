/** The log compressor's environment (lib/monitor/compress-config.ts): defaults, durations with units, `off`, clear errors naming the variable. */
import { describe, expect, it } from 'vitest';
import { compressSettingsFromEnv } from '../../lib/monitor/compress-config';
import { monitorSettingsFromEnv } from '../../lib/monitor/config';

describe('log compression settings from the environment', () => {
  it('compresses an hour after the end by default, and reads durations, off and the interval', () => {
    expect(compressSettingsFromEnv({})).toEqual({ afterMs: 3_600_000, intervalMs: 60_000 });
    const after = (v: string) => compressSettingsFromEnv({ JOBDECK_COMPRESS_LOGS_AFTER: v }).afterMs;
    expect([after('0'), after('90'), after('90s'), after('30m'), after(' 2H '), after('1.5h'), after('2d'), after('500ms'), after('365d')]).toEqual([0, 90_000, 90_000, 1_800_000, 7_200_000, 5_400_000, 172_800_000, 500, 365 * 86_400_000]);
    expect(after('off')).toBeNull();
    expect(after('OFF')).toBeNull();
    expect(compressSettingsFromEnv({ JOBDECK_COMPRESS_INTERVAL_MS: '200' }).intervalMs).toBe(200);
    expect(monitorSettingsFromEnv({ JOBDECK_COMPRESS_LOGS_AFTER: 'off' }).compress).toEqual({ afterMs: null, intervalMs: 60_000 });
  });

  it('refuses malformed and out-of-range values, naming the variable', () => {
    for (const v of ['soon', '-1h', '1 week', '366d', '1h30m', 'false']) {
      expect(() => compressSettingsFromEnv({ JOBDECK_COMPRESS_LOGS_AFTER: v }), v).toThrow(`JOBDECK_COMPRESS_LOGS_AFTER: expected "off" or a duration from 0 to 365d (seconds, or with a unit: 90s, 30m, 1h, 2d), got "${v}"`);
    }
    expect(() => compressSettingsFromEnv({ JOBDECK_COMPRESS_INTERVAL_MS: '10' })).toThrow('JOBDECK_COMPRESS_INTERVAL_MS: expected an integer from 100 to 86400000, got "10"');
    expect(() => compressSettingsFromEnv({ JOBDECK_COMPRESS_INTERVAL_MS: '1e5' })).toThrow(/JOBDECK_COMPRESS_INTERVAL_MS/);
  });
});
