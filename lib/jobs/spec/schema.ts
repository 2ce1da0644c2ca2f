/**
 * The job spec's shape: the normalized types ({@link PipelineSpec}, {@link TaskSpec}), the
 * limits, the SkyPilot key lists, and the zod schema a task document is validated with (keys,
 * types, ranges, and the SkyPilot keys refused with a reason). Every key is documented in
 * docs/spec.md ("Task keys"); the limits in docs/spec.md ("Limits"). Pure: no node:* import.
 */
import { imageIdSchema } from './images';
import { z } from 'zod';
import { ExitCodeSchema, RESTARTS_EXPECTED, RestartBackoffSchema } from './recovery';
import { MAX_FILE_MOUNTS, STORAGE_URL } from './mounts';
import { ArraySchema, DependsOnSchema, type SpecArray, type SpecDependsOn } from './flow';
import { LabelsSchema } from './labels';
import { NotifySchema } from './notify';
import { RETENTION_KEYS, RetentionSchema, type SpecRetention } from './retention';
import { describe, KiB, type PathSeg } from './messages';
import { MaxDurationSchema } from './duration';
import type { GpuDevice } from '../gpus';
import { invisibleIn, textProblem, utf8Bytes } from './text';
import { EXECUTOR_KINDS, EXECUTOR_NAMES, isExecutorKind, type ExecutorKind } from '../executor-kinds';

export { utf8Bytes } from './text';

/** Resources a task asks for. `cpus` and `memoryGb` are counts / GB (1 GB = 1024 MB); docs/spec.md "resources". */
export interface Resources {
  /** CPUs (may be fractional); default 1. */
  cpus: number;
  /** True for `"2+"` (at least), false for `2` (exactly). */
  cpusAtLeast: boolean;
  /** Memory in GB, null when not given. */
  memoryGb: number | null;
  memoryAtLeast: boolean;
  /**
   * Other SkyPilot resource keys (accelerators, cloud, ports, disk_size, …) as written: accepted
   * for compatibility, recorded, not used by the local executor. Keys sorted.
   */
  other: Record<string, unknown>;
  /**
   * The alternative of `any_of` / `ordered` the task runs with (its `index` of `of`, 0-based),
   * merged over the other resources above; absent when the task lists none.
   */
  alternative?: { key: 'any_of' | 'ordered'; index: number; of: number };
}

/** When a failed attempt is restarted (SkyPilot's `job_recovery`; docs/spec.md "job_recovery"). */
export interface JobRecovery {
  /** Restarts allowed after the task's own failure (FAILED / FAILED_SETUP); default 0. */
  maxRestartsOnErrors: number;
  /** Exit codes that restart without spending the budget; sorted, unique, 0–255. */
  recoverOnExitCodes: number[];
  /** SkyPilot's recovery strategy name as written (e.g. "FAILOVER"), recorded only. */
  strategy: string | null;
  /** `restart_backoff` in ms (lib/jobs/spec/recovery.ts); absent when not given (the server's default applies). */
  restartBackoffMs?: number;
}

/** One task (pipeline step), normalized; each key in docs/spec.md "Task keys". */
export interface TaskSpec {
  name: string | null;
  /** Bash script run before `run` in each attempt; null when none. */
  setup: string | null;
  /** Bash script; null when none (the task then succeeds at once). */
  run: string | null;
  /** Environment for setup and run (overrides merged in). */
  envs: Record<string, string>;
  /**
   * SkyPilot's `secrets`: environment like `envs`, but always masked when shown (the YAML, the
   * task's envs, the launch values) and never logged (docs/spec.md "secrets"). Absent when none,
   * so a spec without secrets keeps its specHash.
   */
  secrets?: Record<string, string>;
  workdir: string | null;
  /**
   * SkyPilot's `file_mounts` with local sources: target → source as written (docs/spec.md
   * "file_mounts"); each source's content is uploaded with the job and placed at its target in
   * every attempt. Absent when none, so a spec without it keeps its specHash.
   */
  fileMounts?: Record<string, string>;
  resources: Resources;
  jobRecovery: JobRecovery;
  /**
   * SkyPilot's `num_nodes`: the task runs as a gang of this many nodes (Slurm only; docs/slurm.md
   * "Multi-node tasks"), `resources` per node. Absent means 1, so a one-node task's stored spec
   * (and its specHash) is the same as before the key was supported.
   */
  numNodes?: number;
  /**
   * SkyPilot's `max_duration` in ms: an attempt running longer is stopped and the task ends FAILED
   * (docs/spec.md "max_duration"). Absent when not given (the specHash of older specs is kept).
   */
  maxDurationMs?: number;
  /**
   * The indexes of the tasks this one starts after (docs/spec.md "depends_on" `tasks`, "Job
   * groups"): set in a task DAG (the tasks it names) and a job group (none); absent in a pipeline,
   * where each task starts after the one before it (and a pipeline's specHash is kept).
   */
  after?: number[];
  /** A primary task of a job group (the header's `primary_tasks`): the group ends when they have. */
  primary?: boolean;
}

/** A submitted job: one or more tasks run in order (docs/spec.md "Documents", "Job name"). */
export interface PipelineSpec {
  name: string;
  tasks: TaskSpec[];
  /**
   * Where the job runs, from its tasks' `resources.infra` (SkyPilot's key); absent when no task
   * names one — then the server's default applies (see {@link jobExecutor}).
   */
  executor?: ExecutorKind;
  /**
   * Admission priority ({@link PRIORITY}), from the tasks' `priority`; absent when no task names
   * one — then the queue's default priority, else {@link PRIORITY}.default, applies at submit.
   */
  priority?: number;
  /** The operator queue (`queue`, {@link QUEUE_NAME}); absent when no task names one: {@link DEFAULT_QUEUE}. */
  queue?: string;
  /**
   * Webhook subscriptions this job's events also go to (`notify: [name, …]`, docs/spec.md
   * "notify"), whatever their own filters; absent when no task names any.
   */
  notify?: string[];
  /** How long the logs and the record are kept after the end (`retention`); absent: the operator's policy. */
  retention?: SpecRetention;
  /** Other jobs this one waits for (`depends_on`, docs/spec.md "depends_on"); absent when none. */
  dependsOn?: SpecDependsOn;
  /** Submitted as a group of jobs (`array`, docs/spec.md "array"); absent: one job. */
  array?: SpecArray;
  /** `parallel`: a job group, every task started together (the header's `execution`); absent: a pipeline or DAG. */
  execution?: 'parallel';
}

/** The queue of a job that names none; it has no limits of its own (docs/design.md §6 "Admission"). */
export const DEFAULT_QUEUE = 'default';

/** A queue name: 1–63 characters, a–z 0–9 - _, starting with a letter or digit. */
export const QUEUE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The message for a value that is not a queue name. */
export const QUEUE_NAME_EXPECTED = 'expected a queue name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit)';

/** null when `v` is a queue name ({@link QUEUE_NAME}), else what is wrong with it. */
export function queueNameProblem(v: unknown): string | null {
  return typeof v === 'string' && QUEUE_NAME.test(v) ? null : QUEUE_NAME_EXPECTED;
}

/**
 * Admission priority: an integer 0–1000, higher first, FIFO within a priority; default 500
 * (SkyPilot's range and default; docs/spec.md "priority", docs/design.md §6 "Admission").
 */
export const PRIORITY = Object.freeze({ min: 0, max: 1000, default: 500 });

/** The message for a value that is not a priority. */
export const PRIORITY_EXPECTED = `expected a priority (an integer from ${PRIORITY.min} to ${PRIORITY.max})`;

/** null when `v` is a priority ({@link PRIORITY}), else what is wrong with it. */
export function priorityProblem(v: unknown): string | null {
  return Number.isInteger(v) && (v as number) >= PRIORITY.min && (v as number) <= PRIORITY.max ? null : PRIORITY_EXPECTED;
}

/** Options shared by the parse functions. */
export interface SpecOptions {
  /** Shown in issues; default "job.yaml" ("job.json" for the JSON form). */
  filename?: string;
  overrides?: SpecOverrides;
  /**
   * The executor a pipeline without `resources.infra` runs on (the server's JOBDECK_EXECUTOR):
   * with it, `num_nodes` > 1 on the local executor is refused at that key. Without it (an editor
   * that does not know the server), only an explicit `infra: local` is checked.
   */
  defaultExecutor?: ExecutorKind;
  /**
   * The queues the server has (names, without {@link DEFAULT_QUEUE}): with it, a `queue` naming
   * another is refused at that key, listing them. Without it, only the name's form is checked.
   */
  queues?: readonly string[];
  /** What was uploaded with the job (docs/spec.md "workdir", "file_mounts"). */
  uploads?: SpecUploads;
  /**
   * The local executor's GPUs (lib/jobs/gpus.ts devices): a task on it asking for a type it has
   * none of, or for more than it has, is refused at `resources.accelerators`; alternatives keep
   * only the types it has. Without it, only the form is checked.
   */
  localGpus?: readonly GpuDevice[];
  /**
   * The server runs `image_id: docker:IMAGE` in containers on an executor that can
   * (JOBDECK_CONTAINER_RUNTIME set; lib/jobs/executor-kinds.ts `containers`). Without it such a
   * task is refused (an editor that does not know the server: refused too — nothing pretends).
   */
  containers?: boolean;
}

/** The uploads a submit carries, as the spec's rules need them. */
export interface SpecUploads {
  /**
   * A folder was uploaded for the workdir (its content hash, lib/uploads/upload.ts): a relative
   * `workdir` then runs in each attempt's copy of it. Without it, one is refused.
   */
  workdir?: string;
  /** The `file_mounts` targets whose source content was uploaded; a target without one is refused. */
  fileMountTargets?: readonly string[];
  /** JOBDECK_FILE_MOUNT_ROOT: the folder absolute `file_mounts` targets must be under; none allowed without it. */
  fileMountRoot?: string | null;
}

/** What a submitter may override (CLI `--name`, `--env K=V`; docs/spec.md "Overrides"). */
export interface SpecOverrides {
  /** Replaces the job name (same rules as a name in the file). */
  name?: string;
  /** Merged into every task's envs; an override wins over the file. */
  envs?: Record<string, string>;
  /** Merged into every task's secrets (CLI `--secret`); an override wins over the file. */
  secrets?: Record<string, string>;
  /**
   * Replaces the pipeline's `queue` (same name rule; with the server's queues known, it must be
   * one of them — issue path `overrides.queue`).
   */
  queue?: string;
}

/** Limits that keep hostile specs cheap to refuse (docs/spec.md "Limits"). Sizes in bytes (UTF-8). */
export const SPEC_LIMITS = Object.freeze({
  /** Size of the YAML text (or the strings of the JSON form). */
  maxBytes: 256 * 1024,
  /** Tasks in a pipeline (a header document comes on top). */
  maxTasks: 64,
  /** Nesting of maps and lists (a task's top-level map is depth 1). */
  maxDepth: 32,
  /** YAML aliases (`*name`) in the whole text; also yaml's own expansion bound. */
  maxAliasCount: 50,
  /** Job and task names, characters. */
  maxNameLength: 128,
  /** Env vars per task, after overrides. */
  maxEnvCount: 256,
  maxEnvValueBytes: 64 * 1024,
  /** Sum of a task's env names and values. */
  maxEnvTotalBytes: 512 * 1024,
  /** `setup` and `run` each (below Linux's 128 KiB limit for one exec argument). */
  maxScriptBytes: 64 * 1024,
  /** `workdir`, characters. */
  maxWorkdirLength: 4096,
  /** `job_recovery.max_restarts_on_errors`. */
  maxRestartsOnErrors: 1000,
  /** `num_nodes`. */
  maxNumNodes: 1024,
  /** Values (maps, lists, scalars) in the JSON form. */
  maxJsonNodes: 100_000,
});

/** The repo's examples/ files (basename without `.yaml`) that tests and docs rely on. */
export const SPEC_EXAMPLE_NAMES = [
  'hello',
  'seed-retry-pipeline',
  'setup-fails',
  'middle-task-retry',
  'training-like',
  'hostile-output',
] as const;

/** SkyPilot resource keys accepted and recorded in `resources.other` (docs/spec.md "SkyPilot keys"). */
export const SKYPILOT_RESOURCE_KEYS = [
  'accelerator_args',
  'accelerators',
  'autostop',
  'cloud',
  'disk_size',
  'disk_tier',
  'image_id',
  'infra',
  'instance_type',
  'labels',
  'network_tier',
  'ports',
  'region',
  'use_spot',
  'zone',
] as const;

/** One of {@link SKYPILOT_RESOURCE_KEYS}. */
export type SkyPilotResourceKey = (typeof SKYPILOT_RESOURCE_KEYS)[number];

/**
 * What jobdeck does instead, for each recorded SkyPilot resource key it does not act on: the
 * warning given when the key has a value (docs/spec.md "SkyPilot keys"). The one owner of these
 * texts; `infra` and `cloud` (where the task runs), `accelerators` (GPUs) and `labels` (shown, filtered) are honoured, so they have none. A value of
 * `false` for `use_spot` asks for what jobdeck does anyway and warns nothing.
 */
export const SKYPILOT_RESOURCE_WARNINGS: Readonly<Record<Exclude<SkyPilotResourceKey, 'infra' | 'cloud' | 'accelerators' | 'labels'>, string>> = Object.freeze({
  accelerator_args: 'not used by jobdeck: accelerator arguments (TPU runtime versions and the like) are for cloud provisioning; recorded only',
  autostop: 'not used by jobdeck: there is no cluster to stop; the job\'s processes end with the job',
  disk_size: 'not managed by jobdeck; the job uses the disk of the machine it runs on',
  disk_tier: 'not managed by jobdeck; the job uses the disk of the machine it runs on',
  image_id: 'not used by jobdeck: the job runs on the machine\'s own operating system, not a cloud image',
  instance_type: 'not used by jobdeck: there are no instance types; resources.cpus and resources.memory say what the task needs',
  network_tier: 'not managed by jobdeck; the job uses the network of the machine it runs on',
  ports: 'not managed by jobdeck; the job binds ports directly',
  region: 'not used by jobdeck: the job runs on this machine or its Slurm cluster (resources.infra), not in a cloud region',
  use_spot: 'not used by jobdeck: there are no spot instances; failed attempts restart as job_recovery says',
  zone: 'not used by jobdeck: the job runs on this machine or its Slurm cluster (resources.infra), not in a cloud zone',
});

/** The warning for `job_recovery.strategy` (SkyPilot's failover across clouds): recorded, restarts happen in place. */
export const STRATEGY_WARNING = 'recorded only: jobdeck restarts a failed attempt where the job runs (no failover to other regions or clouds)';

// ───────────────────────────── schema ─────────────────────────────

/** Issue params our schemas set: `at: 'key'` points the line at the key; `full`: no ", got …". */
export interface IssueParams {
  at?: 'key';
  full?: boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED_ENV_PREFIX = 'JOBDECK_';

/** Checks a name (job, task, pipeline header, override, strategy); returns the problem or null. */
export function nameProblem(v: string): string | null {
  if (v.trim() === '') return 'expected a non-empty name';
  if (v.length > SPEC_LIMITS.maxNameLength) return `expected a name of at most ${SPEC_LIMITS.maxNameLength} characters`;
  // The invisible rule covers what textProblem refuses too (NUL is Cc, a lone surrogate Cs).
  const hidden = invisibleIn(v);
  if (hidden) return `expected a name without control or invisible characters (newlines, tabs, escapes, zero-width, bidi; found ${hidden})`;
  return null;
}

const NameSchema = z.string({ error: 'expected a name (a string)' }).superRefine((v, ctx) => {
  const p = nameProblem(v);
  if (p) ctx.addIssue({ code: 'custom', message: p });
});

const scriptSchema = (what: string) =>
  z.string({ error: `expected ${what} (a string of shell commands)` }).superRefine((v, ctx) => {
    const n = utf8Bytes(v);
    if (n > SPEC_LIMITS.maxScriptBytes) ctx.addIssue({ code: 'custom', message: `expected ${what} of at most ${KiB(SPEC_LIMITS.maxScriptBytes)}, got ${n} bytes`, params: { full: true } });
    const text = textProblem(v);
    if (text) ctx.addIssue({ code: 'custom', message: `${what}: ${text}`, params: { full: true } });
  });

const WorkdirSchema = z.string({ error: 'expected a directory path (a string)' }).superRefine((v, ctx) => {
  if (v.trim() === '') ctx.addIssue({ code: 'custom', message: 'expected a non-empty directory path' });
  else if (v.length > SPEC_LIMITS.maxWorkdirLength) ctx.addIssue({ code: 'custom', message: `expected a path of at most ${SPEC_LIMITS.maxWorkdirLength} characters`, params: { full: true } });
  else if (/\p{Cc}/u.test(v)) ctx.addIssue({ code: 'custom', message: 'expected a path without control characters' });
  // A relative path is checked in normalize.ts (checkWorkdirs): only an uploaded folder gives it a meaning.
});

/** True for a workdir that names an uploaded folder's place, not a path on the machine. */
export function isRelativeWorkdir(v: string): boolean {
  return !v.startsWith('/') && v !== '~' && !v.startsWith('~/');
}

/** The refusal of a relative workdir without an upload (docs/spec.md "workdir"). */
export const RELATIVE_WORKDIR_REFUSED =
  'expected an absolute path or one starting with ~/ (a relative workdir needs its folder uploaded with the job: jobdeck launch does it, the API takes workdirUpload)';

/**
 * `file_mounts`: target → local source path. Bucket URLs and storage objects (`source`/`store`/
 * `mode`) are refused at their target, naming the alternative (docs/spec.md "file_mounts").
 */
const FileMountsSchema = z.unknown().transform((v, ctx): Record<string, string> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    ctx.addIssue({ code: 'custom', message: 'expected a map of target: local source path' });
    return z.NEVER;
  }
  const out: Record<string, string> = {};
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_FILE_MOUNTS) ctx.addIssue({ code: 'custom', message: `expected at most ${MAX_FILE_MOUNTS} file_mounts, got ${entries.length}`, params: { full: true } });
  for (const [target, source] of entries) {
    const at = { path: [target], params: { full: true } };
    if (target.trim() === '' || target.length > SPEC_LIMITS.maxWorkdirLength || /\p{Cc}/u.test(target) || target.split('/').includes('..')) {
      ctx.addIssue({ code: 'custom', message: `target ${JSON.stringify(target.slice(0, 80))}: expected a path (relative, ~/…, or absolute) of at most ${SPEC_LIMITS.maxWorkdirLength} characters, without control characters or ..`, ...at });
    } else if (source !== null && typeof source === 'object') {
      ctx.addIssue({ code: 'custom', message: `storage objects (source/store/mode) are not supported: jobdeck does not manage cloud storage; copy the data in setup (e.g. aws s3 cp, gsutil cp) or give a local path as the source (uploaded with the job)`, ...at });
    } else if (typeof source !== 'string' || source.trim() === '' || source.length > SPEC_LIMITS.maxWorkdirLength || /\p{Cc}/u.test(source)) {
      ctx.addIssue({ code: 'custom', message: `expected a local source path (a string of at most ${SPEC_LIMITS.maxWorkdirLength} characters)`, ...at });
    } else if (STORAGE_URL.test(source.trim())) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(source)} is a bucket or cloud-storage source, not supported: jobdeck does not manage cloud storage; copy the data in setup (e.g. aws s3 cp, gsutil cp) or give a local path as the source (uploaded with the job)`, ...at });
    } else out[target] = source;
  }
  return out;
});

/** envs: parsed by hand (keys checked one by one, `__proto__` kept as an own key). */
const EnvsSchema = z.unknown().transform((v, ctx): Record<string, string | null> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    ctx.addIssue({ code: 'custom', message: 'expected a map of NAME: value' });
    return z.NEVER;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > SPEC_LIMITS.maxEnvCount) {
    ctx.addIssue({ code: 'custom', message: `expected at most ${SPEC_LIMITS.maxEnvCount} env vars, got ${entries.length}`, params: { at: 'key', full: true } });
    return z.NEVER;
  }
  const out: Array<[string, string | null]> = [];
  for (const [k, raw] of entries) {
    const keyProblem = envNameProblem(k);
    if (keyProblem) ctx.addIssue({ code: 'custom', message: keyProblem, path: [k], params: { at: 'key', full: true } });
    let value: string | null;
    if (raw === null) value = null;
    else if (typeof raw === 'string') value = raw;
    else if (typeof raw === 'number' || typeof raw === 'boolean') value = String(raw);
    else {
      ctx.addIssue({ code: 'custom', message: 'expected a string, number or boolean value', path: [k] });
      continue;
    }
    const vp = value === null ? null : envValueProblem(value);
    if (vp) ctx.addIssue({ code: 'custom', message: vp, path: [k], params: { full: true } });
    out.push([k, value]);
  }
  return Object.fromEntries(out);
});

/** Checks an env var name (docs/spec.md "envs"); returns the problem or null. */
export function envNameProblem(k: string): string | null {
  if (!ENV_NAME.test(k)) return `invalid env var name ${describe(k)}: expected letters, digits and _ (not starting with a digit)`;
  if (k.toUpperCase().startsWith(RESERVED_ENV_PREFIX)) return `env var name ${describe(k)} is reserved: names starting with ${RESERVED_ENV_PREFIX} are set by jobdeck`;
  return null;
}

/** Checks an env var value (size, storable text); returns the problem or null. */
export function envValueProblem(v: string): string | null {
  const n = utf8Bytes(v);
  if (n > SPEC_LIMITS.maxEnvValueBytes) return `expected a value of at most ${KiB(SPEC_LIMITS.maxEnvValueBytes)}, got ${n} bytes`;
  return textProblem(v);
}

const NUMBER_RE = String.raw`(\d+(?:\.\d*)?|\.\d+)`;
const CPUS_RE = new RegExp(`^${NUMBER_RE}(\\+)?$`);
const MEMORY_RE = new RegExp(`^${NUMBER_RE}\\s*(\\+)?\\s*(?:([kmgt])(?:i?b)?)?\\s*(\\+)?$`, 'i');
const MEMORY_UNIT_GB: Record<string, number> = { k: 1 / (1024 * 1024), m: 1 / 1024, g: 1, t: 1024 };

const CPUS_EXPECTED = 'expected a CPU count > 0: a number (exactly, e.g. 2) or a string like "2+" (at least)';
const CpusSchema = z.union([z.number(), z.string()], { error: CPUS_EXPECTED }).transform((v, ctx) => {
  let n: number;
  let atLeast = false;
  if (typeof v === 'number') n = v;
  else {
    const m = CPUS_RE.exec(v.trim());
    if (!m) {
      ctx.addIssue({ code: 'custom', message: CPUS_EXPECTED });
      return z.NEVER;
    }
    n = Number(m[1]);
    atLeast = m[2] === '+';
  }
  if (!(n > 0) || !Number.isFinite(n)) {
    ctx.addIssue({ code: 'custom', message: CPUS_EXPECTED });
    return z.NEVER;
  }
  return { cpus: n, atLeast };
});

const MEMORY_EXPECTED = 'expected a memory size > 0 in GB: a number (e.g. 4) or a string like "4+", "8GB", "512MB"';
const MemorySchema = z.union([z.number(), z.string()], { error: MEMORY_EXPECTED }).transform((v, ctx) => {
  let gb: number;
  let atLeast = false;
  if (typeof v === 'number') gb = v;
  else {
    const m = MEMORY_RE.exec(v.trim());
    if (!m || (m[2] && m[4])) {
      ctx.addIssue({ code: 'custom', message: MEMORY_EXPECTED });
      return z.NEVER;
    }
    gb = Number(m[1]) * (m[3] ? MEMORY_UNIT_GB[m[3].toLowerCase()] : 1);
    atLeast = Boolean(m[2] || m[4]);
  }
  if (!(gb > 0) || !Number.isFinite(gb)) {
    ctx.addIssue({ code: 'custom', message: MEMORY_EXPECTED });
    return z.NEVER;
  }
  return { gb, atLeast };
});

const JobRecoveryObject = z.strictObject(
  {
    max_restarts_on_errors: z
      .int({ error: RESTARTS_EXPECTED })
      .min(0, { error: RESTARTS_EXPECTED })
      .max(SPEC_LIMITS.maxRestartsOnErrors, { error: `expected at most ${SPEC_LIMITS.maxRestartsOnErrors} restarts` })
      .nullish(),
    recover_on_exit_codes: z
      .preprocess((v) => (typeof v === 'number' ? [v] : v), z.array(ExitCodeSchema, { error: 'expected an exit code 0–255 or a list of them' }).max(256, { error: 'expected at most 256 exit codes' }))
      .nullish(),
    strategy: z
      .string({ error: 'expected a strategy name (a string, e.g. FAILOVER)' })
      .superRefine((v, ctx) => {
        const p = nameProblem(v);
        if (p) ctx.addIssue({ code: 'custom', message: p.replace('a name', 'a strategy name').replace('non-empty name', 'non-empty strategy name') });
      })
      .nullish(),
    restart_backoff: RestartBackoffSchema.nullish(),
  },
  { error: 'expected a map with max_restarts_on_errors, recover_on_exit_codes, restart_backoff, strategy (or a strategy name)' },
);

const JobRecoverySchema = z.preprocess((v) => (typeof v === 'string' ? { strategy: v } : v), JobRecoveryObject);

/** A key jobdeck knows from SkyPilot but cannot honour: an error saying why (null tolerated). */
const unsupported = (message: string) =>
  z
    .unknown()
    .superRefine((v, ctx) => {
      if (v !== undefined && v !== null) ctx.addIssue({ code: 'custom', message, params: { at: 'key', full: true } });
    })
    .optional();

const recorded = z.unknown().optional();

const INFRA_EXPECTED = `expected where to run: ${EXECUTOR_NAMES.map((n) => JSON.stringify(n)).join(' or ')}`;
/** `resources.infra` (or `cloud`, named by `key`): validated here, normalized in validateTask (kept as written in `other`). */
const infraSchema = (key: 'infra' | 'cloud') =>
  z.string({ error: INFRA_EXPECTED }).superRefine((v, ctx) => {
    const n = v.trim().toLowerCase();
    if (isExecutorKind(n)) return;
    const shown = describe(v);
    const message = n.startsWith('slurm/')
      ? `${key} ${shown}: jobdeck submits to the one Slurm cluster its server is set up for; write ${key}: slurm (the server picks the partition: JOBDECK_SLURM_PARTITION)`
      : `${key} ${shown} is not available: jobdeck runs tasks ${EXECUTOR_NAMES.map((n) => `on ${EXECUTOR_KINDS[n].runsOn} (${key}: ${n})`).join(' or ')}`;
    ctx.addIssue({ code: 'custom', message, params: { full: true } });
  });

/** A task's `resources` map (docs/spec.md "resources"); unknown keys are `unrecognized_keys` issues. */
const resourceShape = {
  cpus: CpusSchema.nullish(),
  memory: MemorySchema.nullish(),
  job_recovery: JobRecoverySchema.nullish(),
  ...Object.fromEntries(SKYPILOT_RESOURCE_KEYS.map((k) => [k, recorded])),
  // SkyPilot's older name of `infra`: the same values, the same rule (validateTask reads both).
  infra: infraSchema('infra').nullish(),
  cloud: infraSchema('cloud').nullish(),
  image_id: imageIdSchema(false).optional(),
  labels: LabelsSchema.nullish(),
};

/** Most alternatives `any_of` / `ordered` may list. */
export const MAX_RESOURCE_ALTERNATIVES = 16;

/** `any_of` / `ordered`: a list of resource maps, each over the task's other resources (docs/spec.md "any_of and ordered"). */
const alternativesSchema = (key: 'any_of' | 'ordered') =>
  z
    .array(z.strictObject(resourceShape, { error: `expected a map of resources (one alternative of ${key})` }), { error: `expected a list of resource maps (${key}: the alternatives)` })
    .min(1, { error: `expected at least one alternative in ${key}` })
    .max(MAX_RESOURCE_ALTERNATIVES, { error: `expected at most ${MAX_RESOURCE_ALTERNATIVES} alternatives in ${key}` })
    .nullish();

/** A task's `resources` map (docs/spec.md "resources"); unknown keys are `unrecognized_keys` issues. */
export const ResourcesSchema = z.strictObject(
  { ...resourceShape, any_of: alternativesSchema('any_of'), ordered: alternativesSchema('ordered') },
  { error: 'expected a map of resources (cpus, memory, job_recovery, …)' },
);

const NUM_NODES_EXPECTED = 'expected a node count (an integer ≥ 1)';

/** One task document (docs/spec.md "Task keys"); unknown keys are `unrecognized_keys` issues. */
export const TaskSchema = z.strictObject(
  {
    name: NameSchema.nullish(),
    envs: EnvsSchema.nullish(),
    secrets: EnvsSchema.nullish(),
    workdir: WorkdirSchema.nullish(),
    setup: scriptSchema('setup').nullish(),
    run: scriptSchema('run').nullish(),
    resources: ResourcesSchema.nullish(),
    job_recovery: JobRecoverySchema.nullish(),
    num_nodes: z.int({ error: NUM_NODES_EXPECTED }).min(1, { error: NUM_NODES_EXPECTED }).max(SPEC_LIMITS.maxNumNodes, { error: `expected at most ${SPEC_LIMITS.maxNumNodes} nodes` }).nullish(),
    priority: z.int({ error: PRIORITY_EXPECTED }).min(PRIORITY.min, { error: PRIORITY_EXPECTED }).max(PRIORITY.max, { error: PRIORITY_EXPECTED }).nullish(),
    queue: z.string({ error: QUEUE_NAME_EXPECTED }).regex(QUEUE_NAME, { error: QUEUE_NAME_EXPECTED }).nullish(),
    notify: NotifySchema.nullish(),
    retention: RetentionSchema.nullish(),
    depends_on: DependsOnSchema.nullish(),
    array: ArraySchema.nullish(),
    file_mounts: FileMountsSchema.nullish(),
    max_duration: MaxDurationSchema.nullish(),
    service: unsupported('service (SkyServe) is not supported: jobdeck runs jobs, not services'),
    config: unsupported('config (SkyPilot config overrides) is not supported'),
    experimental: unsupported('experimental (SkyPilot config overrides) is not supported'),
    volumes: unsupported('volumes is not supported: jobdeck runs tasks on this machine; refer to files by path'),
    inputs: unsupported('inputs (a SkyPilot optimizer hint) is not supported'),
    outputs: unsupported('outputs (a SkyPilot optimizer hint) is not supported'),
    event_callback: unsupported('event_callback is not supported: name a webhook with notify: [NAME] to hear of job events'),
    pool: unsupported('pool (SkyPilot managed-job pools) is not supported: each job runs on its executor (resources.infra); queue picks the operator queue'),
  },
  { error: 'expected a map of task keys (name, envs, secrets, workdir, file_mounts, setup, run, resources, job_recovery, num_nodes, max_duration, priority, queue, notify, retention, depends_on, array)' },
);

const TASK_KEYS = ['name', 'envs', 'secrets', 'workdir', 'file_mounts', 'setup', 'run', 'resources', 'job_recovery', 'num_nodes', 'max_duration', 'priority', 'queue', 'notify', 'retention', 'depends_on', 'array'];
const RESOURCE_KEYS = ['cpus', 'memory', 'job_recovery', ...SKYPILOT_RESOURCE_KEYS];
const JOB_RECOVERY_KEYS = ['max_restarts_on_errors', 'recover_on_exit_codes', 'restart_backoff', 'strategy'];

/** The keys a map at `path` allows (for "did you mean"). */
export function allowedKeysAt(path: readonly PathSeg[]): string[] {
  const last = path[path.length - 1];
  if (path.length === 0) return TASK_KEYS;
  const nested: Record<string, string[]> = { resources: RESOURCE_KEYS, job_recovery: JOB_RECOVERY_KEYS, retention: RETENTION_KEYS, depends_on: ['jobs', 'tasks', 'after'], array: ['num_jobs', 'params'] };
  return typeof last === 'string' && Object.hasOwn(nested, last) ? nested[last] : [];
}

