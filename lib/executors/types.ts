/**
 * The executor contract: how the monitor starts, watches and stops one attempt of one task.
 * Local processes (lib/executors/local.ts) by default; Slurm where one machine is not enough.
 */

/** Everything an executor needs to start one attempt. */
export interface LaunchRequest {
  jobId: number;
  /** 0-based index of the task in its pipeline. */
  taskIndex: number;
  /** 1-based attempt number within the task. */
  attempt: number;
  /** bash script run first; a non-zero exit ends the attempt as FAILED_SETUP. */
  setup: string | null;
  /** bash script run after setup; a non-zero exit ends the attempt as FAILED. */
  run: string | null;
  /** The task's envs; the executor adds jobdeck's variables and SkyPilot's (lib/executors/wrapper.ts taskEnv). */
  envs: Record<string, string>;
  /** Working folder (absolute or ~-relative); null → the attempt folder. */
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
   * as GRES (`--gres=gpu:<type>:<count>`); the local executor checked at submit that it has them.
   * Absent: none.
   */
  gpus?: { type: string; count: number };
  /** The attempt's own folder (created by the executor if missing): exit status, wrapper. */
  attemptDir: string;
  /**
   * The attempt's log file: stdout and stderr, in order, appended. A gang's rank 0 writes here;
   * rank K > 0 writes `rankLogPath(logPath, K)` (lib/jobs/paths.ts).
   */
  logPath: string;
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
   * (docs/design.md "Replicas").
   */
  capacity(): { cpus: number; nodes?: number; host?: boolean };
  /**
   * Optional, for a backend with a scheduler of its own: which of these launched attempts (by
   * `AttemptHandle.ref`) that scheduler still holds back, each with its own reason (Slurm:
   * `squeue -o %r` of a PENDING job — "Resources", "Priority"…), asked in one call for all of
   * them. An attempt absent from the answer is not held (it runs, ended, or is unknown).
   * @throws with `transient: true` when the backend does not answer.
   */
  held?(refs: readonly string[]): Promise<Map<string, string>>;
  /**
   * Optional: what each running attempt uses now, in one look for all of them (one pass over
   * `/proc` locally; one `sstat` call on Slurm). One answer per handle, in order; null where the
   * executor sees nothing of it (gone, or the backend records no usage). An executor without it
   * records no usage ("not recorded"). Throws like the other methods (`transient: true`).
   */
  sample?(handles: readonly AttemptHandle[]): Promise<Array<UsageSample | null>>;
}
