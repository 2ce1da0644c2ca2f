/**
 * The Insights legends (lib/ui/chart-legend.ts) as uPlot calls them: with the bucket under the
 * cursor, the bucket's figure; with the cursor off the chart (idx null, where uPlot prints "--"),
 * the whole range's total; "none" for a bucket or a range without jobs.
 */
import { describe, expect, it } from 'vitest';
import { format } from 'date-fns';
import { bucketLegend, seriesLegend } from '../../lib/ui/chart-legend';
import { formatDuration } from '../../lib/ui/format';

describe('chart legends', () => {
  it("a data series: the bucket's value at the cursor, the range's total off the chart", () => {
    const started = seriesLegend(7, String);
    expect(started(null, 3, 1, 95)).toBe('3');
    expect(started(null, 0, 1, 0)).toBe('0');
    expect(started(null, null, 1, null)).toBe('7');
    const p95 = seriesLegend(29, (s) => formatDuration(s * 1000));
    expect(p95(null, 120, 2, 40)).toBe(formatDuration(120_000));
    expect(p95(null, null, 2, null)).toBe(formatDuration(29_000));
    // A bucket no job started in has no percentile; a range without jobs neither.
    expect(p95(null, null, 2, 3)).toBe('none');
    expect(seriesLegend(null, String)(null, null, 1, null)).toBe('none');
  });

  it("the time axis: the bucket's start and length at the cursor, the range off the chart", () => {
    const time = bucketLegend('all of the last 24 h', '15 minutes');
    const t = Date.parse('2026-03-10T10:15:00.000Z') / 1000;
    expect(time(null, t, 0, 41)).toBe(`${format(t * 1000, 'MMM d HH:mm')}, 15 minutes`);
    expect(time(null, null, 0, null)).toBe('all of the last 24 h');
  });
});
