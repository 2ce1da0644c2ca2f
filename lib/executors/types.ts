import type { OsAccount } from '../accounts';
import type { GpuDevice } from '../jobs/gpus';
import type { LimitKind, LimitsStatus } from '../jobs/limits';

export type { LimitsStatus } from '../jobs/limits';

/**
 * The executor contract: how the monitor starts, watches and stops one attempt of one task.
 * Local processes (lib/executors/local/executor.ts) by default; Slurm where one machine is not enough.
 */

/** Everything an executor needs to start one attempt. */
export interface LaunchRequest {
  jobId: number;
  /** 0-based index of the task in its pipeline. */
  taskIndex: number;
  /** Tasks in the pipeline (absent: 1), for SKYPILOT_TASK_IDS. */
  taskCount?: number;
  /** 1-based attempt number within the task. */
  attempt: number;
  /** bash script run first; a non-zero exit ends the attempt as FAILED_SETUP. */
  setup: string | null;
  /** bash script run after setup; a non-zero exit ends the attempt as FAILED. */
  run: string | null;
  /** The task's envs; the executor adds jobdeck's variables and SkyPilot's (lib/executors/wrapper.ts taskEnv). */
  envs: Record<string, string>;
  /**
   * Working folder (absolute or ~-relative: the home of the account the attempt runs as); null →
   * the attempt's workspace, a fresh folder of its own (`<attemptDir>/work`, docs/spec.md "workdir").
   */
  workdir: string | null;
  /** CPUs the task asks for (per node). */
  cpus: number;
  /**
   * Nodes the attempt runs on at once, as one gang (SkyPilot's `num_nodes`; absent = 1): every
   * node runs setup then run, rank 0 is the head (docs/slurm.md "Multi-node tasks"). An executor
   * that cannot run a gang throws a TypeError for more than 1.
   */
  nodes?: number;
  /**
   * GPUs per node (SkyPilot's `accelerators`, docs/spec.md "accelerators"): Slurm reserves them
   * as GRES (`--gres=gpu:<type>:<count>`, whole GPUs); the local executor runs the attempt on the
   * `devices` admission granted (CUDA_VISIBLE_DEVICES, and only those openable where the devices
   * controller is there). Absent: none.
   */
  gpus?: { type: string; count: number; devices?: Array<{ index: number; share: number }> };
  /** Memory per node in bytes (`resources.memory`): the local attempt's cgroup limit, Slurm's `--mem`. Absent: no limit. */
  memoryBytes?: number;
  /**
   * `max_duration` in ms: Slurm's `--time` (whole minutes, rounded up; Slurm stops the job). The
   * local executor has no clock of its own: the monitor stops the attempt (docs/design.md §7).
   */
  maxDurationMs?: number;
  /** The attempt's own folder (created by the executor if missing): exit status, wrapper. */
  attemptDir: string;
  /**
   * The attempt's log file: stdout and stderr, in order, appended. A gang's rank 0 writes here;
   * rank K > 0 writes `rankLogPath(logPath, K)` (lib/jobs/paths.ts).
   */
  logPath: string;
  /**
   * The OS account setup and run start as (docs/design.md §16 "Isolation"), with a clean
   * environment of its own (wrapper.ts jobEnv); absent: as this process, with its environment
   * minus jobdeck's settings (single-user).
   */
  account?: OsAccount;
  /**
   * Run setup and run inside a container of `image` (`image_id: docker:IMAGE`, docs/design.md §7
   * "Containers"); `mounts`: host paths bind-mounted at their own paths besides the workdir (the
   * placed file_mounts targets). An executor without a container runtime throws a LaunchPrecheckError.
   */
  container?: { image: string; mounts?: string[] };
  /** How the attempt calls jobdeck back: JOBDECK_URL and JOBDECK_TOKEN (its own token) in its environment. */
  api?: { url: string; token: string };
  /**
   * The job group this task belongs to (`execution: parallel`, docs/spec.md "Job groups"); absent
   * for a pipeline or DAG. An executor that places tasks on hosts it learns only at run time
   * (Slurm: one heterogeneous job for the group's first attempts, docs/slurm.md "Job groups")
   * reads every task's shape here; the local executor ignores it (its hosts are in the envs).
   */
  group?: LaunchGroup;
}

/** A job group as an executor sees it from one task's launch (LaunchRequest.group). */
export interface LaunchGroup {
  /** A folder of the job's own for the group's allocation (absolute; the executor creates it). */
  dir: string;
  /** Every task of the group, by index: its shape and the env var the others find its host by. */
  tasks: Array<{
    /** `JOBDECK_TASK_<NAME>_HOST`. */
    hostEnv: string;
    /** CPUs (per node). */
    cpus: number;
    memoryBytes?: number;
    maxDurationMs?: number;
  }>;
}

/** How to find a launched attempt again, also after a restart of jobdeck (stored on Attempt). */
export interface AttemptHandle {
  executor: string;
  /** Executor's own reference ("pid:starttime" locally, the Slurm job id). */
  ref: string;
  pid?: number | null;
  /** Process start time in clock ticks since boot (/proc/PID/stat field 22): pid reuse guard. */
  pidStartTime?: string | null;
  /**
   * Local: the identity of the host the process runs on (lib/proc.ts hostIdentity). A server on
   * another host cannot reach it through its own `/proc` (docs/design.md "Replicas"). Absent:
   * this host (handles written before it was recorded).
   */
  hostId?: string | null;
  attemptDir: string;
}

/** What an executor knows about an attempt right now. */
export type ProbeResult =
  | { state: 'running' }
  /** The attempt recorded its own end: which phase ended it, and the exit code. */
  | {
      state: 'exited';
      phase: 'setup' | 'run';
      exitCode: number;
      endedAt: Date;
      /**
       * Optional: why the executor itself ended the attempt without the phase's own exit code
       * (local: "workdir does not exist or is not an accessible directory", "terminated before
       * run started", "cannot open the log file"). Absent for a script's own exit.
       */
      reason?: string;
      /** A gang's: the rank whose end decided (the first failure; absent when every rank exited 0). */
      rank?: number;
      /** The attempt's CPU time at its end (ms; the wrapper's record of its children), when recorded. */
      cpuMs?: number;
      /**
       * Which of its limits the executor stopped it at, from the executor's own record — the
       * cgroup's OOM kill count (local), Slurm's OUT_OF_MEMORY / TIMEOUT state — never guessed
       * from an exit code. Absent: it ended on its own.
       */
      limit?: LimitKind;
      /** Bytes of output the attempt's log could not take (a full disk: docs/design.md §8); absent: none. */
      logLostBytes?: number;
    }
  /** The attempt is gone and recorded nothing (killed with the machine, pid reused…). */
  | { state: 'lost'; reason: string };

/**
 * What an attempt's processes use right now (Executor.sample): CPU time so far (user + system,
 * ms, cumulative over the attempt — finished children included), resident memory summed over
 * its processes (bytes) and how many processes it has.
 */
export interface UsageSample {
  cpuMs: number;
  rssBytes: number;
  procs: number;
}

/** Notification that an attempt ended (only when this process can observe it directly). */
export type ExitListener = (result: Exclude<ProbeResult, { state: 'running' }>) => void;

/**
 * An execution backend. Methods never throw for a merely finished attempt. When the backend is
 * only temporarily unreachable (a cluster controller down), they throw an error with
 * `transient: true`: the monitor retries later and spends no restart or recovery budget.
 */
export interface Executor {
  readonly name: string;
  /**
   * True when the backend itself stops an attempt at its `max_duration` (Slurm's `--time`); the
   * monitor then only reads the end. Absent: the monitor stops it at the deadline (local).
   */
  readonly stopsAtMaxDuration?: boolean;
  /** Starts the attempt detached (it outlives jobdeck). @throws when it cannot be started. */
  launch(req: LaunchRequest): Promise<AttemptHandle>;
  /** Current state from durable facts (exit file, process table, scheduler). */
  probe(handle: AttemptHandle): Promise<ProbeResult>;
  /**
   * Subscribes to the attempt's end, when this process can see it at once (it is the parent,
   * or watches the exit file). Returns an unsubscribe function. The monitor still probes on an
   * interval; this only makes the common case immediate.
   */
  watch(handle: AttemptHandle, listener: ExitListener): () => void;
  /**
   * Stops the attempt: SIGTERM to its whole process group, SIGKILL after `graceMs`; resolves
   * once no process of the attempt remains.
   */
  cancel(handle: AttemptHandle, opts?: { graceMs?: number }): Promise<void>;
  /**
   * The handle the executor itself recorded in `attemptDir` at launch, if it keeps one — for a
   * crash between the launch and the database write of the handle. Null when none is there.
   */
  findHandle?(attemptDir: string): AttemptHandle | null;
  /**
   * CPUs this executor can run at once (the admission budget) and, for an executor that runs
   * multi-node attempts, its nodes (a job asking for more is FAILED_NO_RESOURCE). `host`: the
   * CPUs are this host's, shared by every server on it (local); absent: the backend's own,
   * whoever admits (Slurm's cluster). Admission counts a `host` executor's CPUs per host
   * (docs/design.md "Replicas"). `gpus`: the GPU devices of an executor that grants them itself
   * (local: admission names the devices each job gets); absent: GPUs are the backend's to place
   * (Slurm's GRES).
   */
  capacity(): { cpus: number; nodes?: number; host?: boolean; gpus?: readonly GpuDevice[] };
  /** Optional: how it holds attempts to their resources (GET /api/health); absent: it says nothing (Slurm's cluster enforces). */
  limits?(): LimitsStatus;
  /**
   * Optional, with `capacity().gpus`: the indices of the devices that processes hold now
   * (nvidia-smi's compute apps) — those jobdeck did not grant are left out of its grants.
   */
  gpusHeld?(): Promise<number[]>;
  /**
   * Optional, for a backend with a scheduler of its own: which of these launched attempts (by
   * `AttemptHandle.ref`) that scheduler still holds back, each with its own reason (Slurm:
   * `squeue -o %r` of a PENDING job — "Resources", "Priority"…), asked in one call for all of
   * them. An attempt absent from the answer is not held (it runs, ended, or is unknown).
   * @throws with `transient: true` when the backend does not answer.
   */
  held?(refs: readonly string[]): Promise<Map<string, string>>;
  /**
   * Optional: the nodes the attempt runs (or ran) on, host names in rank order (SkyPilot's
   * node_names): locally this machine's name, on Slurm the allocated nodes as its batch script
   * recorded them. Null while not known (a Slurm job not started yet). Cheap (no backend call).
   */
  nodes?(handle: AttemptHandle): string[] | null;
  /**
   * Optional: what each running attempt uses now, in one look for all of them (one pass over
   * `/proc` locally; one `sstat` call on Slurm). One answer per handle, in order; null where the
   * executor sees nothing of it (gone, or the backend records no usage). An executor without it
   * records no usage ("not recorded"). Throws like the other methods (`transient: true`).
   */
  sample?(handles: readonly AttemptHandle[]): Promise<Array<UsageSample | null>>;
}
