/**
 * What the monitor needs from a task's stored spec (Task.spec: the normalized TaskSpec JSON of
 * lib/jobs/spec — `{ name, setup, run, envs, workdir, resources: { cpus, … }, jobRecovery: {
 * maxRestartsOnErrors, recoverOnExitCodes, strategy, restartBackoffMs? } }`). Read tolerantly: a missing field takes
 * its documented default, so rows written by older versions still run.
 */
import { dockerImageOf, parseAccelerators, type GpuOption } from '../jobs/spec';

export interface RunnableTask {
  setup: string | null;
  run: string | null;
  /** The task's envs and secrets together (names never overlap: the spec refuses it). */
  envs: Record<string, string>;
  workdir: string | null;
  /** `file_mounts` targets → sources as written (their content comes from Job.launch); absent when none. */
  fileMounts?: Record<string, string>;
  /** GPU alternatives per node, in order (`resources.accelerators`, lib/jobs/spec parseAccelerators); absent when none. */
  gpus?: GpuOption[];
  /** CPUs the task asks for, per node (falls back to the job's). */
  cpus: number;
  /** Memory per node in bytes (`resources.memory`); absent when not given. */
  memoryBytes?: number;
  /** `max_duration` in ms: how long one attempt may run; absent when not given. */
  maxDurationMs?: number;
  /** `image_id: docker:IMAGE`: the image setup and run run in (docs/spec.md "image_id"); absent: on the host. */
  image?: string;
  /** Nodes of one attempt (`numNodes`; 1 when absent). */
  nodes: number;
  maxRestartsOnErrors: number;
  recoverOnExitCodes: number[];
  /** `job_recovery.restart_backoff` in ms; null: the server's default. */
  restartBackoffMs: number | null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** Reads a stored TaskSpec (see the module comment). Never throws. */
export function readTaskSpec(json: unknown, jobCpus: number): RunnableTask {
  const s = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const res = (s.resources && typeof s.resources === 'object' ? s.resources : {}) as Record<string, unknown>;
  const rec = (s.jobRecovery && typeof s.jobRecovery === 'object' ? s.jobRecovery : {}) as Record<string, unknown>;
  const envs: Record<string, string> = {};
  // Secrets reach the task as env vars too (SkyPilot's rule); only what is shown differs.
  for (const m of [s.envs, s.secrets]) {
    if (m && typeof m === 'object') for (const [k, v] of Object.entries(m as Record<string, unknown>)) if (v !== null && v !== undefined) envs[k] = String(v);
  }
  const max = Number(rec.maxRestartsOnErrors);
  const codes = Array.isArray(rec.recoverOnExitCodes) ? rec.recoverOnExitCodes : typeof rec.recoverOnExitCodes === 'number' ? [rec.recoverOnExitCodes] : [];
  const cpus = Number(res.cpus);
  const nodes = Number(s.numNodes);
  const memoryGb = Number(res.memoryGb);
  const maxDurationMs = Number(s.maxDurationMs);
  return {
    setup: str(s.setup),
    run: str(s.run),
    envs,
    workdir: str(s.workdir),
    ...(s.fileMounts && typeof s.fileMounts === 'object' && !Array.isArray(s.fileMounts) ? { fileMounts: s.fileMounts as Record<string, string> } : {}),
    ...gpusOf(res.other),
    cpus: Number.isFinite(cpus) && cpus > 0 ? cpus : jobCpus,
    ...(res.memoryGb != null && Number.isFinite(memoryGb) && memoryGb > 0 ? { memoryBytes: Math.round(memoryGb * 1024 ** 3) } : {}),
    ...(s.maxDurationMs != null && Number.isFinite(maxDurationMs) && maxDurationMs > 0 ? { maxDurationMs } : {}),
    ...imageOf(res.other),
    nodes: Number.isInteger(nodes) && nodes > 1 ? nodes : 1,
    maxRestartsOnErrors: Number.isInteger(max) && max >= 0 ? max : 0,
    recoverOnExitCodes: codes.map(Number).filter((n) => Number.isInteger(n)),
    restartBackoffMs: typeof rec.restartBackoffMs === 'number' && rec.restartBackoffMs >= 0 ? rec.restartBackoffMs : null,
  };
}

function gpusOf(other: unknown): { gpus?: GpuOption[] } {
  const g = other && typeof other === 'object' ? parseAccelerators((other as Record<string, unknown>).accelerators) : null;
  return Array.isArray(g) ? { gpus: g } : {};
}

function imageOf(other: unknown): { image?: string } {
  const i = other && typeof other === 'object' ? dockerImageOf((other as Record<string, unknown>).image_id) : null;
  return i ? { image: i } : {};
}
