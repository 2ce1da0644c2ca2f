import Table from 'cli-table3';
import type { JobDetail } from '../api/types';
import { cpuEfficiencyText, formatBytes, memoryEfficiencyText } from '../jobs/usage';

/**
 * The resource-usage table of `jobdeck status ID` (docs/cli.md): per attempt its CPU time,
 * average cores, seff-like CPU efficiency ("12 % of 8 CPUs"), peak memory and memory efficiency.
 * An attempt with nothing recorded says "not recorded", never zeros.
 */

/** The table's lines (no trailing spaces); empty when the job has no attempt yet. */
export function renderUsage(job: JobDetail, chars: Record<string, string>): string[] {
  const table = new Table({
    head: ['TASK', 'ATTEMPT', 'CPU TIME', 'AVG CORES', 'CPU EFFICIENCY', 'PEAK MEMORY', 'MEMORY EFFICIENCY', 'PROCS'],
    chars,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
  });
  let rows = 0;
  for (const t of job.tasks) {
    for (const a of t.attemptList) {
      rows++;
      const u = a.usage;
      if (!u) {
        table.push([String(t.index), String(a.number), { colSpan: 6, content: 'not recorded' }]);
        continue;
      }
      table.push([
        String(t.index),
        String(a.number),
        `${u.cpuSeconds.toFixed(1)} s`,
        u.averageCores === null ? '-' : u.averageCores.toFixed(2),
        cpuEfficiencyText(u),
        formatBytes(u.peakRssBytes),
        memoryEfficiencyText(u),
        u.peakProcs === null ? '-' : String(u.peakProcs),
      ]);
    }
  }
  if (rows === 0) return [];
  return ['', 'Resource usage', ...table.toString().split('\n').map((l) => l.replace(/\s+$/, ''))];
}
