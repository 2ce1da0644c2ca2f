/**
 * The job spec: YAML (or its JSON form) → a validated, normalized pipeline. SkyPilot-compatible
 * where the two overlap (sky/utils/schemas.py task + resources schema, sky/utils/dag_utils.py for
 * pipelines): a SkyPilot task YAML that only uses what jobdeck can do parses unchanged.
 *
 * The reference — documents, every key, the job name, envs and overrides, resources,
 * job_recovery, the SkyPilot keys, the error format and the limits — is docs/spec.md.
 *
 * Parts: schema.ts (keys, types, limits), positions.ts (YAML loading, key path → line),
 * messages.ts (error texts), text.ts (what text is accepted), normalize.ts (documents → PipelineSpec), hash.ts (specHash: the only
 * node:* import; everything else here is plain JS).
 */
import { describe, formatPath, issueAt, SpecError, type SpecIssue } from './messages';
import { finish } from './normalize';
import { checkJsonValue, loadYaml, type RawDoc } from './positions';
import { SPEC_EXECUTORS, type PipelineSpec, type SpecExecutor, type SpecOptions, type SpecOverrides, type TaskSpec } from './schema';

export { formatSpecIssue, SpecError, type SpecIssue } from './messages';
export { MAX_GPUS, parseAccelerators, type GpuRequest } from './accelerators';
export {
  isRelativeWorkdir,
  type SpecUploads,
  DOCKER_IMAGE_REFUSED,
  MEMORY_WARNING,
  ResourcesSchema,
  TaskSchema,
  SKYPILOT_RESOURCE_KEYS,
  SKYPILOT_RESOURCE_WARNINGS,
  STRATEGY_WARNING,
  SPEC_EXAMPLE_NAMES,
  SPEC_EXECUTORS,
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
  type SpecExecutor,
  type SpecOptions,
  type SpecOverrides,
  type TaskSpec,
} from './schema';
export { MAX_RETENTION_DAYS, type RetentionPeriod, type SpecRetention } from './retention';
export { canonicalJson, specHash } from './hash';
export { invisibleIn, textProblem, unstorableAt } from './text';
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
}

/** Like {@link parseJobSpec}, with the spec's warnings. @throws SpecError */
export function readJobSpec(text: string, opts: SpecOptions = {}): ReadSpec {
  const { spec, issues, warnings } = checkJobSpec(text, opts);
  if (!spec) throw new SpecError(issues);
  return { spec, warnings };
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
  return finish(loaded.docs, file, opts.overrides, loaded.issues, opts.defaultExecutor, opts.queues, opts.uploads, opts.localGpus);
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
  const { spec, issues, warnings } = finish(docs, file, opts.overrides, [], opts.defaultExecutor, opts.queues, opts.uploads, opts.localGpus);
  if (!spec) throw new SpecError(issues);
  return { spec, warnings };
}

/**
 * A one-task job whose `run` is `cmd` (the CLI's `--cmd`), validated like a file.
 * @throws SpecError when the command is empty or breaks a limit, or a name/env is invalid.
 */
export function commandSpec(cmd: string, opts: SpecOverrides = {}, defaultExecutor?: SpecExecutor, queues?: readonly string[]): PipelineSpec {
  const file = 'command';
  if (typeof cmd !== 'string' || cmd.trim() === '') {
    throw new SpecError([issueAt(file, null, 'run', `expected a non-empty command, got ${describe(cmd)}`)]);
  }
  return parseJobSpecObject({ run: cmd }, { filename: file, overrides: opts, defaultExecutor, queues });
}

/**
 * The executor a job runs on (stored as Job.executor): the spec's own (`resources.infra`), else
 * the server's default `JOBDECK_EXECUTOR` (`local` | `slurm`, case-insensitive; default `local`).
 * @throws Error when JOBDECK_EXECUTOR names no known executor.
 */
export function jobExecutor(spec: PipelineSpec, env: Record<string, string | undefined> = process.env): SpecExecutor {
  return spec.executor ?? serverExecutor(env);
}

/**
 * The server's default executor, `JOBDECK_EXECUTOR` (`local` | `slurm`, case-insensitive;
 * default `local`). @throws Error when it names no known executor.
 */
export function serverExecutor(env: Record<string, string | undefined> = process.env): SpecExecutor {
  const raw = (env.JOBDECK_EXECUTOR ?? '').trim().toLowerCase();
  if (raw === '') return 'local';
  if ((SPEC_EXECUTORS as readonly string[]).includes(raw)) return raw as SpecExecutor;
  throw new Error(`JOBDECK_EXECUTOR must be one of ${SPEC_EXECUTORS.join(', ')}, got ${JSON.stringify(env.JOBDECK_EXECUTOR)}`);
}

/** A task's node count (SkyPilot's `num_nodes`; absent = 1). */
export function taskNodes(task: Pick<TaskSpec, 'numNodes'>): number {
  return task.numNodes && task.numNodes > 1 ? task.numNodes : 1;
}

/**
 * The CPUs a job asks for: the max over its tasks (tasks run one at a time) of CPUs per node ×
 * nodes — what admission counts against the executor's CPUs (docs/slurm.md "Multi-node tasks").
 */
export function jobCpus(spec: PipelineSpec): number {
  return spec.tasks.reduce((max, t) => Math.max(max, t.resources.cpus * taskNodes(t)), 0) || 1;
}

/** The nodes a job asks for at once: the max over its tasks of `num_nodes` (1 for one-node tasks). */
export function jobNodes(spec: PipelineSpec): number {
  return spec.tasks.reduce((max, t) => Math.max(max, taskNodes(t)), 1);
}
