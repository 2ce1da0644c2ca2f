import { describe, expect, it } from 'vitest';
import { lineOrder, planAdmission, planAdmissionReads, type AdmissionInput, type QueueSummary, type WaitingJob } from '../../lib/jobs/capacity';

/**
 * planAdmissionReads() lets the monitor read only part of the lines. The verdicts over that part
 * must be the verdicts over the whole lines. `select` does what the monitor's readWaiting() does
 * against the database, executor after executor (by name, as planAdmission takes them): the
 * first page of the line (priority desc, id asc) without the queues the plan of the earlier
 * executors' rows found full; while `head`,
 * more pages until the plan of what was read so far (earlier executors' rows too) blocks the line
 * — skipping, from the next page on, the queues it found full; one page of each skipped queue;
 * plus the too-big and timed-out jobs.
 */
function select(all: WaitingJob[], common: Omit<AdmissionInput, 'waiting'>, page: number): { rows: WaitingJob[]; reads: number } {
  const out = new Map<number, WaitingJob>();
  let reads = 0;
  for (const executor of [...new Set(all.map((j) => j.executor))].sort()) {
    const line = all.filter((j) => j.executor === executor).sort(lineOrder);
    const summary: QueueSummary = {
      executor,
      count: line.length,
      minCpus: Math.min(...line.map((j) => j.cpus)),
      maxCpus: Math.max(...line.map((j) => j.cpus)),
      oldestSubmittedAtMs: Math.min(...line.map((j) => j.submittedAtMs)),
    };
    const r = planAdmissionReads({ ...common, queue: summary });
    if (!r) continue;
    if (r.all) {
      for (const j of line) out.set(j.id, j);
      reads += line.length;
      continue;
    }
    const skip = new Set(planAdmission({ ...common, waiting: [...out.values()] }).fullQueues);
    const head: WaitingJob[] = [];
    for (;;) {
      const last = head[head.length - 1];
      const p = line.filter((j) => !skip.has(j.queue ?? 'default') && (!last || lineOrder(last, j) < 0)).slice(0, page);
      head.push(...p);
      reads += p.length;
      const plan = planAdmission({ ...common, waiting: [...out.values(), ...head] });
      if (!r.head || p.length < page || plan.blocked.includes(executor)) break;
      for (const q of plan.fullQueues) skip.add(q);
    }
    for (const j of head) out.set(j.id, j);
    for (const q of skip) {
      const p = line.filter((j) => (j.queue ?? 'default') === q).slice(0, page);
      reads += p.length;
      for (const j of p) out.set(j.id, j);
    }
    for (const j of line) {
      if ((r.cpusAbove !== null && j.cpus > r.cpusAbove) || (r.submittedAtOrBefore !== null && j.submittedAtMs <= r.submittedAtOrBefore)) {
        out.set(j.id, j);
        reads++;
      }
    }
  }
  return { rows: [...out.values()], reads };
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('planAdmissionReads (admission reads only the jobs it decides on)', () => {
  it('gives the verdicts of the whole queue over the rows it names (randomized queues)', () => {
    const rand = rng(7);
    const cpuChoices = [0.5, 1, 1, 1, 2, 3, 5];
    for (let round = 0; round < 2000; round++) {
      const n = Math.floor(rand() * 40);
      const all: WaitingJob[] = Array.from({ length: n }, (_, i) => ({
        id: i + 1,
        cpus: cpuChoices[Math.floor(rand() * cpuChoices.length)],
        executor: rand() < 0.7 ? 'local' : rand() < 0.8 ? 'slurm' : 'gone',
        submittedAtMs: Math.floor(rand() * 1000),
        priority: [100, 500, 500, 900][Math.floor(rand() * 4)],
        queue: ['default', 'default', 'gpu', 'batch'][Math.floor(rand() * 4)],
      }));
      const common = {
        used: { local: Math.floor(rand() * 5), slurm: Math.floor(rand() * 3) },
        queueLimits: { gpu: { maxRunning: Math.floor(rand() * 3), maxCpus: null }, batch: { maxRunning: null, maxCpus: 1 + Math.floor(rand() * 3) } },
        queueUsed: { gpu: { running: Math.floor(rand() * 2), cpus: 1 }, batch: { running: 1, cpus: Math.floor(rand() * 3) } },
        total: { local: 4, slurm: 2 } as Record<string, number>,
        nowMs: 1000,
        startTimeoutMs: rand() < 0.5 ? 3_600_000 : Math.floor(rand() * 1000),
        enabled: rand() < 0.9,
      };
      const full = planAdmission({ ...common, waiting: all });
      const part = planAdmission({ ...common, waiting: select(all, common, 1 + Math.floor(rand() * 5)).rows });
      expect({ admit: part.admit, noResource: part.noResource, used: part.used }).toEqual({ admit: full.admit, noResource: full.noResource, used: full.used });
    }
  });

  it('reads one page (for the reasons) when the CPUs are all taken and nothing is too big or too old', () => {
    const all = Array.from({ length: 2000 }, (_, i) => ({ id: i + 2, cpus: 1, executor: 'local', submittedAtMs: 900 }));
    const common = { used: { local: 1 }, total: { local: 1 }, nowMs: 1000, startTimeoutMs: 3_600_000, enabled: true };
    expect(planAdmissionReads({ ...common, queue: { executor: 'local', count: 2000, minCpus: 1, maxCpus: 1, oldestSubmittedAtMs: 900 } })).toEqual({
      all: false,
      head: false,
      cpusAbove: null,
      submittedAtOrBefore: null,
    });
    expect(select(all, common, 64).reads).toBe(64);
  });

  it('reads one page of the head when a CPU is free, not the whole queue', () => {
    const all = Array.from({ length: 2000 }, (_, i) => ({ id: i + 1, cpus: 1, executor: 'local', submittedAtMs: 900 }));
    const common = { used: { local: 3 }, total: { local: 4 }, nowMs: 1000, startTimeoutMs: 3_600_000, enabled: true };
    const { rows, reads } = select(all, common, 64);
    expect(reads).toBe(64);
    expect(planAdmission({ ...common, waiting: rows }).admit).toEqual([1]);
  });

  it('names nothing for an executor that is not available, and everything when the check is off (unknown executors too)', () => {
    const queue = { executor: 'gone', count: 3, minCpus: 1, maxCpus: 1, oldestSubmittedAtMs: 0 };
    const common = { used: {}, total: { local: 4 }, nowMs: 1000, startTimeoutMs: 10, enabled: true };
    expect(planAdmissionReads({ ...common, queue })).toBeNull();
    expect(planAdmissionReads({ ...common, enabled: false, queue })).toMatchObject({ all: true });
  });

  it('reports the executors whose queue is blocked', () => {
    const p = planAdmission({
      used: { local: 3 },
      total: { local: 4, slurm: 2 },
      nowMs: 0,
      startTimeoutMs: 1000,
      enabled: true,
      waiting: [
        { id: 1, cpus: 2, executor: 'local', submittedAtMs: 0 },
        { id: 2, cpus: 1, executor: 'slurm', submittedAtMs: 0 },
        { id: 3, cpus: 1, executor: 'local', submittedAtMs: 0 },
      ],
    });
    expect(p.blocked).toEqual(['local']);
    expect(p.admit).toEqual([2]);
  });
});
