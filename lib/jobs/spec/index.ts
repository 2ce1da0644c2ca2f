/**
 * The job spec: YAML (or its JSON form) → a validated, normalized pipeline. SkyPilot-compatible
 * where the two overlap (sky/utils/schemas.py task + resources schema, sky/utils/dag_utils.py for
 * pipelines): a SkyPilot task YAML that only uses what jobdeck can do parses unchanged.
 *
 * The reference — documents, every key, the job name, envs and overrides, resources,
 * job_recovery, the SkyPilot keys, the error format and the limits — is docs/spec.md.
 *
 * Parts: schema.ts (keys, types, limits), positions.ts (YAML loading, key path → line),
 * messages.ts (error texts), text.ts (what text is accepted), recovery.ts (job_recovery's parts), normalize.ts (documents → PipelineSpec), hash.ts (specHash: the only
 * node:* import; everything else here is plain JS).
 */
import { describe, formatPath, issueAt, SpecError, type SpecIssue } from './messages';
import { deriveName, finish } from './normalize';
import { checkJsonValue, loadYaml, type RawDoc } from './positions';
import { setting } from '../../config';
import { DEFAULT_EXECUTOR, EXECUTOR_NAMES, isExecutorKind, type ExecutorKind } from '../executor-kinds';
import { nameProblem, type PipelineSpec, type SpecOptions, type SpecOverrides, type TaskSpec } from './schema';

export { formatSpecIssue, issueAt, SpecError, type SpecIssue } from './messages';
export { DOCKER_IMAGE_PLACE, DOCKER_IMAGE_REFUSED, dockerImageOf } from './images';
export { MAX_GPUS, MAX_GPU_ALTERNATIVES, parseAccelerators, type GpuOption } from './accelerators';
export { gpuProblem, pipelineGpus, taskGpuOptions, type JobGpus } from './gpu-check';
export { formatDuration, parseDuration, MAX_DURATION_MS } from './duration';
export { jobLabels, LABEL_KEY, LABEL_KEY_EXPECTED, labelValueProblem, MAX_LABELS, mergedLabels, taskLabels } from './labels';
export {
  isRelativeWorkdir,
  type SpecUploads,
  ResourcesSchema,
  TaskSchema,
  SKYPILOT_RESOURCE_KEYS,
  SKYPILOT_RESOURCE_WARNINGS,
  STRATEGY_WARNING,
  SPEC_EXAMPLE_NAMES,
  SPEC_LIMITS,
  PRIORITY,
  PRIORITY_EXPECTED,
  priorityProblem,
  DEFAULT_QUEUE,
  QUEUE_NAME,
  QUEUE_NAME_EXPECTED,
  queueNameProblem,
  type JobRecovery,
  type PipelineSpec,
  type Resources,
  type SpecOptions,
  type SpecOverrides,
  type TaskSpec,
} from './schema';
export * from './flow';
export { MAX_RETENTION_DAYS, type RetentionPeriod, type SpecRetention } from './retention';
export { canonicalJson, specHash } from './hash';
export { EXECUTION_MODES, HEADER_KEYS, taskEnvName, type ExecutionMode } from './task-graph-spec';
export { invisibleIn, textProblem, unstorableAt, YAML_WRITE } from './text';
export { checkJsonValue as checkPlainValue, type ValueProblem } from './positions';

/**
 * Parses a YAML job spec (one document = one task; several = a pipeline; docs/spec.md
 * "Documents").
 * @throws SpecError listing every issue (with 1-based lines), including YAML syntax errors and
 *   refused hostile input (size, documents, depth, aliases).
 */
export function parseJobSpec(text: string, opts: SpecOptions = {}): PipelineSpec {
  return readJobSpec(text, opts).spec;
}

/** A valid spec and its warnings (keys accepted, not acted on: docs/spec.md "SkyPilot keys"). */
export interface ReadSpec {
  spec: PipelineSpec;
  warnings: SpecIssue[];
  /** Where each `depends_on.jobs` entry is written (file, line, path), for the submit's errors about them. */
  jobRefsAt?: Array<Omit<SpecIssue, 'message'>>;
}

/** Like {@link parseJobSpec}, with the spec's warnings. @throws SpecError */
export function readJobSpec(text: string, opts: SpecOptions = {}): ReadSpec {
  const file = opts.filename ?? 'job.yaml';
  const loaded = loadYaml(String(text), file);
  if (loaded.fatal) throw new SpecError(loaded.issues);
  const { spec, issues, warnings, jobRefsAt } = finish(loaded.docs, file, opts.overrides, loaded.issues, opts.defaultExecutor, opts.queues, opts.uploads, opts.localGpus, opts.containers);
  if (!spec) throw new SpecError(issues);
  return { spec, warnings, jobRefsAt };
}

/**
 * Like {@link parseJobSpec} but returns the issues instead of throwing (for editors / lint):
 * `spec` is null exactly when `issues` is non-empty. `required`: the issues that are envs or
 * secrets without a value (required at launch; also in `issues`).
 */
export function checkJobSpec(text: string, opts: SpecOptions = {}): { spec: PipelineSpec | null; issues: SpecIssue[]; warnings: SpecIssue[]; required: SpecIssue[] } {
  const file = opts.filename ?? 'job.yaml';
  const loaded = loadYaml(String(text), file);
  if (loaded.fatal) return { spec: null, issues: loaded.issues, warnings: [], required: [] };
  return finish(loaded.docs, file, opts.overrides, loaded.issues, opts.defaultExecutor, opts.queues, opts.uploads, opts.localGpus, opts.containers);
}

/**
 * The JSON form (e.g. a POST body): one task object, or an array of documents with the same
 * rules as YAML documents (header-name rule included). Issues carry `line: null`.
 * @throws SpecError
 */
export function parseJobSpecObject(value: unknown, opts: SpecOptions = {}): PipelineSpec {
  return readJobSpecObject(value, opts).spec;
}

/** Like {@link parseJobSpecObject}, with the spec's warnings (no lines: the JSON form). @throws SpecError */
export function readJobSpecObject(value: unknown, opts: SpecOptions = {}): ReadSpec {
  const file = opts.filename ?? 'job.json';
  const pre = checkJsonValue(value);
  if (pre.length) {
    const label = Array.isArray(value) ? 'document' : 'task[0]';
    throw new SpecError(pre.map((p) => issueAt(file, null, p.path.length ? formatPath(label, p.path) : '', p.message)));
  }
  const values = Array.isArray(value) ? value : [value];
  const docs: RawDoc[] = values.map((v) => ({ value: v, locate: () => null, startLoc: null, broken: false, yamlIssues: [] }));
  if (docs.length === 0) throw new SpecError([issueAt(file, null, '', 'the spec is empty: expected a task (a map with at least `run`) or a list of them')]);
  const { spec, issues, warnings, jobRefsAt } = finish(docs, file, opts.overrides, [], opts.defaultExecutor, opts.queues, opts.uploads, opts.localGpus, opts.containers);
  if (!spec) throw new SpecError(issues);
  return { spec, warnings, jobRefsAt };
}

/**
 * A one-task job whose `run` is `cmd` (the CLI's `--cmd`), validated like a file.
 * @throws SpecError when the command is empty or breaks a limit, or a name/env is invalid.
 */
export function commandSpec(cmd: string, opts: SpecOverrides = {}, defaultExecutor?: ExecutorKind, queues?: readonly string[]): PipelineSpec {
  const file = 'command';
  if (typeof cmd !== 'string' || cmd.trim() === '') {
    throw new SpecError([issueAt(file, null, 'run', `expected a non-empty command, got ${describe(cmd)}`)]);
  }
  return parseJobSpecObject(commandDocument(cmd, opts.name), { filename: file, overrides: opts, defaultExecutor, queues });
}

/**
 * The one document of a one-command job: its task is named — the `name` given (`jobdeck launch
 * -n`), else the job name the command gives (docs/spec.md "Job name"), else `cmd` — so the job
 * and its task carry the same name, and the stored YAML re-runs as it ran.
 */
export function commandDocument(cmd: string, name?: string): { name: string; run: string } {
  // A bad `-n` is the override's to report (overrides.name), once.
  const given = name !== undefined && nameProblem(name) === null ? name : undefined;
  return { name: given ?? deriveName([{ run: cmd }]) ?? 'cmd', run: cmd };
}

/**
 * The executor a job runs on (stored as Job.executor): the spec's own (`resources.infra`), else
 * the server's default `JOBDECK_EXECUTOR` (`local` | `slurm`, case-insensitive; default `local`).
 * @throws Error when JOBDECK_EXECUTOR names no known executor.
 */
export function jobExecutor(spec: PipelineSpec, env: Record<string, string | undefined> = process.env): ExecutorKind {
  return spec.executor ?? serverExecutor(env);
}

/**
 * The server's default executor, `JOBDECK_EXECUTOR` (`local` | `slurm`, case-insensitive;
 * default `local`). @throws Error when it names no known executor.
 */
export function serverExecutor(env: Record<string, string | undefined> = process.env): ExecutorKind {
  const named = setting('JOBDECK_EXECUTOR', env);
  if (named === null) return DEFAULT_EXECUTOR;
  const raw = named.toLowerCase();
  if (isExecutorKind(raw)) return raw;
  throw new Error(`JOBDECK_EXECUTOR must be one of ${EXECUTOR_NAMES.join(', ')}, got ${JSON.stringify(named)}`);
}

/** A task's node count (SkyPilot's `num_nodes`; absent = 1). */
export function taskNodes(task: Pick<TaskSpec, 'numNodes'>): number {
  return task.numNodes && task.numNodes > 1 ? task.numNodes : 1;
}

/**
 * The CPUs a job asks for — what admission counts against the executor's CPUs (docs/slurm.md
 * "Multi-node tasks"): in a pipeline the max over its tasks (they run one at a time) of CPUs per
 * node × nodes; in a job group or task DAG (tasks may run side by side: `after` set) the sum, so
 * that the job is admitted as a gang — all its tasks fit at once, or it waits (docs/design.md §17).
 */
export function jobCpus(spec: PipelineSpec): number {
  const side = spec.tasks.some((t) => t.after !== undefined);
  return spec.tasks.reduce((n, t) => (side ? n + t.resources.cpus * taskNodes(t) : Math.max(n, t.resources.cpus * taskNodes(t))), 0) || 1;
}

/** The nodes a job asks for at once: the max over its tasks of `num_nodes` (1 for one-node tasks). */
export function jobNodes(spec: PipelineSpec): number {
  return spec.tasks.reduce((max, t) => Math.max(max, taskNodes(t)), 1);
}
