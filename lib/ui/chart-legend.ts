/**
 * What the Insights charts' legends say (uPlot calls a series' `value` with the bucket under the
 * cursor, or idx null when the cursor is off the chart, where its default prints "--"): at a
 * bucket, that bucket's figure; off the chart, the whole range's (GET /api/insights `totals`), so
 * a legend always reads as a number (docs/design.md §8 "Charts").
 */
import { format } from 'date-fns';

/** uPlot's Series.value: (the plot, the raw value, the series' index, the bucket's index or null). */
export type LegendValue = (u: unknown, v: number | null, seriesIdx: number, idx: number | null) => string;

/**
 * A data series' legend: the bucket's value through `fmt`, "none" for a bucket without jobs
 * (a percentile's null); off the chart `total` (null: "none").
 */
export function seriesLegend(total: number | null, fmt: (n: number) => string): LegendValue {
  return (_u, v, _s, idx) => {
    const shown = idx === null ? total : v;
    return shown === null || shown === undefined ? 'none' : fmt(shown);
  };
}

/**
 * The time axis' legend: the bucket under the cursor — its local start and length ("Mar 10 10:15,
 * 15 minutes") — or, off the chart, what the other figures then are: `range` ("all of the last
 * 24 h").
 * @param bucketText a bucket's length in words ("15 minutes", "hour").
 */
export function bucketLegend(range: string, bucketText: string): LegendValue {
  return (_u, v, _s, idx) => (idx === null || v === null ? range : `${format(v * 1000, 'MMM d HH:mm')}, ${bucketText}`);
}
