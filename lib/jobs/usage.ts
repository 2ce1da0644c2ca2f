/**
 * Resource usage of an attempt, the pure part (docs/design.md §7, "Resource usage"): the
 * bounded series a sampler appends to, and the figures shown from it (average cores, seff-like
 * efficiency). No I/O; browser-safe.
 */

/**
 * One point of an attempt's series: `[t, cpuMs, rssBytes, procs, samples]` — when (ms since the
 * epoch), its CPU time so far (user + system, ms, cumulative, so the rate between any two points
 * is exact whatever was merged between them), its resident memory (bytes, summed over the tree),
 * how many processes it had, and how many samples the point stands for. A merged point keeps the
 * later time and CPU total and the higher memory and process count: a peak is never averaged away.
 */
export type UsagePoint = [t: number, cpuMs: number, rssBytes: number, procs: number, samples: number];

/** Most points a series holds (at 5 s a sample: one hour at full resolution, then coarser). */
export const USAGE_MAX_POINTS = 720;

/**
 * Points per stored part of a series (AttemptUsage.part): a sample rewrites only the last part —
 * about a kilobyte, stored inline — so a round's write does not grow with the series (a whole
 * 700-point series per attempt made a 1,000-attempt round ~2 s on PGlite; docs/design.md §7).
 */
export const USAGE_PART_POINTS = 24;

/** A series cut into its stored parts, in order (the last may be shorter; none when empty). */
export function seriesParts(points: readonly UsagePoint[]): UsagePoint[][] {
  const parts: UsagePoint[][] = [];
  for (let i = 0; i < points.length; i += USAGE_PART_POINTS) parts.push(points.slice(i, i + USAGE_PART_POINTS));
  return parts;
}

/** Two neighbouring points as one (see UsagePoint). */
export function mergePoints(a: UsagePoint, b: UsagePoint): UsagePoint {
  return [b[0], b[1], Math.max(a[2], b[2]), Math.max(a[3], b[3]), a[4] + b[4]];
}

/** Halves a series' resolution by merging neighbours pairwise; an odd last point is kept as it is. */
export function halveSeries(points: readonly UsagePoint[]): UsagePoint[] {
  const out: UsagePoint[] = [];
  for (let i = 0; i + 1 < points.length; i += 2) out.push(mergePoints(points[i], points[i + 1]));
  if (points.length % 2 === 1) out.push(points[points.length - 1]);
  return out;
}

/** What placeSample needs of a stored series: its length, its first point's samples, its last point. */
export interface SeriesShape {
  length: number;
  /** Samples per point at the series' resolution (its first point's count; 1 before any halving). */
  weight: number;
  last: UsagePoint | null;
}

/**
 * Where a new sample goes, so that a series stays evenly spaced and bounded: `merge` into the last
 * point while that point stands for fewer samples than the series' resolution (after a halving,
 * two samples make a point, then four…), else `append` a point, or `halve` the series first when
 * it holds `max` points.
 */
export function placeSample(shape: SeriesShape, max = USAGE_MAX_POINTS): 'append' | 'merge' | 'halve' {
  if (!shape.last) return 'append';
  if (shape.last[4] < shape.weight) return 'merge';
  return shape.length < max ? 'append' : 'halve';
}

/** The shape of a series held whole. */
export function shapeOf(points: readonly UsagePoint[]): SeriesShape {
  return { length: points.length, weight: points[0]?.[4] ?? 1, last: points[points.length - 1] ?? null };
}

/**
 * Adds a sample (`samples` 1) to a series of at most `max` points (see placeSample).
 * @returns the new series (the input is not changed) and what was done to the stored one.
 * @throws RangeError for `max` < 2.
 */
export function appendSample(points: readonly UsagePoint[], p: UsagePoint, max = USAGE_MAX_POINTS): { points: UsagePoint[]; op: 'append' | 'merge' | 'halve' } {
  if (!(max >= 2)) throw new RangeError(`appendSample: max must be ≥ 2, got ${max}`);
  const op = placeSample(shapeOf(points), max);
  if (op === 'append') return { points: [...points, p], op };
  if (op === 'merge') return { points: [...points.slice(0, -1), mergePoints(points[points.length - 1], p)], op };
  const halved = halveSeries(points);
  const again = placeSample(shapeOf(halved), max);
  return { points: again === 'merge' ? [...halved.slice(0, -1), mergePoints(halved[halved.length - 1], p)] : [...halved, p], op };
}

/** CPU use between consecutive points, in cores (CPU ms per wall ms), one value per point after the first. */
export function coresSeries(points: readonly UsagePoint[]): Array<{ t: number; cores: number }> {
  const out: Array<{ t: number; cores: number }> = [];
  for (let i = 1; i < points.length; i++) {
    const dt = points[i][0] - points[i - 1][0];
    if (dt <= 0) continue;
    out.push({ t: points[i][0], cores: Math.max(0, points[i][1] - points[i - 1][1]) / dt });
  }
  return out;
}

/** What an attempt used, as its row holds it (null fields: not recorded). */
export interface UsageTotals {
  cpuMs: number | null;
  peakRssBytes: number | null;
}

/** The seff-like figures of an attempt (see usageFigures). */
export interface UsageFigures {
  /** CPU time, user + system, in seconds. */
  cpuSeconds: number;
  /** Average cores over the wall time (cpuSeconds ÷ wall seconds); null without a wall time. */
  averageCores: number | null;
  /** cpuSeconds ÷ (cpus × wall seconds), 0–1 (may pass 1 when a task uses more than it asked); null without a wall time. */
  cpuEfficiency: number | null;
  /** Peak resident memory, bytes; null when not recorded. */
  peakRssBytes: number | null;
  /** peakRssBytes ÷ requested memory; null when no memory was requested (or no peak). */
  memoryEfficiency: number | null;
}

/**
 * Efficiency figures like Slurm's `seff`: CPU = CPU-seconds ÷ (cpus × wall seconds), memory =
 * peak ÷ requested. Wall time is from the attempt's start to its end (or `now` while it runs).
 * @param memoryBytes the task's requested memory in bytes (null: none requested).
 * @returns null when no CPU time was recorded (never zeros for "not recorded").
 */
export function usageFigures(
  totals: UsageTotals,
  opts: { cpus: number; memoryBytes: number | null; startedAt: Date | null; endedAt: Date | null; now: Date },
): UsageFigures | null {
  if (totals.cpuMs === null) return null;
  const cpuSeconds = totals.cpuMs / 1000;
  const start = opts.startedAt?.getTime();
  const end = (opts.endedAt ?? opts.now).getTime();
  const wallS = start === undefined ? null : (end - start) / 1000;
  const averageCores = wallS && wallS > 0 ? cpuSeconds / wallS : null;
  return {
    cpuSeconds,
    averageCores,
    cpuEfficiency: averageCores === null || !(opts.cpus > 0) ? null : averageCores / opts.cpus,
    peakRssBytes: totals.peakRssBytes,
    memoryEfficiency: totals.peakRssBytes !== null && opts.memoryBytes ? totals.peakRssBytes / opts.memoryBytes : null,
  };
}

/** Bytes as B / KiB / MiB / GiB (one decimal past B); "-" for null. */
export function formatBytes(n: number | null): string {
  if (n === null) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** A ratio as a whole percentage ("12 %"); "-" for null. */
export function percent(r: number | null): string {
  return r === null ? '-' : `${Math.round(r * 100)} %`;
}

/** What usageEfficiencyText needs: the figures and the request. */
export interface EfficiencyInput {
  requested: { cpus: number; memoryBytes: number | null };
  efficiency: { cpu: number | null; memory: number | null };
}

/** seff's wording: "12 % of 8 CPUs". */
export function cpuEfficiencyText(u: EfficiencyInput): string {
  const cpus = u.requested.cpus;
  return `${percent(u.efficiency.cpu)} of ${cpus} CPU${cpus === 1 ? '' : 's'}`;
}

/** "20 % of 1.0 GiB"; "-" when no memory was requested. */
export function memoryEfficiencyText(u: EfficiencyInput): string {
  return u.requested.memoryBytes === null ? '-' : `${percent(u.efficiency.memory)} of ${formatBytes(u.requested.memoryBytes)}`;
}
