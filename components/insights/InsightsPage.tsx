'use client';
/**
 * The charts page (/insights): jobs started and ended per bucket by status, queue wait and run
 * duration p50/p95 over time, the busiest job names and GPU-hours by user and queue, for the last
 * 24 h, 7 d or 30 d. The database computes the figures (GET /api/insights); uPlot draws them.
 * Below, the live servers (ServersPanel).
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type uPlot from 'uplot';
import type { InsightsView } from '@/lib/api/types';
import type { TerminalJobStatus } from '@/lib/jobs/status';
import { api } from '@/lib/ui/api';
import { bucketLegend, seriesLegend } from '@/lib/ui/chart-legend';
import { formatDuration } from '@/lib/ui/format';
import { UPlotChart } from '../charts/UPlotChart';
import { ServersPanel } from './ServersPanel';

const RANGES: Array<{ id: InsightsView['range']; label: string }> = [
  { id: '24h', label: '24 h' },
  { id: '7d', label: '7 d' },
  { id: '30d', label: '30 d' },
];

/** A colour per final status (the badge tones; a Record, so tsc names this table for a new one), then a palette for any other. */
const STATUS_COLOR: { readonly [S in TerminalJobStatus]: string } = { SUCCEEDED: '#16a34a', FAILED: '#dc2626', FAILED_SETUP: '#ea580c', CANCELLED: '#6b7280', FAILED_NO_RESOURCE: '#ca8a04', FAILED_CONTROLLER: '#9333ea', FAILED_PRECHECKS: '#db2777' };
const colorOf = (s: string): string => (Object.hasOwn(STATUS_COLOR, s) ? STATUS_COLOR[s as TerminalJobStatus] : '#0ea5e9');

/** Dots on percentile lines: a bucket with jobs stands out even when it is the only one. */
const DOTS: uPlot.Series.Points = { show: true, size: 6 };

/** A bucket's length in words: "15 minutes", "hour", "6 hours", "day". */
const bucketText = (s: number) => (s % 86_400 === 0 ? (s === 86_400 ? 'day' : `${s / 86_400} days`) : s % 3600 === 0 ? (s === 3600 ? 'hour' : `${s / 3600} hours`) : `${Math.round(s / 60)} minutes`);

const seconds = (v: number | null) => (v === null ? '—' : formatDuration(v * 1000));
const count = (n: number) => String(n);
const duration = (s: number) => formatDuration(s * 1000);

/** The range in a legend's words, off the chart: "all of the last 24 h". */
const rangeText = (r: InsightsView['range']) => `all of the last ${RANGES.find((x) => x.id === r)?.label ?? r}`;

function chartOptions(title: string, x: uPlot.Series, series: uPlot.Series[], yValues?: (v: number) => string): Omit<uPlot.Options, 'width'> {
  return {
    title,
    height: 200,
    // From zero, so that a small p95 does not look like a large one.
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, 1e-3) * 1.1] } },
    series: [x, ...series],
    axes: [{}, { size: 56, values: yValues ? (_u, vals) => vals.map((v) => yValues(v)) : undefined }],
    legend: { show: true },
  };
}

function Charts({ v }: { v: InsightsView }) {
  const charts = useMemo(() => {
    const x = v.buckets.map((b) => Date.parse(b) / 1000);
    const statuses = Object.keys(v.ended);
    const t = v.totals;
    // Legends: the bucket under the cursor, else the whole range (totals), never uPlot's "--".
    const time: uPlot.Series = { label: 'bucket', value: bucketLegend(rangeText(v.range), bucketText(v.bucketSeconds)) };
    const bars = (fill: string, total: number): uPlot.Series => ({ stroke: fill, fill: `${fill}33`, width: 1.5, points: { show: false }, value: seriesLegend(total, count) });
    const line = (label: string, stroke: string, total: number | null): uPlot.Series => ({ label, stroke, width: 1.5, spanGaps: true, points: DOTS, value: seriesLegend(total, duration) });
    return {
      throughput: {
        options: chartOptions('Jobs started and ended', time, [{ label: 'started', ...bars('#3b82f6', t.started) }, ...statuses.map((s) => ({ label: s.toLowerCase(), ...bars(colorOf(s), t.ended[s] ?? 0) }))]),
        data: [x, v.started, ...statuses.map((s) => v.ended[s])] as uPlot.AlignedData,
      },
      wait: {
        options: chartOptions('Queue wait', time, [line('p50', '#3b82f6', t.queueWait.p50), line('p95', '#f59e0b', t.queueWait.p95)], duration),
        data: [x, v.queueWait.p50, v.queueWait.p95] as uPlot.AlignedData,
      },
      run: {
        options: chartOptions('Run duration', time, [line('p50', '#16a34a', t.runDuration.p50), line('p95', '#dc2626', t.runDuration.p95)], duration),
        data: [x, v.runDuration.p50, v.runDuration.p95] as uPlot.AlignedData,
      },
    };
  }, [v]);
  const started = v.started.reduce((a, b) => a + b, 0);
  const ended = Object.values(v.ended).reduce((n, l) => n + l.reduce((a, b) => a + b, 0), 0);
  const waitP95 = Math.max(0, ...v.queueWait.p95.filter((p): p is number => p !== null));
  return (
    <>
      <p className="muted" data-testid="insights-summary">
        {started} started, {ended} ended · worst p95 queue wait {started ? seconds(waitP95) : '—'}
      </p>
      <div className="insights-grid">
        <div className="card insights-chart">
          <UPlotChart options={charts.throughput.options} data={charts.throughput.data} label={`Jobs started (${started}) and ended (${ended}) per ${bucketText(v.bucketSeconds)}`} testId="chart-throughput" />
        </div>
        <div className="card insights-chart">
          <UPlotChart options={charts.wait.options} data={charts.wait.data} label="Queue wait p50 and p95 over time" testId="chart-wait" />
        </div>
        <div className="card insights-chart">
          <UPlotChart options={charts.run.options} data={charts.run.data} label="Run duration p50 and p95 over time" testId="chart-run" />
        </div>
        <div className="card insights-chart">
          <h2 className="insights-h2">Busiest job names</h2>
          {v.busiest.length === 0 ? (
            <p className="muted">No jobs in this range.</p>
          ) : (
            <table className="insights-table" data-testid="busiest">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Jobs</th>
                  <th>Failed</th>
                  <th>Run time</th>
                </tr>
              </thead>
              <tbody>
                {v.busiest.map((b) => (
                  <tr key={b.name}>
                    <td className="mono">{b.name}</td>
                    <td>{b.jobs}</td>
                    <td>{b.failed}</td>
                    <td>{formatDuration(b.runSeconds * 1000)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        <div className="card insights-chart">
          <h2 className="insights-h2">GPU-hours by user and queue</h2>
          {v.gpuHours.length === 0 ? (
            <p className="muted">No GPUs used in this range.</p>
          ) : (
            <table className="insights-table" data-testid="gpu-hours">
              <thead>
                <tr>
                  <th>User</th>
                  <th>Queue</th>
                  <th>GPU-hours</th>
                  <th>GPUs now</th>
                </tr>
              </thead>
              <tbody>
                {v.gpuHours.map((g) => (
                  <tr key={`${g.user ?? ''}/${g.queue}`}>
                    <td className="mono">{g.user ?? '—'}</td>
                    <td className="mono">{g.queue}</td>
                    <td>{g.gpuHours < 10 ? g.gpuHours.toFixed(2) : g.gpuHours.toFixed(1)}</td>
                    <td>{g.gpusNow}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
    </>
  );
}

export function InsightsPage() {
  const [range, setRange] = useState<InsightsView['range']>('24h');
  const q = useQuery({ queryKey: ['insights', range], queryFn: ({ signal }) => api.insights(range, signal), placeholderData: keepPreviousData, refetchInterval: 60_000 });
  return (
    <div className="insights-page">
      <div className="page-head">
        <h1>Insights</h1>
        <span className="grow" />
        <div role="group" aria-label="Time range" className="range-picker">
          {RANGES.map((r) => (
            <button key={r.id} type="button" className="btn btn-sm" aria-pressed={range === r.id} onClick={() => setRange(r.id)} data-testid={`range-${r.id}`}>
              {r.label}
            </button>
          ))}
        </div>
      </div>
      {q.isError ? (
        <div className="card empty" role="alert">
          Could not load the figures: {(q.error as Error).message}
        </div>
      ) : q.data ? (
        <Charts v={q.data} />
      ) : (
        <div className="card muted">Loading…</div>
      )}
      <ServersPanel />
    </div>
  );
}
