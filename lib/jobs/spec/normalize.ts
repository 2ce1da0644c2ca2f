/**
 * A loaded spec's documents → a validated {@link PipelineSpec}: the header document, each task
 * through the schema, overrides, one executor per pipeline, envs with their required values, and
 * the job name. The rules are in docs/spec.md ("Documents", "Job name", "envs", "resources",
 * "job_recovery"). Pure: no node:* import.
 */
import type { z } from 'zod';
import { describe, formatPath, issueAt, KiB, lineOf, MAX_ISSUES_PER_DOCUMENT, sortIssues, unknownKeyMessage, type PathSeg, type SpecIssue } from './messages';
import { checkJsonValue, type RawDoc } from './positions';
import { parseAccelerators } from './accelerators';
import { gpuProblem, localOptions, taskGpuOptions, typesKey } from './gpu-check';
import type { GpuDevice } from '../gpus';
import { checkFileMounts, checkImages } from './task-checks';
import { dockerImageOf } from './images';
import { cutText, replaceInvisible } from './text';
import {
  allowedKeysAt,
  DEFAULT_QUEUE,
  envNameProblem,
  envValueProblem,
  isRelativeWorkdir,
  nameProblem,
  RELATIVE_WORKDIR_REFUSED,
  type SpecUploads,
  QUEUE_NAME_EXPECTED,
  queueNameProblem,
  SKYPILOT_RESOURCE_KEYS,
  SKYPILOT_RESOURCE_WARNINGS,
  SPEC_LIMITS,
  STRATEGY_WARNING,
  TaskSchema,
  utf8Bytes,
  type IssueParams,
  type PipelineSpec,
  type Resources,
  type SpecOverrides,
  type TaskSpec,
} from './schema';
import type { SpecRetention } from './retention';
import { paramText, type SpecArray, type SpecDependsOn } from './flow';
import { flowKeys, pipelineValue } from './flow-keys';
import { applyTaskGraph, groupEnvs, splitHeader } from './task-graph-spec';
import { capabilitiesOf, DEFAULT_EXECUTOR, kindsWith, type ExecutorKind } from '../executor-kinds';

/** How a message names the executors that run a multi-node task ("Slurm"). */
const multiNodeLabels = () => kindsWith((c) => c.multiNode).map((n) => capabilitiesOf(n)!.label).join(' or ');

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A task as validated, before overrides (envs may still hold nulls). */
interface DraftTask extends Omit<TaskSpec, 'envs' | 'secrets'> {
  envs: Record<string, string | null>;
  secrets: Record<string, string | null>;
  /** `resources.infra`, normalized; null when not given. */
  infra: ExecutorKind | null;
  /** `priority`; null when not given. */
  priority: number | null;
  /** `queue`; null when not given. */
  queue: string | null;
  /** `notify`; null when not given. */
  notify: string[] | null;
  /** `retention`; null when not given. */
  retention: SpecRetention | null;
  /** `depends_on`; null when not given. */
  dependsOn: SpecDependsOn | null;
  /** `array`; null when not given. */
  array: SpecArray | null;
  doc: RawDoc;
  label: string;
  /** What the task's keys are accepted with, not acted on (docs/spec.md "SkyPilot keys"). */
  warnings: SpecIssue[];
}

/**
 * What {@link finish} gives: `spec` is null exactly when `issues` is non-empty. `warnings`: keys
 * accepted and not acted on (file:line, key path, what jobdeck does instead), in reading order.
 */
export interface Checked {
  spec: PipelineSpec | null;
  issues: SpecIssue[];
  warnings: SpecIssue[];
  /**
   * The envs and secrets without a value ("required at launch", SkyPilot's rule): also in
   * `issues` (a submit without them is refused), kept apart so an editor can tell them.
   */
  required: SpecIssue[];
  /**
   * Where each of `spec.dependsOn.jobs` is written (an issue without its message: file, line,
   * path), so that a submit that cannot resolve one says where; empty when there are none.
   */
  jobRefsAt?: Array<Omit<SpecIssue, 'message'>>;
}

const DEFAULT_RESOURCES = (): Resources => ({ cpus: 1, cpusAtLeast: false, memoryGb: null, memoryAtLeast: false, other: {} });

/**
 * Validates and normalizes the documents (YAML or the JSON form) into a pipeline. `issues` holds
 * what loading found already; every problem is added to it, sorted by line at the end.
 */
export function finish(
  docs: RawDoc[],
  file: string,
  overrides: SpecOverrides | undefined,
  issues: SpecIssue[],
  defaultExecutor?: ExecutorKind,
  queues?: readonly string[],
  uploads: SpecUploads = {},
  localGpus?: readonly GpuDevice[],
  containers = false,
): Checked {
  if (docs.length === 0 || (docs.length === 1 && docs[0].value == null && !docs[0].broken)) {
    issues.push(issueAt(file, docs[0]?.startLoc ?? null, '', 'the spec is empty: expected a task (a map with at least `run`) or several separated by ---'));
    return { spec: null, issues, warnings: [], required: [] };
  }
  const { header, taskDocs } = splitHeader(docs, file, issues);
  const headerName = header.name;
  if (taskDocs.length > SPEC_LIMITS.maxTasks) {
    issues.push(issueAt(file, taskDocs[SPEC_LIMITS.maxTasks].startLoc, `task[${SPEC_LIMITS.maxTasks}]`, `too many tasks: ${taskDocs.length}, at most ${SPEC_LIMITS.maxTasks}`));
    return { spec: null, issues, warnings: [], required: [] };
  }
  const drafts: DraftTask[] = [];
  taskDocs.forEach((doc, index) => {
    const draft = validateDocument(doc, `task[${index}]`, file, issues, { defaultExecutor, localGpus });
    if (draft) drafts.push(draft);
  });
  const overrideEnvs = readOverrides(overrides, file, issues);
  const overrideSecrets = readEnvMap(overrides?.secrets, 'overrides.secrets', file, issues);
  const executor = pipelineValue(drafts, (d) => d.infra, ['resources', 'infra'], 'infra', 'run on one executor', file, issues);
  const priority = pipelineValue(drafts, (d) => d.priority, ['priority'], 'priority', 'have one priority', file, issues);
  const fileQueue = pipelineValue(drafts, (d) => d.queue, ['queue'], 'queue', 'are in one queue', file, issues);
  const overrideQueue = readQueueOverride(overrides, file, issues);
  const queue = overrideQueue ?? fileQueue;
  if (overrideQueue !== null) checkQueue(overrideQueue, null, queues, file, issues);
  else if (queue !== null) checkQueue(queue, drafts, queues, file, issues);
  const notify = pipelineValue(drafts, (d) => (d.notify ? [...new Set(d.notify)].join(', ') : null), ['notify'], 'notify', 'notify the same webhooks', file, issues);
  const retentionKey = pipelineValue(drafts, (d) => (d.retention ? JSON.stringify({ logs: d.retention.logs, job: d.retention.job }) : null), ['retention'], 'retention', 'have one retention', file, issues);
  const retention = retentionKey === null ? null : (JSON.parse(retentionKey) as SpecRetention);
  const flow = flowKeys(drafts, file, issues);
  checkNodes(drafts, executor ?? defaultExecutor ?? null, file, issues);
  checkAccelerators(drafts, executor ?? defaultExecutor ?? null, localGpus, file, issues);
  checkImages(drafts, executor ?? defaultExecutor ?? null, containers, file, issues);
  if (!uploads.workdir) checkWorkdirs(drafts, file, issues);
  checkFileMounts(drafts, uploads, file, issues);
  const required: SpecIssue[] = [];
  const tasks = drafts.map((d) => withEnvs(d, overrideEnvs, overrideSecrets, file, issues, required));
  applyTaskGraph(drafts.map((d, i) => ({ label: d.label, doc: d.doc, task: tasks[i] })), header, file, issues);

  const warnings = sortIssues(drafts.flatMap((d) => d.warnings));
  if (issues.length) return { spec: null, issues: sortIssues(issues), warnings, required: sortIssues(required) };
  const name = (overrides?.name as string | undefined) ?? headerName ?? tasks[0]?.name ?? deriveName(tasks) ?? 'job';
  const spec: PipelineSpec = { name, tasks, ...(executor ? { executor } : {}), ...(priority !== null ? { priority } : {}), ...(queue !== null ? { queue } : {}), ...(notify !== null ? { notify: notify.split(', ') } : {}), ...(retention !== null ? { retention } : {}) };
  if (header.execution === 'parallel') {
    spec.execution = 'parallel';
    groupEnvs(tasks, name, executor ?? defaultExecutor ?? DEFAULT_EXECUTOR).forEach((e, i) => Object.assign(tasks[i].envs, e));
  }
  if (flow.dependsOn) spec.dependsOn = flow.dependsOn;
  if (flow.array) spec.array = flow.array;
  return { spec, issues: [], warnings, required, jobRefsAt: flow.jobRefsAt };
}


/** One task document → its draft, or null with its issues added (a broken one adds none here). */
function validateDocument(doc: RawDoc, label: string, file: string, issues: SpecIssue[], where: Where): DraftTask | null {
  if (doc.broken) return null;
  if (doc.value == null) {
    issues.push(issueAt(file, doc.startLoc, label, `empty document: expected a task${doc.startLoc ? ' (remove the extra --- or add the task)' : ''}`));
    return null;
  }
  // YAML values are checked like the JSON form too (timestamps, binary, sets are not JSON).
  const problems = checkJsonValue(doc.value);
  if (problems.length) {
    for (const p of problems) issues.push(issueAt(file, doc.locate(p.path, 'value'), formatPath(label, p.path), p.message));
    return null;
  }
  const parsed = TaskSchema.safeParse(doc.value);
  if (!parsed.success) {
    reportSchemaIssues(parsed.error.issues, doc, label, file, issues);
    return null;
  }
  return draftOf(parsed.data, doc, label, file, issues, where);
}

/**
 * zod's issues → spec issues at their lines, at most {@link MAX_ISSUES_PER_DOCUMENT} (then one
 * "…and N more"): bounded work and output for hostile documents (thousands of bad keys or items).
 */
function reportSchemaIssues(zodIssues: z.core.$ZodIssue[], doc: RawDoc, label: string, file: string, issues: SpecIssue[]): void {
  const raw = doc.value;
  let reported = 0;
  const total = zodIssues.reduce((n, zi) => n + (zi.code === 'unrecognized_keys' ? zi.keys.length : 1), 0);
  const full = () => {
    if (reported < MAX_ISSUES_PER_DOCUMENT) return false;
    const last = issues[issues.length - 1];
    const loc = last && last.line != null ? { line: last.line, column: last.column ?? 1, endLine: last.endLine ?? last.line, endColumn: last.endColumn ?? 1 } : doc.startLoc;
    issues.push(issueAt(file, loc, label, `…and ${total - reported} more issues in this document`));
    return true;
  };
  for (const zi of zodIssues) {
    let path = zi.path.filter((s): s is PathSeg => typeof s === 'string' || typeof s === 'number');
    if (zi.code === 'unrecognized_keys') {
      for (const key of zi.keys) {
        if (full()) return;
        reported++;
        issues.push(issueAt(file, doc.locate([...path, key], 'key'), formatPath(label, [...path, key]), unknownKeyMessage(key, allowedKeysAt(path))));
      }
      continue;
    }
    if (full()) return;
    reported++;
    const params = ((zi as { params?: IssueParams }).params ?? {}) as IssueParams;
    path = existingPath(raw, path);
    const message = params.full ? zi.message : `${zi.message}, got ${describe(valueAt(raw, path))}`;
    issues.push(issueAt(file, doc.locate(path, params.at === 'key' ? 'key' : 'value'), formatPath(label, path), message));
  }
}

/** A task that passed the schema → its draft: defaults, `job_recovery` from either place, infra. */
function draftOf(t: z.output<typeof TaskSchema>, doc: RawDoc, label: string, file: string, issues: SpecIssue[], where: Where): DraftTask | null {
  let res = t.resources ?? null;
  let alternative: Resources['alternative'];
  if (res && (res.any_of || res.ordered)) {
    const picked = pickAlternative(res, t.num_nodes ?? 1, where, doc, label, file, issues);
    if (!picked) return null;
    [res, alternative] = picked;
  }
  if (t.job_recovery != null && res?.job_recovery != null) {
    issues.push(
      issueAt(
        file,
        doc.locate(['resources', 'job_recovery'], 'key'),
        `${label}.resources.job_recovery`,
        `job_recovery is given twice (also at the top level${lineOf(doc.locate(['job_recovery'], 'key'))}): keep one`,
      ),
    );
    return null;
  }
  const jr = t.job_recovery ?? res?.job_recovery ?? null;
  const other: Record<string, unknown> = {};
  if (res) {
    for (const k of SKYPILOT_RESOURCE_KEYS) {
      const v = (res as Record<string, unknown>)[k];
      if (v !== undefined && v !== null) other[k] = v;
    }
  }
  const resources: Resources = {
    ...DEFAULT_RESOURCES(),
    ...(res?.cpus ? { cpus: res.cpus.cpus, cpusAtLeast: res.cpus.atLeast } : {}),
    ...(res?.memory ? { memoryGb: res.memory.gb, memoryAtLeast: res.memory.atLeast } : {}),
    other,
    ...(alternative ? { alternative } : {}),
  };
  const infra = infraOf(res, doc, label, file, issues);
  if (infra === false) return null;
  const blankToNull = (s: string | null | undefined) => (s == null || s.trim() === '' ? null : s);
  return {
    name: t.name ?? null,
    setup: blankToNull(t.setup),
    run: blankToNull(t.run),
    envs: t.envs ?? {},
    secrets: t.secrets ?? {},
    workdir: t.workdir ?? null,
    ...(t.file_mounts && Object.keys(t.file_mounts).length ? { fileMounts: t.file_mounts } : {}),
    resources,
    jobRecovery: {
      maxRestartsOnErrors: jr?.max_restarts_on_errors ?? 0,
      recoverOnExitCodes: [...new Set(jr?.recover_on_exit_codes ?? [])].sort((a, b) => a - b),
      strategy: jr?.strategy ?? null,
      ...(jr?.restart_backoff != null ? { restartBackoffMs: jr.restart_backoff } : {}),
    },
    ...(t.num_nodes != null && t.num_nodes > 1 ? { numNodes: t.num_nodes } : {}),
    ...(t.max_duration != null ? { maxDurationMs: t.max_duration } : {}),
    infra,
    priority: t.priority ?? null,
    queue: t.queue ?? null,
    notify: t.notify ?? null,
    retention: t.retention ?? null,
    dependsOn: t.depends_on?.jobs ? { jobs: t.depends_on.jobs, after: t.depends_on.after ?? 'ok' } : null,
    array: t.array ? { numJobs: t.array.num_jobs ?? 1, params: Object.entries(t.array.params ?? {}).map(([k, vs]) => [k, vs.map(paramText)] as [string, string[]]) } : null,
    doc,
    label,
    warnings: draftWarnings(other, jr?.strategy ?? null, t.job_recovery != null, doc, label, file),
  };
}

/** What the choice among resource alternatives depends on: where the job would run, with what. */
interface Where {
  defaultExecutor?: ExecutorKind;
  localGpus?: readonly GpuDevice[];
}

type ResourcesIn = NonNullable<z.output<typeof TaskSchema>['resources']>;

/**
 * `any_of` / `ordered` (docs/spec.md "any_of and ordered"): each alternative merged over the
 * task's other resources, the first one the executor it names (else the server's) can satisfy is
 * used — `ordered` in order, `any_of` in the order written too (jobdeck has no cost optimizer to
 * rank them). What cannot be satisfied: the local executor without the GPUs asked for (no
 * device of the type, too few), or with num_nodes > 1; a share of a GPU on Slurm; an
 * accelerators form that is refused. None: an issue listing each reason.
 */
function pickAlternative(res: ResourcesIn, numNodes: number, where: Where, doc: RawDoc, label: string, file: string, issues: SpecIssue[]): [ResourcesIn, NonNullable<Resources['alternative']>] | null {
  if (res.any_of && res.ordered) {
    issues.push(issueAt(file, doc.locate(['resources', 'ordered'], 'key'), formatPath(label, ['resources', 'ordered']), 'give any_of or ordered, not both'));
    return null;
  }
  const key = res.any_of ? 'any_of' : 'ordered';
  const alts = (res.any_of ?? res.ordered)!;
  const { any_of: _a, ordered: _o, ...base } = res;
  const reasons: string[] = [];
  for (const [index, alt] of alts.entries()) {
    const merged = { ...base, ...Object.fromEntries(Object.entries(alt).filter(([, v]) => v !== undefined && v !== null)) } as ResourcesIn;
    const named = (merged.infra ?? merged.cloud ?? null) as string | null;
    const executor = named ? named.trim().toLowerCase() : (where.defaultExecutor ?? DEFAULT_EXECUTOR);
    const can = capabilitiesOf(executor);
    const gpus = parseAccelerators((merged as Record<string, unknown>).accelerators);
    let why: string | null = null;
    if (typeof gpus === 'string') why = `accelerators: ${gpus}`;
    else if (can && !can.multiNode && numNodes > 1) why = `num_nodes: ${numNodes} needs the ${multiNodeLabels()} executor`;
    else if (gpus) why = gpuProblem(gpus, executor, where.localGpus);
    if (why === null) return [merged, { key, index, of: alts.length }];
    reasons.push(`[${index}] ${why}`);
  }
  issues.push(issueAt(file, doc.locate(['resources', key], 'key'), formatPath(label, ['resources', key]), `none of the ${alts.length} alternatives can run here: ${reasons.join('; ')}`));
  return null;
}

/**
 * The executor a task names: `resources.infra`, or `cloud` (SkyPilot's older name, the same
 * rule); null when neither is given; false (an issue added) when both are given and differ.
 */
function infraOf(res: { infra?: string | null; cloud?: string | null } | null, doc: RawDoc, label: string, file: string, issues: SpecIssue[]): ExecutorKind | null | false {
  const norm = (v: string | null | undefined) => (typeof v === 'string' ? (v.trim().toLowerCase() as ExecutorKind) : null);
  const infra = norm(res?.infra);
  const cloud = norm(res?.cloud);
  if (infra && cloud && infra !== cloud) {
    const at = ['resources', 'cloud'];
    issues.push(issueAt(file, doc.locate(at, 'value'), formatPath(label, at), `cloud "${cloud}" differs from infra "${infra}" (line ${doc.locate(['resources', 'infra'], 'value')?.line ?? '?'}): they name the same thing; keep one`));
    return false;
  }
  return infra ?? cloud;
}

/** A task's warnings: each recorded resource key it does not act on, and a recovery strategy. */
function draftWarnings(other: Record<string, unknown>, strategy: string | null, topLevelRecovery: boolean, doc: RawDoc, label: string, file: string): SpecIssue[] {
  const out: SpecIssue[] = [];
  for (const [k, message] of Object.entries(SKYPILOT_RESOURCE_WARNINGS)) {
    if (!Object.hasOwn(other, k) || (k === 'use_spot' && other[k] === false)) continue;
    // A docker image is honoured (a container), or refused at submit: no "not used" warning.
    if (k === 'image_id' && dockerImageOf(other[k]) !== null) continue;
    out.push(issueAt(file, doc.locate(['resources', k], 'key'), formatPath(label, ['resources', k]), `${k}: ${message}`));
  }
  if (strategy !== null) {
    const base = topLevelRecovery ? ['job_recovery'] : ['resources', 'job_recovery'];
    // The shorthand `job_recovery: FAILOVER` has no strategy key to point at.
    const at = doc.locate([...base, 'strategy'], 'key') ? [...base, 'strategy'] : base;
    out.push(issueAt(file, doc.locate(at, 'key'), formatPath(label, [...base, 'strategy']), `strategy ${describe(strategy)}: ${STRATEGY_WARNING}`));
  }
  return out;
}

/** Checks the overrides (name, envs); returns the valid override envs (all of them, or none). */
function readOverrides(overrides: SpecOverrides | undefined, file: string, issues: SpecIssue[]): Record<string, string> {
  if (overrides?.name !== undefined) {
    const p = typeof overrides.name === 'string' ? nameProblem(overrides.name) : 'expected a name (a string)';
    if (p) issues.push(issueAt(file, null, 'overrides.name', `${p}, got ${describe(overrides.name)}`));
  }
  return readEnvMap(overrides?.envs, 'overrides.envs', file, issues);
}

/** An override map of NAME: value (`overrides.envs`, `overrides.secrets`): the valid entries (all of them, or none). */
function readEnvMap(map: unknown, at: string, file: string, issues: SpecIssue[]): Record<string, string> {
  if (map === undefined) return {};
  if (!isPlainMap(map)) {
    issues.push(issueAt(file, null, at, `expected a map of NAME: value, got ${describe(map)}`));
    return {};
  }
  if (Object.keys(map).length > SPEC_LIMITS.maxEnvCount) {
    issues.push(issueAt(file, null, at, `expected at most ${SPEC_LIMITS.maxEnvCount} env vars, got ${Object.keys(map).length}`));
    return {};
  }
  const ok: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(map)) {
    const path = formatPath(at, [k]);
    const kp = envNameProblem(k);
    if (kp) issues.push(issueAt(file, null, path, kp));
    else if (typeof v !== 'string') issues.push(issueAt(file, null, path, `expected a string value, got ${describe(v)}`));
    else {
      const vp = envValueProblem(v);
      if (vp) issues.push(issueAt(file, null, path, vp));
      else ok.push([k, v]);
    }
  }
  return Object.fromEntries(ok);
}


/** The `queue` override, checked by the queue name rule; null when none is given (or it is invalid: an issue). */
function readQueueOverride(overrides: SpecOverrides | undefined, file: string, issues: SpecIssue[]): string | null {
  if (overrides?.queue === undefined) return null;
  const p = typeof overrides.queue === 'string' ? queueNameProblem(overrides.queue) : QUEUE_NAME_EXPECTED;
  if (!p) return overrides.queue;
  issues.push(issueAt(file, null, 'overrides.queue', `${p}, got ${describe(overrides.queue)}`));
  return null;
}

/**
 * With the server's queues known, a queue must be one of them (or the default), said at the
 * first task naming it — or at `overrides.queue` (drafts null) when the override gave it.
 */
function checkQueue(queue: string, drafts: DraftTask[] | null, queues: readonly string[] | undefined, file: string, issues: SpecIssue[]): void {
  if (!queues || queue === DEFAULT_QUEUE || queues.includes(queue)) return;
  const all = [DEFAULT_QUEUE, ...[...queues].sort()].join(', ');
  const message = `queue "${queue}" is not defined; the queues are: ${all}`;
  const d = drafts?.find((x) => x.queue !== null);
  if (!d) issues.push(issueAt(file, null, 'overrides.queue', message));
  else issues.push(issueAt(file, d.doc.locate(['queue'], 'value'), formatPath(d.label, ['queue']), message));
}

/**
 * A relative workdir would start from wherever the executor happens to run: refused at submit
 * (the rule the executor applies, lib/executors resolveWorkdir) unless a folder was uploaded.
 */
function checkWorkdirs(drafts: DraftTask[], file: string, issues: SpecIssue[]): void {
  for (const d of drafts) {
    if (d.workdir !== null && isRelativeWorkdir(d.workdir)) issues.push(issueAt(file, d.doc.locate(['workdir'], 'value'), `${d.label}.workdir`, `${RELATIVE_WORKDIR_REFUSED}, got ${describe(d.workdir)}`));
  }
}

/**
 * `resources.accelerators` (docs/spec.md "accelerators"): a form that is refused; GPUs the
 * executor can never grant (lib/jobs/spec/gpu-check.ts: a job that could never start is refused at
 * submit instead of waiting for GPUs that do not exist); on the local executor, tasks of one
 * pipeline asking for different types (they share the job's grant).
 */
function checkAccelerators(drafts: DraftTask[], executor: ExecutorKind | null, localGpus: readonly GpuDevice[] | undefined, file: string, issues: SpecIssue[]): void {
  const host = executor !== null && capabilitiesOf(executor)?.gpus === 'host';
  const elsewhere = kindsWith((c) => c.gpus === 'scheduler').join(' or ');
  let first: { key: string; label: string } | null = null;
  for (const d of drafts) {
    const g = parseAccelerators(d.resources.other.accelerators);
    if (g === null) continue;
    const at = d.doc.locate(['resources', 'accelerators'], 'value');
    const label = formatPath(d.label, ['resources', 'accelerators']);
    if (typeof g === 'string') {
      issues.push(issueAt(file, at, label, `accelerators: ${g}`));
      continue;
    }
    const why = gpuProblem(g, executor, localGpus);
    if (why !== null) {
      issues.push(issueAt(file, at, label, `accelerators: ${why}${host ? `: no resource can run it — use infra: ${elsewhere}` : ''}`));
      continue;
    }
    if (!host) continue;
    const key = typesKey(localGpus ? localOptions(taskGpuOptions(d), localGpus) : g);
    if (!first) first = { key, label: d.label };
    else if (key !== first.key) issues.push(issueAt(file, at, label, `accelerators: GPU types ${key} differ from ${first.label}'s ${first.key}: the tasks of a pipeline on the local executor share the job's GPUs, so they ask for the same types (the counts may differ)`));
  }
}

/**
 * `num_nodes` > 1 needs an executor that runs a gang of nodes (lib/jobs/executor-kinds.ts
 * `multiNode`): the local executor runs a task on this one machine, so there it is refused at
 * the key (docs/spec.md "num_nodes").
 */
function checkNodes(drafts: DraftTask[], executor: ExecutorKind | null, file: string, issues: SpecIssue[]): void {
  const can = executor === null ? undefined : capabilitiesOf(executor);
  if (!can || can.multiNode) return;
  for (const d of drafts) {
    if (!d.numNodes) continue;
    issues.push(
      issueAt(
        file,
        d.doc.locate(['num_nodes'], 'value'),
        `${d.label}.num_nodes`,
        `num_nodes: ${d.numNodes} needs the ${multiNodeLabels()} executor (infra: ${kindsWith((c) => c.multiNode).join(' or ')}): the ${can.label} executor runs a task on this one machine`,
      ),
    );
  }
}

/**
 * The issue of an env or secret left empty and not given at launch. Given as the other kind
 * (`envs: {K: }` with `--secret K`), it says so and how to fix it either way — SkyPilot refuses
 * the same (an empty env is filled only by --env), and a value given as a secret must stay one.
 */
function requiredMessage(k: string, key: 'envs' | 'secrets', flag: string, givenAsOther: boolean): string {
  if (!givenAsOther) return `has no value: required at launch — give it in the spec or at launch (${flag} ${k}, or ${flag} ${k}=…)`;
  if (key === 'envs') {
    return `has no value: it was given as a secret (--secret ${k}), but the file declares it under envs, where only --env gives a value — to pass it as a secret, move it under secrets: (secrets: {${k}: }); else give it with --env ${k}`;
  }
  return `has no value: it was given as an env (--env ${k}), but the file declares it under secrets, where only --secret gives a value — give it with --secret ${k} (or --secret ${k}=…), or move it under envs: if it is not secret`;
}

/**
 * A draft's final envs and secrets: the file's, overrides winning, sorted by name. A value left
 * empty must come from an override (SkyPilot's "required at launch"): an issue, also listed in
 * `required`. A name in both envs and secrets is an issue. The limits count both, with overrides.
 */
function withEnvs(d: DraftTask, overrideEnvs: Record<string, string>, overrideSecrets: Record<string, string>, file: string, issues: SpecIssue[], required: SpecIssue[]): TaskSpec {
  const merge = (own: Record<string, string | null>, over: Record<string, string>, key: 'envs' | 'secrets', flag: string, other: Record<string, string>) => {
    const out: Array<[string, string]> = [];
    for (const [k, v] of Object.entries(own)) {
      if (Object.hasOwn(over, k)) continue;
      if (v === null) {
        const issue = issueAt(file, d.doc.locate([key, k], 'key'), formatPath(d.label, [key, k]), requiredMessage(k, key, flag, Object.hasOwn(other, k)));
        issues.push(issue);
        required.push(issue);
        continue;
      }
      out.push([k, v]);
    }
    out.push(...Object.entries(over));
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  };
  const envs = merge(d.envs, overrideEnvs, 'envs', '--env', overrideSecrets);
  const secrets = merge(d.secrets, overrideSecrets, 'secrets', '--secret', overrideEnvs);
  const secretNames = new Set(secrets.map(([k]) => k));
  for (const [k] of envs) {
    if (secretNames.has(k)) issues.push(issueAt(file, d.doc.locate(['secrets', k], 'key'), formatPath(d.label, ['secrets', k]), `${k} is given both as an env and as a secret: keep one`));
  }
  const all = [...envs, ...secrets];
  if (all.length > SPEC_LIMITS.maxEnvCount) {
    issues.push(issueAt(file, d.doc.locate(['envs'], 'key'), `${d.label}.envs`, `expected at most ${SPEC_LIMITS.maxEnvCount} env vars (with overrides), got ${all.length}`));
  }
  const total = all.reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);
  if (total > SPEC_LIMITS.maxEnvTotalBytes) {
    issues.push(issueAt(file, d.doc.locate(['envs'], 'key'), `${d.label}.envs`, `expected env vars of at most ${KiB(SPEC_LIMITS.maxEnvTotalBytes)} in all (with overrides), got ${total} bytes`));
  }
  const { doc: _doc, label: _label, infra: _infra, priority: _priority, queue: _queue, notify: _notify, retention: _retention, dependsOn: _dependsOn, array: _array, warnings: _warnings, secrets: _secrets, ...rest } = d;
  return { ...rest, envs: Object.fromEntries(envs), ...(secrets.length ? { secrets: Object.fromEntries(secrets) } : {}) };
}

/** The part of `path` that exists in `root` (shorthand forms are widened by the schema). */
function existingPath(root: unknown, path: readonly PathSeg[]): PathSeg[] {
  const out: PathSeg[] = [];
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') break;
    out.push(seg);
    cur = (cur as Record<PathSeg, unknown>)[seg];
  }
  return out;
}

function valueAt(root: unknown, path: readonly PathSeg[]): unknown {
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return cur; // shorthand forms (job_recovery: FAILOVER)
    cur = (cur as Record<PathSeg, unknown>)[seg];
  }
  return cur;
}

/** A short job name from the first meaningful line of the first task with a `run` (docs/spec.md "Job name"). */
export function deriveName(tasks: ReadonlyArray<Pick<TaskSpec, 'run'>>): string | null {
  const run = tasks.find((t) => t.run)?.run;
  if (!run) return null;
  for (const rawLine of run.split('\n')) {
    // The name rule's own characters out (lib/jobs/spec/text.ts), cut by code points.
    const line = replaceInvisible(rawLine, ' ').replace(/\s+/g, ' ').trim();
    if (!line || line.startsWith('#')) continue;
    return cutText(line, 40);
  }
  return null;
}
