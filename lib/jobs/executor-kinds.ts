/**
 * The executor kinds jobdeck has and what each can do: the one list that the spec's rules
 * (lib/jobs/spec), the executor registry (lib/executors/index.ts: one factory per kind, checked
 * by the compiler) and the monitor read, so no rule branches on an executor's name
 * (docs/design.md §7 "Executors"). Pure: no I/O.
 */

/** What one executor kind can do. */
export interface ExecutorCapabilities {
  /** How messages name it: "the local executor", "Slurm: Resources". */
  readonly label: string;
  /** Where it runs tasks, as a message says it: "runs tasks on this machine (infra: local)". */
  readonly runsOn: string;
  /**
   * Runs a task of `num_nodes` > 1 as one gang of nodes (SkyPilot's `num_nodes`). A kind that
   * cannot has such a task refused at submit, at that key (docs/spec.md "num_nodes").
   */
  readonly multiNode: boolean;
  /**
   * Where a task's GPUs (`resources.accelerators`) come from: `host` — this machine's, counted at
   * submit against what it has (JOBDECK_LOCAL_GPUS / nvidia-smi) and handed to the attempt as
   * CUDA_VISIBLE_DEVICES; `scheduler` — reserved by the backend's own scheduler (Slurm GRES),
   * which sets CUDA_VISIBLE_DEVICES itself.
   */
  readonly gpus: 'host' | 'scheduler';
  /**
   * Has a scheduler of its own that may hold a launched attempt back (Executor.held): the
   * monitor then shows the scheduler's reason as the job's pendingReason (docs/slurm.md "Why
   * pending").
   */
  readonly held: boolean;
  /**
   * Its CPUs are this host's, shared by every server on the host (Executor.capacity().host):
   * admission counts them per host (docs/design.md "Replicas").
   */
  readonly hostCpus: boolean;
  /**
   * Runs `image_id: docker:IMAGE` in a container, when the server has a container runtime
   * (JOBDECK_CONTAINER_RUNTIME). A kind that cannot has such a task refused at submit, at that key
   * (docs/spec.md "image_id"; Slurm: no runtime on the nodes is configured for jobdeck).
   */
  readonly containers: boolean;
  /**
   * How the tasks of a job group (`execution: parallel`) find each other's hosts
   * (JOBDECK_TASK_<NAME>_HOST, docs/spec.md "Job groups"): `loopback` — every task runs on this
   * host, 127.0.0.1, known at submit and stored in the tasks' envs; `placed` — the backend places
   * the tasks and the executor sets each task's host when the group starts (Slurm: one
   * heterogeneous job, docs/slurm.md "Job groups").
   */
  readonly groupHosts: 'loopback' | 'placed';
}

/** Every executor kind, by the name stored on Job.executor and Attempt.executor. */
export const EXECUTOR_KINDS = {
  local: { label: 'local', runsOn: 'this machine', multiNode: false, gpus: 'host', held: false, hostCpus: true, containers: true, groupHosts: 'loopback' },
  slurm: { label: 'Slurm', runsOn: 'Slurm', multiNode: true, gpus: 'scheduler', held: true, hostCpus: false, containers: false, groupHosts: 'placed' },
} as const satisfies Record<string, ExecutorCapabilities>;

/** The name of an executor kind ("local", "slurm"). */
export type ExecutorKind = keyof typeof EXECUTOR_KINDS;

/** The kinds' names, in the table's order (the names `resources.infra` and JOBDECK_EXECUTOR accept). */
export const EXECUTOR_NAMES = Object.freeze(Object.keys(EXECUTOR_KINDS) as ExecutorKind[]);

/** The kind a job runs on when neither its spec nor the server (JOBDECK_EXECUTOR) names one. */
export const DEFAULT_EXECUTOR: ExecutorKind = 'local';

/** True when `name` is one of {@link EXECUTOR_NAMES} (exactly: callers lower-case first). */
export function isExecutorKind(name: string): name is ExecutorKind {
  return Object.hasOwn(EXECUTOR_KINDS, name);
}

/** What the kind named `name` can do; undefined for a name that is no kind. */
export function capabilitiesOf(name: string): ExecutorCapabilities | undefined {
  return isExecutorKind(name) ? EXECUTOR_KINDS[name] : undefined;
}

/** The kinds whose capabilities pass `test`, in table order (e.g. `(c) => c.multiNode`). */
export function kindsWith(test: (c: ExecutorCapabilities) => boolean): ExecutorKind[] {
  return EXECUTOR_NAMES.filter((n) => test(EXECUTOR_KINDS[n]));
}
