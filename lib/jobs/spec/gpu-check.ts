/**
 * The spec's GPU rules that depend on where a task runs (docs/spec.md "accelerators"): on an
 * executor whose GPUs are the host's (lib/jobs/executor-kinds.ts `gpus: 'host'`: the local one)
 * only types it has a device of, and no more devices than it has; on one whose scheduler grants
 * them (Slurm) no share of a GPU (GRES counts whole GPUs); the tasks of a pipeline on the host's
 * GPUs share one grant, so they name the same types. And the job's request for admission, from
 * its tasks. Pure.
 */
import { GpuPool, optionText, type GpuDevice, type GpuOption } from '../gpus';
import { parseAccelerators } from './accelerators';
import type { TaskSpec } from './schema';
import { capabilitiesOf, kindsWith } from '../executor-kinds';

/** The options of `options` the local executor can ever grant (a type it has, enough devices), in order. */
export function localOptions(options: readonly GpuOption[], devices: readonly GpuDevice[]): GpuOption[] {
  const pool = new GpuPool(devices);
  return options.filter((o) => pool.capacityFor(o) >= Math.ceil(o.count));
}

function gpusHave(devices: readonly GpuDevice[]): string {
  const types = [...new Set(devices.map((d) => d.type).filter((t): t is string => t !== null))];
  return `${devices.length}${types.length ? ` (${types.join(', ')})` : ''}`;
}

/** The labels of the executors whose GPUs are the host's ("local"). */
const hostLabels = () => kindsWith((c) => c.gpus === 'host').map((n) => capabilitiesOf(n)!.label).join(' or ');

/**
 * Why `options` cannot run on `executor`, or null: on the host's GPUs (the devices known) none of
 * them it can ever grant; on a scheduler's a share of one GPU.
 */
export function gpuProblem(options: readonly GpuOption[], executor: string | null, devices: readonly GpuDevice[] | undefined): string | null {
  const can = executor === null ? undefined : capabilitiesOf(executor);
  if (can?.gpus === 'scheduler') {
    const share = options.find((o) => o.count < 1);
    return share ? `${optionText(share)} asks for a share of one GPU, which only the ${hostLabels()} executor grants: ${can.label}'s GRES count whole GPUs` : null;
  }
  if (can?.gpus !== 'host' || devices === undefined || localOptions(options, devices).length > 0) return null;
  const asked = options.map(optionText).join(' or ');
  return `asks for ${asked}; the ${can.label} executor has ${gpusHave(devices)} GPU${devices.length === 1 ? '' : 's'} (nvidia-smi, or JOBDECK_LOCAL_GPUS)`;
}

/** A task's GPU alternatives (its `resources.accelerators`), empty when it asks for none or the value is refused. */
export function taskGpuOptions(task: Pick<TaskSpec, 'resources'>): GpuOption[] {
  const g = parseAccelerators(task.resources.other.accelerators);
  return Array.isArray(g) ? g : [];
}

/**
 * The types of `options`, in order, as one key: two tasks of a local pipeline must ask for the
 * same types (they share the job's grant).
 */
export function typesKey(options: readonly GpuOption[]): string {
  return options.map((o) => o.type.toUpperCase()).join(', ');
}

/** What admission needs of a job's GPUs (Job.gpuRequest, Job.gpus). */
export interface JobGpus {
  /** Per node, in order of preference; for each type the largest count its tasks ask for. Empty: none. */
  options: GpuOption[];
  /** GPUs the job holds in all while it runs, for quotas and accounting: the first option's count × nodes. */
  total: number;
}

/**
 * The job's GPU request from its tasks: on the host's GPUs (devices known) the options it can
 * grant, else as written (Slurm uses the first); for each type the largest count of any task.
 */
export function pipelineGpus(tasks: ReadonlyArray<Pick<TaskSpec, 'resources' | 'numNodes'>>, executor: string, devices: readonly GpuDevice[] | undefined): JobGpus {
  const byType = new Map<string, GpuOption>();
  const host = capabilitiesOf(executor)?.gpus === 'host';
  let nodes = 1;
  for (const t of tasks) {
    let opts = taskGpuOptions(t);
    if (host && devices !== undefined) opts = localOptions(opts, devices);
    if (opts.length) nodes = Math.max(nodes, t.numNodes ?? 1);
    for (const o of opts) {
      const k = o.type.toUpperCase();
      const had = byType.get(k);
      if (!had || o.count > had.count) byType.set(k, { type: had?.type ?? o.type, count: o.count });
    }
  }
  const options = [...byType.values()];
  return { options, total: options.length ? options[0].count * nodes : 0 };
}
