/**
 * The spec side of a job's task graph (docs/spec.md "Job groups" and "depends_on"): the header
 * document (`name`, SkyPilot's `execution: parallel` and `primary_tasks`), the in-job form of
 * `depends_on` (`tasks: [NAME, …]`), and what they become in each normalized task — `after` (the
 * indexes it starts after) and `primary` — plus the envs by which a group's tasks find each
 * other. The runtime rule is lib/jobs/task-graph.ts. Pure: no node:* import.
 */
import { describe, formatPath, issueAt, type SpecIssue } from './messages';
import type { RawDoc } from './positions';
import { nameProblem, SPEC_LIMITS, type TaskSpec } from './schema';
import { EXECUTOR_KINDS, type ExecutorKind } from '../executor-kinds';
import { taskGpuOptions } from './gpu-check';

/** How a job's tasks run: `serial` (a pipeline, the default) or `parallel` (a job group). */
export const EXECUTION_MODES = ['serial', 'parallel'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** The keys a header document may hold. */
export const HEADER_KEYS = ['name', 'execution', 'primary_tasks'] as const;

/** The header document, read: the pipeline's name, how its tasks run, its primary tasks as written. */
export interface SpecHeader {
  name: string | null;
  execution: ExecutionMode;
  /** `primary_tasks` entries; null when not given. */
  primaryTasks: string[] | null;
  doc: RawDoc | null;
}

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Splits off the header: a first document of several that holds only `name` (SkyPilot's chain-DAG
 * header), or one that holds `execution` or `primary_tasks` (SkyPilot's job-group header). Its
 * keys are checked here (issues under `pipeline.`); every document's YAML problems are reported
 * under its label.
 */
export function splitHeader(docs: RawDoc[], file: string, issues: SpecIssue[]): { header: SpecHeader; taskDocs: RawDoc[] } {
  const header: SpecHeader = { name: null, execution: 'serial', primaryTasks: null, doc: null };
  const first = docs[0];
  const v = first && !first.broken && isPlainMap(first.value) ? first.value : null;
  const keys = v ? Object.keys(v) : [];
  const isHeader = docs.length > 1 && v !== null && ((keys.length === 1 && keys[0] === 'name') || keys.includes('execution') || keys.includes('primary_tasks'));
  const taskDocs = isHeader ? docs.slice(1) : docs;
  if (isHeader && v) {
    header.doc = first;
    readHeader(v, first, file, issues, header);
    for (const y of first.yamlIssues) issues.push(issueAt(file, y.loc, formatPath('pipeline', y.path), y.message));
  }
  taskDocs.forEach((doc, index) => {
    for (const y of doc.yamlIssues) issues.push(issueAt(file, y.loc, formatPath(`task[${index}]`, y.path), y.message));
  });
  return { header, taskDocs };
}

function readHeader(v: Record<string, unknown>, doc: RawDoc, file: string, issues: SpecIssue[], header: SpecHeader): void {
  for (const k of Object.keys(v)) {
    if (!(HEADER_KEYS as readonly string[]).includes(k)) issues.push(issueAt(file, doc.locate([k], 'key'), `pipeline.${k}`, `a header document holds only ${HEADER_KEYS.join(', ')}: move ${k} into a task`));
  }
  const n = v.name;
  if (n != null) {
    const p = typeof n === 'string' ? nameProblem(n) : 'expected a name (a string)';
    if (p) issues.push(issueAt(file, doc.locate(['name'], 'value'), 'pipeline.name', `${p}, got ${describe(n)}`));
    else header.name = n as string;
  }
  const ex = v.execution;
  if (ex != null) {
    if (typeof ex === 'string' && (EXECUTION_MODES as readonly string[]).includes(ex)) header.execution = ex as ExecutionMode;
    else issues.push(issueAt(file, doc.locate(['execution'], 'value'), 'pipeline.execution', `expected one of ${EXECUTION_MODES.join(', ')}, got ${describe(ex)}`));
  }
  const pt = v.primary_tasks;
  if (pt == null) return;
  const at = doc.locate(['primary_tasks'], 'value');
  if (!Array.isArray(pt) || pt.length === 0 || pt.length > SPEC_LIMITS.maxTasks || pt.some((x) => typeof x !== 'string')) {
    issues.push(issueAt(file, at, 'pipeline.primary_tasks', `expected a list of 1–${SPEC_LIMITS.maxTasks} task names, got ${describe(pt)}`));
    return;
  }
  if (header.execution !== 'parallel') {
    issues.push(issueAt(file, at, 'pipeline.primary_tasks', 'primary_tasks is for a job group: add execution: parallel to the header'));
    return;
  }
  header.primaryTasks = pt as string[];
}

/** What a task document gives to the graph: its label, document, name and normalized task. */
export interface GraphDraft {
  label: string;
  doc: RawDoc;
  task: TaskSpec;
}

/** The env var name part of a task name: upper case, every other character `_` (`rollout-server` → `ROLLOUT_SERVER`). */
export function taskEnvName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** The task names `depends_on.tasks` of a document gives (schema-checked already), with their paths. */
function taskRefs(doc: RawDoc): string[] {
  const v = isPlainMap(doc.value) ? doc.value.depends_on : undefined;
  const t = isPlainMap(v) ? v.tasks : undefined;
  return Array.isArray(t) ? (t as string[]) : [];
}

/** `num_nodes` of a task document as written (schema-checked already), or null. */
function numNodesOf(doc: RawDoc): number | null {
  const v = isPlainMap(doc.value) ? doc.value.num_nodes : undefined;
  return typeof v === 'number' ? v : null;
}

/**
 * Sets each task's `after` and `primary` (a DAG when any task names `depends_on.tasks`; a group
 * with `execution: parallel`; else a pipeline: nothing set), checking names, unknown entries and
 * cycles at their lines. A group runs on every executor kind (how its tasks find each other:
 * {@link groupEnvs}).
 */
export function applyTaskGraph(drafts: GraphDraft[], header: SpecHeader, file: string, issues: SpecIssue[]): void {
  const dag = drafts.some((d) => taskRefs(d.doc).length > 0);
  const group = header.execution === 'parallel';
  if (!dag && !group) return;
  const index = namesOf(drafts, group, file, issues);
  // Admission grants GPUs to a job, and every attempt of it runs on them: tasks side by side would share them.
  for (const d of drafts) {
    if (taskGpuOptions(d.task).length > 0) issues.push(issueAt(file, d.doc.locate(['resources', 'accelerators'], 'key'), `${d.label}.resources.accelerators`, `the tasks of a ${group ? 'job group' : 'task DAG'} may run side by side and cannot ask for GPUs: GPUs are granted to a whole job (run a GPU task as a job of its own)`));
  }
  if (group) {
    for (const d of drafts) {
      const n = numNodesOf(d.doc);
      // One task, one host to reach it at: a gang of nodes has N (and its own rank envs).
      if (n !== null && n > 1) issues.push(issueAt(file, d.doc.locate(['num_nodes'], 'value'), `${d.label}.num_nodes`, `a job group's task runs on one node (the others reach it at JOBDECK_TASK_<NAME>_HOST), got num_nodes: ${n}`));
      if (taskRefs(d.doc).length > 0) issues.push(issueAt(file, d.doc.locate(['depends_on', 'tasks'], 'key'), `${d.label}.depends_on.tasks`, "a job group's tasks all start together (execution: parallel); depends_on.tasks orders the tasks of a pipeline"));
    }
    const primaries = new Set<number>();
    (header.primaryTasks ?? []).forEach((n, i) => {
      const at = index.get(n);
      if (at === undefined) issues.push(issueAt(file, header.doc?.locate(['primary_tasks', i], 'value') ?? null, `pipeline.primary_tasks[${i}]`, unknownTask(n, drafts)));
      else primaries.add(at);
    });
    drafts.forEach((d, i) => {
      d.task.after = [];
      if (primaries.has(i)) d.task.primary = true;
    });
    return;
  }
  const edges = drafts.map((d, i) =>
    taskRefs(d.doc).flatMap((n, k) => {
      const at = index.get(n);
      if (at === undefined) issues.push(issueAt(file, d.doc.locate(['depends_on', 'tasks', k], 'value'), `${d.label}.depends_on.tasks[${k}]`, unknownTask(n, drafts)));
      return at === undefined ? [] : [{ to: at, k, from: i }];
    }),
  );
  reportCycles(drafts, edges, file, issues);
  drafts.forEach((d, i) => (d.task.after = [...new Set(edges[i].map((e) => e.to))].sort((a, b) => a - b)));
}

function unknownTask(n: string, drafts: GraphDraft[]): string {
  const names = drafts.map((d) => d.task.name).filter((x): x is string => !!x);
  return `no task named ${describe(n)} in this job${names.length ? `; its tasks: ${names.join(', ')}` : ' (give the tasks a name)'}`;
}

/** Task name → index; every task of a group must have a unique name whose env form is unique too. */
function namesOf(drafts: GraphDraft[], group: boolean, file: string, issues: SpecIssue[]): Map<string, number> {
  const index = new Map<string, number>();
  const envNames = new Map<string, string>();
  drafts.forEach((d, i) => {
    const n = d.task.name;
    if (!n) {
      if (group) issues.push(issueAt(file, d.doc.startLoc, d.label, "a job group's tasks need a name: the others reach it by that name (JOBDECK_TASK_<NAME>_HOST)"));
      return;
    }
    if (index.has(n)) {
      issues.push(issueAt(file, d.doc.locate(['name'], 'value'), `${d.label}.name`, `task name ${describe(n)} is used twice in this job; tasks that others name need unique names`));
      return;
    }
    const env = taskEnvName(n);
    if (group && envNames.has(env)) issues.push(issueAt(file, d.doc.locate(['name'], 'value'), `${d.label}.name`, `task names ${describe(envNames.get(env))} and ${describe(n)} give the same env var JOBDECK_TASK_${env}_HOST`));
    envNames.set(env, n);
    index.set(n, i);
  });
  return index;
}

/** Each cycle of `depends_on.tasks` once, at the entry that closes it: `a cycle: a → b → a`. */
function reportCycles(drafts: GraphDraft[], edges: Array<Array<{ to: number; k: number; from: number }>>, file: string, issues: SpecIssue[]): void {
  const state = drafts.map(() => 0); // 0 new, 1 on the path, 2 done
  const path: number[] = [];
  const name = (i: number) => drafts[i].task.name ?? `task[${i}]`;
  const visit = (i: number): void => {
    state[i] = 1;
    path.push(i);
    for (const e of edges[i]) {
      if (state[e.to] === 1) {
        const loop = [...path.slice(path.indexOf(e.to)), e.to].map(name).join(' → ');
        const d = drafts[i];
        issues.push(issueAt(file, d.doc.locate(['depends_on', 'tasks', e.k], 'value'), `${d.label}.depends_on.tasks[${e.k}]`, `a cycle: ${loop} (a task cannot wait for itself)`));
      } else if (state[e.to] === 0) visit(e.to);
    }
    path.pop();
    state[i] = 2;
  };
  drafts.forEach((_, i) => state[i] === 0 && visit(i));
}

/** The env var a task of a group finds the task named `name`'s host by: `JOBDECK_TASK_<NAME>_HOST`. */
export function taskHostEnv(name: string): string {
  return `JOBDECK_TASK_${taskEnvName(name)}_HOST`;
}

/**
 * The envs by which the tasks of a job group find each other (docs/spec.md "Job groups"):
 * `JOBDECK_TASK_NAME`, `JOBDECK_GROUP_TASKS` (the names, comma-separated, in order), one
 * `JOBDECK_TASK_<NAME>_HOST` per task (the host it runs on: 127.0.0.1 on an executor whose
 * `groupHosts` is `loopback`; where the executor places the tasks, it sets them when the group
 * starts, over these), and SkyPilot's `SKYPILOT_JOBGROUP_NAME` (the job's name). Set on every task
 * of a group, over its own envs of those names; nothing for a pipeline or DAG.
 */
export function groupEnvs(tasks: readonly TaskSpec[], jobName: string, executor: ExecutorKind): Array<Record<string, string>> {
  const loopback = EXECUTOR_KINDS[executor].groupHosts === 'loopback';
  const names = tasks.map((t) => t.name ?? '');
  const hosts = loopback ? Object.fromEntries(names.map((n) => [taskHostEnv(n), '127.0.0.1'])) : {};
  return names.map((n) => ({ JOBDECK_TASK_NAME: n, JOBDECK_GROUP_TASKS: names.join(','), ...hosts, SKYPILOT_JOBGROUP_NAME: jobName }));
}
