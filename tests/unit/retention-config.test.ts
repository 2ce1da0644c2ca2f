/** The retention policy's environment (lib/monitor/retention-config.ts): defaults, units, clear errors naming the variable. */
import { describe, expect, it } from 'vitest';
import { retentionPolicyFromEnv } from '../../lib/monitor/retention-config';

describe('retention policy from the environment', () => {
  it('is off by default and reads days, sizes with units, the interval and the batch', () => {
    expect(retentionPolicyFromEnv({})).toEqual({ logsDays: null, logsBytes: null, jobsDays: null, intervalMs: 600_000, batch: 100 });
    const p = retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_DAYS: '30', JOBDECK_RETAIN_LOGS_BYTES: '20GiB', JOBDECK_RETAIN_JOBS_DAYS: ' 365 ', JOBDECK_RETENTION_INTERVAL_MS: '60000', JOBDECK_RETENTION_BATCH: '500' });
    expect(p).toEqual({ logsDays: 30, logsBytes: 20 * 1024 ** 3, jobsDays: 365, intervalMs: 60_000, batch: 500 });
    expect(retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_BYTES: '500MB' }).logsBytes).toBe(500e6);
    expect(retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_BYTES: '1.5 TB' }).logsBytes).toBe(1.5e12);
    expect(retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_BYTES: '2000000' }).logsBytes).toBe(2e6);
  });

  it('refuses malformed and out-of-range values, naming the variable', () => {
    expect(() => retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_DAYS: '0' })).toThrow('JOBDECK_RETAIN_LOGS_DAYS: expected an integer from 1 to 36500, got "0"');
    expect(() => retentionPolicyFromEnv({ JOBDECK_RETAIN_JOBS_DAYS: '7d' })).toThrow('JOBDECK_RETAIN_JOBS_DAYS: expected an integer from 1 to 36500, got "7d"');
    expect(() => retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_BYTES: '20 parsecs' })).toThrow(/^JOBDECK_RETAIN_LOGS_BYTES: expected a size of at least 1MB/);
    expect(() => retentionPolicyFromEnv({ JOBDECK_RETAIN_LOGS_BYTES: '1000' })).toThrow(/JOBDECK_RETAIN_LOGS_BYTES/);
    expect(() => retentionPolicyFromEnv({ JOBDECK_RETENTION_INTERVAL_MS: '10' })).toThrow('JOBDECK_RETENTION_INTERVAL_MS: expected an integer from 100 to 86400000, got "10"');
    expect(() => retentionPolicyFromEnv({ JOBDECK_RETENTION_BATCH: '-1' })).toThrow(/JOBDECK_RETENTION_BATCH/);
  });
});
