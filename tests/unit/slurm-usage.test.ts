import { describe, expect, it } from 'vitest';
import { parseSlurmDuration, parseSlurmSize, parseSstat } from '../../lib/executors/slurm/usage';

describe('sstat parsing', () => {
  it('reads Slurm CPU times and sizes', () => {
    expect(parseSlurmDuration('00:00:03')).toBe(3000);
    expect(parseSlurmDuration('01:02.500')).toBe(62_500);
    expect(parseSlurmDuration('2-01:00:00')).toBe(49 * 3_600_000);
    expect(parseSlurmDuration('')).toBeNull();
    expect(parseSlurmSize('117292K')).toBe(117292 * 1024);
    expect(parseSlurmSize('1.5G')).toBe(1.5 * 2 ** 30);
    expect(parseSlurmSize('2048')).toBe(2048);
    expect(parseSlurmSize('x')).toBeNull();
  });

  it('sums the steps of each job; a job without usage lines is absent (not recorded), never zeros', () => {
    const out = [
      '74.batch|cpu=00:00:03,energy=0,fs/disk=1690195,mem=117292K,pages=0,vmem=121564K|1',
      '75.batch|cpu=00:00:01,mem=1024K|1',
      '75.0|cpu=00:00:02,mem=2048K|2',
      'garbage',
      '',
    ].join('\n');
    const m = parseSstat(out);
    expect(m.get('74')).toEqual({ cpuMs: 3000, rssBytes: 117292 * 1024, procs: 1 });
    expect(m.get('75')).toEqual({ cpuMs: 3000, rssBytes: 3072 * 1024, procs: 3 });
    expect(m.has('76')).toBe(false);
    expect(parseSstat('').size).toBe(0);
  });
});
