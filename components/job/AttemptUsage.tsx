'use client';
/**
 * What an attempt used, on the job page: two sparklines (CPU in cores, memory) with what the task
 * asked for as a line, peak and average, and seff-like efficiency ("CPU efficiency 12 % of 8
 * CPUs"). An attempt with nothing recorded says so — never zeros.
 */
import { useMemo } from 'react';
import type uPlot from 'uplot';
import type { AttemptUsageView } from '@/lib/api/types';
import { coresSeries, cpuEfficiencyText, formatBytes, memoryEfficiencyText } from '@/lib/jobs/usage';
import { UPlotChart } from '../charts/UPlotChart';

const SPARK: Omit<uPlot.Options, 'width' | 'series'> = {
  height: 44,
  legend: { show: false },
  cursor: { show: false },
  axes: [{ show: false }, { show: false }],
  scales: { x: { time: true } },
  padding: [4, 2, 2, 2],
};

function spark(stroke: string, fill: string, max: number): Omit<uPlot.Options, 'width'> {
  return {
    ...SPARK,
    scales: { x: { time: true }, y: { range: [0, max] } },
    // The request as a dashed grey line (a canvas takes no CSS variable).
    series: [{}, { stroke, fill, width: 1.5, points: { show: false } }, { stroke: '#9ca3af', dash: [4, 3], width: 1, points: { show: false } }],
  };
}

export function AttemptUsage({ u, id }: { u: AttemptUsageView | null; id: string }) {
  const charts = useMemo(() => {
    if (!u || u.series.length < 2) return null;
    const cores = coresSeries(u.series);
    const t = cores.map((c) => c.t / 1000);
    const coreValues = cores.map((c) => c.cores);
    const mem = u.series.slice(1).map((p) => p[2]);
    const cpuMax = Math.max(u.requested.cpus, ...coreValues) * 1.1;
    const memReq = u.requested.memoryBytes;
    const memMax = Math.max(memReq ?? 0, ...mem) * 1.1 || 1;
    return {
      cpu: { options: spark('#3b82f6', 'rgba(59,130,246,0.15)', cpuMax), data: [t, coreValues, t.map(() => u.requested.cpus)] as uPlot.AlignedData },
      mem: { options: spark('#a855f7', 'rgba(168,85,247,0.15)', memMax), data: [t, mem, t.map(() => memReq)] as uPlot.AlignedData },
      peakCores: Math.max(...coreValues),
      avgMem: mem.reduce((a, b) => a + b, 0) / mem.length,
    };
  }, [u]);
  if (!u) {
    return (
      <div className="usage muted" data-testid={`usage-${id}`}>
        Resource usage not recorded
      </div>
    );
  }
  return (
    <div className="usage" data-testid={`usage-${id}`}>
      <div className="usage-row">
        <span className="usage-label">CPU</span>
        {charts ? <UPlotChart className="spark" options={charts.cpu.options} data={charts.cpu.data} label={`CPU in cores over the attempt; ${u.requested.cpus} requested`} testId={`spark-cpu-${id}`} /> : <span className="spark muted">—</span>}
        <span className="usage-figures" data-testid={`usage-cpu-${id}`}>
          CPU efficiency {cpuEfficiencyText(u)} · avg {u.averageCores === null ? '—' : u.averageCores.toFixed(2)} cores{charts ? ` · peak ${charts.peakCores.toFixed(2)}` : ''} · {u.cpuSeconds.toFixed(1)} CPU-s
        </span>
      </div>
      <div className="usage-row">
        <span className="usage-label">Memory</span>
        {charts ? <UPlotChart className="spark" options={charts.mem.options} data={charts.mem.data} label={`Memory over the attempt${u.requested.memoryBytes ? `; ${formatBytes(u.requested.memoryBytes)} requested` : ''}`} testId={`spark-mem-${id}`} /> : <span className="spark muted">—</span>}
        <span className="usage-figures" data-testid={`usage-mem-${id}`}>
          peak {formatBytes(u.peakRssBytes)}
          {charts ? ` · avg ${formatBytes(charts.avgMem)}` : ''}
          {u.requested.memoryBytes !== null ? ` · memory efficiency ${memoryEfficiencyText(u)}` : ''}
        </span>
      </div>
    </div>
  );
}
