/**
 * The job spec: YAML (or its JSON form) → a validated, normalized pipeline.
 *
 * SkyPilot-compatible where the two overlap (sky/utils/schemas.py task + resources schema,
 * sky/utils/dag_utils.py for pipelines): a SkyPilot task YAML that only uses what jobdeck can do
 * on this machine parses unchanged.
 *
 * ## Documents
 * - One YAML document is a one-task job. Several documents separated by `---` are a pipeline whose
 *   tasks run in order.
 * - A first document holding only `name` (and more documents after it) names the pipeline and is
 *   not a task (SkyPilot's chain-DAG header). A lone `name:`-only document is a one-task job with
 *   no `run` (SkyPilot instantiates a task for it too).
 * - An empty document (a stray `---`, or nothing between two) is an error with its line.
 *
 * ## Task keys (unknown keys are errors, with a "did you mean" hint)
 * - `name`: string, 1–128 characters, no control or invisible characters. Optional.
 * - `envs`: map NAME → value. NAME matches `^[A-Za-z_][A-Za-z0-9_]*$` and must not start with
 *   `JOBDECK_` (reserved: jobdeck sets JOBDECK_JOB_ID, JOBDECK_TASK_INDEX, JOBDECK_ATTEMPT).
 *   Numbers and booleans are accepted and become strings *as written* in the YAML (`1.10` stays
 *   `"1.10"`, `0x1F` stays `"0x1F"`, `true` stays `"true"`; in the JSON form, `String(value)`).
 *   A value left empty (`HF_TOKEN:` / null) must be given by `overrides.envs` (CLI `--env`),
 *   else it is an error — SkyPilot's rule for required env vars. At most 256 per task after
 *   overrides, each value ≤ 64 KiB, all values ≤ 512 KiB; no NUL bytes.
 * - `workdir`: string path where the attempt runs (recorded as written; the executor resolves it).
 * - `setup`, `run`: shell scripts (strings ≤ 64 KiB, no NUL). Empty or whitespace-only → null.
 *   A task without `run` succeeds at once.
 * - `resources`: `cpus` — `2` (exactly) or `"2+"` (at least), number or string, > 0; default 1
 *   exactly. `memory` — GB: `4`, `"4+"`, `"8GB"`, `"512MB"`, `"1TB"`, `"2GiB"` (units k/m/g/t with
 *   optional `b`/`ib`, binary like SkyPilot: 1 GB = 1024 MB); default none. `job_recovery` — as
 *   below (where older SkyPilot files put it). Other SkyPilot resource keys (see
 *   {@link SKYPILOT_RESOURCE_KEYS}) are accepted, recorded as written under `resources.other`,
 *   and not used by the local executor. `any_of`/`ordered` (lists of alternatives) are refused.
 *   `infra` (SkyPilot's "where to run", case-insensitive) chooses the executor: `local` or `slurm`
 *   → {@link PipelineSpec.executor}; the tasks of a pipeline must agree (a task without `infra`
 *   follows the others); any other value (a cloud, `k8s`, `slurm/<cluster>/<partition>`) is an
 *   error. Without it, the server's default applies ({@link jobExecutor}). Also recorded in
 *   `resources.other` as written.
 * - `job_recovery` (top level, or under `resources`; both at once is an error): a map with
 *   `max_restarts_on_errors` (integer 0–1000, default 0), `recover_on_exit_codes` (an exit code
 *   0–255 or a list of them; normalized to a sorted list without duplicates: such an exit
 *   restarts without spending the budget), `strategy` (string, recorded, e.g. `FAILOVER`). A bare
 *   string is SkyPilot's shorthand for `{strategy: <string>}`.
 * - `num_nodes`: SkyPilot's; only `1` is accepted ("multi-node is not supported").
 * - SkyPilot keys jobdeck cannot honour (`file_mounts`, `service`, `config`, `experimental`,
 *   `secrets`, `volumes`, `inputs`, `outputs`, `event_callback`) are errors that say why (null
 *   values are tolerated as "not given").
 *
 * ## Job name
 * `overrides.name`, else the header document's name, else the first task's name, else the first
 * meaningful line (not blank, not a `#` comment) of the first task that has a `run`, whitespace
 * collapsed and cut to 40 characters, else `"job"`.
 *
 * ## Errors
 * Every problem found is reported at once as a {@link SpecIssue} (file, 1-based line and column of
 * the offending key or value, key path like `task[0].job_recovery.max_restarts_on_errors`, and a
 * message saying what was expected and what was given), thrown together as a {@link SpecError}.
 * At most 50 issues are listed per document (then "…and N more"). Control characters from the
 * input are shown escaped, so an issue is safe to print to a terminal. Duplicate keys are errors
 * (compared as the JS object keys they become: `1` and `"1"` collide).
 *
 * Hostile input is refused early and cheaply (see {@link SPEC_LIMITS}; every step is linear in
 * the input): size, number of documents, nesting depth (checked iteratively on the concrete
 * syntax tree before any value is built) and YAML aliases (counted before values are built, and
 * bounded again by yaml's expansion guard, so a billion-laughs file costs nothing). Tags that
 * build non-JSON values (`!!timestamp`, `!!binary`, `!!set`) and unknown tags are errors.
 * The JSON form gets the same limits, walked iteratively (cycles and shared sub-trees included).
 *
 * Server-only (uses node:crypto for {@link specHash}); everything else is plain JS.
 */
import { createHash } from 'node:crypto';
import {
  Composer,
  LineCounter,
  Parser,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  visit,
  type CST,
  type Document,
} from 'yaml';
import { z } from 'zod';

// ───────────────────────────── contract ─────────────────────────────

/** Resources a task asks for. `cpus` and `memoryGb` are counts / GB (1 GB = 1024 MB). */
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
}

/** When a failed attempt is restarted (SkyPilot's `job_recovery`). */
export interface JobRecovery {
  /** Restarts allowed after the task's own failure (FAILED / FAILED_SETUP); default 0. */
  maxRestartsOnErrors: number;
  /** Exit codes that restart without spending the budget; sorted, unique, 0–255. */
  recoverOnExitCodes: number[];
  /** SkyPilot's recovery strategy name as written (e.g. "FAILOVER"), recorded only. */
  strategy: string | null;
}

/** One task (pipeline step), normalized. */
export interface TaskSpec {
  name: string | null;
  /** Bash script run before `run` in each attempt; null when none. */
  setup: string | null;
  /** Bash script; null when none (the task then succeeds at once). */
  run: string | null;
  /** Environment for setup and run (overrides merged in). */
  envs: Record<string, string>;
  workdir: string | null;
  resources: Resources;
  jobRecovery: JobRecovery;
}

/** A submitted job: one or more tasks run in order. */
export interface PipelineSpec {
  name: string;
  tasks: TaskSpec[];
  /**
   * Where the job runs, from its tasks' `resources.infra` (SkyPilot's key); absent when no task
   * names one — then the server's default applies (see {@link jobExecutor}).
   */
  executor?: SpecExecutor;
}

/** Executors a spec may name with `resources.infra` (names of lib/executors getExecutor()). */
export const SPEC_EXECUTORS = ['local', 'slurm'] as const;
/** One of {@link SPEC_EXECUTORS}. */
export type SpecExecutor = (typeof SPEC_EXECUTORS)[number];

/** One problem in a spec. `line`/`column` are 1-based, null when unknown (JSON form). */
export interface SpecIssue {
  file: string;
  line: number | null;
  column: number | null;
  /** Where the offending node ends (1-based; column is exclusive), for editors; null when unknown. */
  endLine: number | null;
  endColumn: number | null;
  /** Key path, e.g. `task[0].job_recovery.max_restarts_on_errors`; '' for the whole file. */
  path: string;
  message: string;
}

/** Options shared by the parse functions. */
export interface SpecOptions {
  /** Shown in issues; default "job.yaml" ("job.json" for the JSON form). */
  filename?: string;
  overrides?: SpecOverrides;
}

/** What a submitter may override (CLI `--name`, `--env K=V`). */
export interface SpecOverrides {
  /** Replaces the job name (same rules as a name in the file). */
  name?: string;
  /** Merged into every task's envs; an override wins over the file. */
  envs?: Record<string, string>;
}

/** Formats one issue: `file:line path: message` (`:line` and ` path` left out when unknown). */
export function formatSpecIssue(issue: SpecIssue): string {
  const where = issue.line != null ? `${issue.file}:${issue.line}` : issue.file;
  return `${where}${issue.path ? ` ${issue.path}` : ''}: ${issue.message}`;
}

/** A spec was refused. `issues` lists every problem; `message` is them, one per line. */
export class SpecError extends Error {
  readonly issues: SpecIssue[];
  constructor(issues: SpecIssue[]) {
    super(issues.map(formatSpecIssue).join('\n'));
    this.name = 'SpecError';
    this.issues = issues;
  }
}

/** Limits that keep hostile specs cheap to refuse. Sizes in bytes (UTF-8). */
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

/** SkyPilot resource keys accepted and recorded in `resources.other` (not used locally). */
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

// ───────────────────────────── public functions ─────────────────────────────

/**
 * Parses a YAML job spec (one document = one task; several = a pipeline; see the module doc).
 * @throws SpecError listing every issue (with 1-based lines), including YAML syntax errors and
 *   refused hostile input (size, documents, depth, aliases).
 */
export function parseJobSpec(text: string, opts: SpecOptions = {}): PipelineSpec {
  const { spec, issues } = checkJobSpec(text, opts);
  if (!spec) throw new SpecError(issues);
  return spec;
}

/**
 * Like {@link parseJobSpec} but returns the issues instead of throwing (for editors / lint):
 * `spec` is null exactly when `issues` is non-empty.
 */
export function checkJobSpec(text: string, opts: SpecOptions = {}): { spec: PipelineSpec | null; issues: SpecIssue[] } {
  const file = opts.filename ?? 'job.yaml';
  const loaded = loadYaml(String(text), file);
  if (loaded.fatal) return { spec: null, issues: loaded.issues };
  return finish(loaded.docs, file, opts.overrides, loaded.issues);
}

/**
 * The JSON form (e.g. a POST body): one task object, or an array of documents with the same
 * rules as YAML documents (header-name rule included). Issues carry `line: null`.
 * @throws SpecError
 */
export function parseJobSpecObject(value: unknown, opts: SpecOptions = {}): PipelineSpec {
  const file = opts.filename ?? 'job.json';
  const pre = checkJsonValue(value);
  if (pre.length) {
    const label = Array.isArray(value) ? 'document' : 'task[0]';
    throw new SpecError(pre.map((p) => issueAt(file, null, p.path.length ? formatPath(label, p.path) : '', p.message)));
  }
  const values = Array.isArray(value) ? value : [value];
  const docs: RawDoc[] = values.map((v) => ({ value: v, locate: () => null, startLoc: null, broken: false, yamlIssues: [] }));
  if (docs.length === 0) throw new SpecError([issueAt(file, null, '', 'the spec is empty: expected a task (a map with at least `run`) or a list of them')]);
  const { spec, issues } = finish(docs, file, opts.overrides, []);
  if (!spec) throw new SpecError(issues);
  return spec;
}

/**
 * A one-task job whose `run` is `cmd` (the CLI's `--cmd`), validated like a file.
 * @throws SpecError when the command is empty or breaks a limit, or a name/env is invalid.
 */
export function commandSpec(cmd: string, opts: SpecOverrides = {}): PipelineSpec {
  const file = 'command';
  if (typeof cmd !== 'string' || cmd.trim() === '') {
    throw new SpecError([issueAt(file, null, 'run', `expected a non-empty command, got ${describe(cmd)}`)]);
  }
  return parseJobSpecObject({ run: cmd }, { filename: file, overrides: opts });
}

/** sha256 (hex) of the canonical JSON (keys sorted, no spaces) of a normalized spec. */
export function specHash(spec: PipelineSpec): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex');
}

/**
 * The executor a job runs on (stored as Job.executor): the spec's own (`resources.infra`), else
 * the server's default `JOBDECK_EXECUTOR` (`local` | `slurm`, case-insensitive; default `local`).
 * @throws Error when JOBDECK_EXECUTOR names no known executor.
 */
export function jobExecutor(spec: PipelineSpec, env: Record<string, string | undefined> = process.env): SpecExecutor {
  if (spec.executor) return spec.executor;
  const raw = (env.JOBDECK_EXECUTOR ?? '').trim().toLowerCase();
  if (raw === '') return 'local';
  if ((SPEC_EXECUTORS as readonly string[]).includes(raw)) return raw as SpecExecutor;
  throw new Error(`JOBDECK_EXECUTOR must be one of ${SPEC_EXECUTORS.join(', ')}, got ${JSON.stringify(env.JOBDECK_EXECUTOR)}`);
}

/** The CPUs a job asks for: the max over its tasks (tasks run one at a time). */
export function jobCpus(spec: PipelineSpec): number {
  return spec.tasks.reduce((max, t) => Math.max(max, t.resources.cpus), 0) || 1;
}

/** Canonical JSON: object keys sorted, undefined members left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

// ───────────────────────────── internals: documents ─────────────────────────────

type PathSeg = string | number;

interface Loc {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** One document's value and how to find a path's line in it. */
interface RawDoc {
  value: unknown;
  /** Location of the value at `path` (or of its key when `at` is 'key'); the deepest found. */
  locate: (path: PathSeg[], at: 'key' | 'value') => Loc | null;
  /** Where the document starts. */
  startLoc: Loc | null;
  /** The document had YAML errors (in `yamlIssues`): they are reported, its value is not validated. */
  broken: boolean;
  yamlIssues: Array<{ loc: Loc | null; path: PathSeg[]; message: string }>;
}

/** Control characters from user text are shown escaped: an issue is safe to print to a terminal. */
function escapeControls(s: string): string {
  return s.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function issueAt(file: string, loc: Loc | null, path: string, message: string): SpecIssue {
  return {
    file: escapeControls(file),
    line: loc?.line ?? null,
    column: loc?.column ?? null,
    endLine: loc?.endLine ?? null,
    endColumn: loc?.endColumn ?? null,
    path: escapeControls(path),
    message: escapeControls(message),
  };
}

/** `task[0].resources.job_recovery`, `task[1].envs.A`, `task[0].recover_on_exit_codes[2]`. */
function formatPath(prefix: string, path: readonly PathSeg[]): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** UTF-8 length without allocating. */
function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const KiB = (n: number) => (n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`);

/** A short, human description of a value for "got …". */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'an empty value (null)';
  if (typeof v === 'string') {
    if (v === '') return 'an empty string';
    const shown = v.length > 40 ? `${JSON.stringify(v.slice(0, 40)).slice(0, -1)}…"` : JSON.stringify(v);
    return v.length > 40 ? `${shown} (${v.length} characters)` : shown;
  }
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return v.length ? `a list of ${v.length}` : 'an empty list';
  if (v instanceof Date) return 'a timestamp';
  if (v instanceof Uint8Array) return 'binary data';
  if (v instanceof Map || v instanceof Set) return 'a YAML set/ordered map';
  if (typeof v === 'object') return Object.keys(v).length ? 'a map' : 'an empty map';
  return typeof v;
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

// ───────────────────────────── YAML loading ─────────────────────────────

function loadYaml(text: string, file: string): { fatal: boolean; docs: RawDoc[]; issues: SpecIssue[] } {
  const fatal = (loc: Loc | null, message: string) => ({ fatal: true, docs: [], issues: [issueAt(file, loc, '', message)] });
  // Bytes ≥ UTF-16 units, so the cheap check first; the exact one only for small texts.
  if (text.length > SPEC_LIMITS.maxBytes || utf8Bytes(text) > SPEC_LIMITS.maxBytes) {
    return fatal(null, `the spec is too large: ${utf8Bytes(text)} bytes, at most ${KiB(SPEC_LIMITS.maxBytes)}`);
  }
  const lc = new LineCounter();
  const toLoc = (start: number, end = start): Loc => {
    const a = lc.linePos(start);
    const b = lc.linePos(Math.max(start, end));
    return { line: a.line, column: a.col, endLine: b.line, endColumn: b.col };
  };
  let tokens: CST.Token[];
  try {
    tokens = Array.from(new Parser(lc.addNewLine).parse(text));
  } catch (err) {
    return fatal(null, `YAML could not be read: ${(err as Error).message}`);
  }
  // Limits on the concrete syntax tree, before any value is built (iterative: no recursion).
  const cstDocs = tokens.filter((t): t is CST.Document => t.type === 'document');
  if (cstDocs.length > SPEC_LIMITS.maxTasks + 1) {
    return fatal(toLoc(cstDocs[SPEC_LIMITS.maxTasks + 1].offset), `too many YAML documents: ${cstDocs.length}, at most ${SPEC_LIMITS.maxTasks} tasks (plus a name-only header)`);
  }
  // Aliases and depth: walk everything (bounded by the text size), then report the first
  // offending node in source order.
  const aliasOffsets: number[] = [];
  let tooDeepAt = -1;
  const stack: Array<{ tok: CST.Token | null | undefined; depth: number }> = cstDocs.map((d) => ({ tok: d.value, depth: 0 }));
  while (stack.length) {
    const { tok, depth } = stack.pop()!;
    if (!tok) continue;
    if (tok.type === 'alias') aliasOffsets.push(tok.offset);
    else if (tok.type === 'block-map' || tok.type === 'block-seq' || tok.type === 'flow-collection') {
      if (depth + 1 > SPEC_LIMITS.maxDepth) {
        if (tooDeepAt < 0 || tok.offset < tooDeepAt) tooDeepAt = tok.offset;
        continue;
      }
      for (const item of tok.items as CST.CollectionItem[]) {
        stack.push({ tok: item.key, depth: depth + 1 });
        stack.push({ tok: item.value, depth: depth + 1 });
      }
    }
  }
  if (tooDeepAt >= 0) return fatal(toLoc(tooDeepAt), `the spec nests maps/lists deeper than ${SPEC_LIMITS.maxDepth} levels`);
  if (aliasOffsets.length > SPEC_LIMITS.maxAliasCount) {
    aliasOffsets.sort((a, b) => a - b);
    return fatal(
      toLoc(aliasOffsets[SPEC_LIMITS.maxAliasCount]),
      `too many YAML aliases: ${aliasOffsets.length}, at most ${SPEC_LIMITS.maxAliasCount} (refused as a possible alias bomb)`,
    );
  }

  const composer = new Composer({ prettyErrors: false, uniqueKeys: false, strict: true, logLevel: 'silent' });
  let documents: Document.Parsed[];
  try {
    documents = Array.from(composer.compose(tokens, true, text.length));
  } catch (err) {
    return fatal(null, `YAML could not be read: ${(err as Error).message}`);
  }

  const docs: RawDoc[] = [];
  for (const doc of documents) {
    const contents = doc.contents;
    const startLoc = toLoc(doc.range[0]);
    const pathAt = (offset: number): PathSeg[] => {
      const path: PathSeg[] = [];
      let node: unknown = contents;
      const within = (n: unknown, end?: unknown) => {
        const r = (n as { range?: [number, number, number] } | null)?.range;
        const e = (end as { range?: [number, number, number] } | null)?.range ?? r;
        return !!r && !!e && r[0] <= offset && offset <= e[2];
      };
      // Descend through block collections; stop at a value the error starts on (the value as a
      // whole is wrong) and at flow collections (their structure is what broke).
      for (let guard = 0; guard <= SPEC_LIMITS.maxDepth; guard++) {
        const r = (node as { range?: [number, number, number] } | null)?.range;
        if (path.length && r && r[0] === offset) break;
        if ((isMap(node) || isSeq(node)) && node.flow) break;
        if (isMap(node)) {
          const pair = node.items.find((p) => within(p.key, p.value ?? p.key));
          if (!pair) break;
          path.push(keyString(pair.key));
          node = pair.value;
        } else if (isSeq(node)) {
          const i = node.items.findIndex((item) => within(item));
          if (i < 0) break;
          path.push(i);
          node = node.items[i];
        } else break;
      }
      return path;
    };
    const yamlIssues: RawDoc['yamlIssues'] = [];
    const problems = [...doc.errors, ...doc.warnings];
    for (const e of problems.slice(0, MAX_ISSUES_PER_DOCUMENT)) {
      const hint = e.code === 'BLOCK_AS_IMPLICIT_KEY' ? ' (a value containing ": " must be quoted, or written as a block with |)' : '';
      const kind = e.name === 'YAMLWarning' ? 'YAML problem' : 'YAML syntax error';
      yamlIssues.push({ loc: toLoc(e.pos[0], e.pos[1]), path: pathAt(e.pos[0]), message: `${kind}: ${e.message}${hint}` });
    }
    if (problems.length > MAX_ISSUES_PER_DOCUMENT) {
      yamlIssues.push({ loc: yamlIssues[yamlIssues.length - 1].loc, path: [], message: `…and ${problems.length - MAX_ISSUES_PER_DOCUMENT} more YAML problems in this document` });
    }
    // Duplicate keys, checked here in linear time (yaml's own `uniqueKeys` check is quadratic in
    // the size of a map: seconds for a hostile 30k-key map). Keys compare as JS object keys do.
    if (!yamlIssues.length) {
      visit(doc, {
        Map(_key, map) {
          const seen = new Map<string, number>();
          for (const pair of map.items) {
            const k = keyString(pair.key);
            const at = (pair.key as { range?: [number, number, number] } | null)?.range;
            const first = seen.get(k);
            if (first !== undefined && at) {
              if (yamlIssues.length >= MAX_ISSUES_PER_DOCUMENT) return visit.BREAK;
              yamlIssues.push({ loc: toLoc(at[0], at[1]), path: pathAt(at[0]), message: `YAML key ${describe(k)} is given twice (first at line ${lc.linePos(first).line}): keys must be unique` });
            } else if (at && first === undefined) seen.set(k, at[0]);
          }
        },
      });
    }
    // Aliases must point at an anchor defined before them.
    if (!yamlIssues.length) {
      visit(doc, {
        Alias(_key, node) {
          if (!node.resolve(doc)) {
            const r = node.range ?? [doc.range[0], doc.range[0]];
            yamlIssues.push({ loc: toLoc(r[0], r[1]), path: pathAt(r[0]), message: `YAML alias *${node.source} refers to no anchor (&${node.source} must come before it in the same document)` });
          }
        },
      });
    }
    let broken = yamlIssues.length > 0;
    // envs: keep numbers/booleans as written (`1.10` → "1.10").
    if (!broken && isMap(contents)) {
      const envs = contents.get('envs', true);
      if (isMap(envs)) {
        for (const pair of envs.items) {
          const v = pair.value;
          if (isScalar(v) && (typeof v.value === 'number' || typeof v.value === 'boolean')) {
            v.value = typeof v.source === 'string' && v.source !== '' ? v.source : String(v.value);
          }
        }
      }
    }
    let value: unknown = null;
    if (!broken) {
      try {
        value = doc.toJS({ maxAliasCount: SPEC_LIMITS.maxAliasCount });
      } catch (err) {
        broken = true;
        const msg = (err as Error).message;
        yamlIssues.push({
          loc: startLoc,
          path: [],
          message: /resource exhaustion/i.test(msg) ? `YAML aliases expand too much (more than ${SPEC_LIMITS.maxAliasCount}): refused as a possible alias bomb` : `YAML could not be read: ${msg}`,
        });
      }
    }
    const locate = (path: PathSeg[], at: 'key' | 'value'): Loc | null => {
      let node: unknown = contents;
      let keyNode: unknown = null;
      for (const seg of path) {
        if (isMap(node)) {
          const pair = node.items.find((p) => isPair(p) && keyString(p.key) === String(seg));
          if (!pair) break;
          keyNode = pair.key;
          node = pair.value ?? pair.key;
        } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
          keyNode = node.items[seg];
          node = node.items[seg];
        } else break;
      }
      const target = (at === 'key' && keyNode) || node;
      const range = (target as { range?: [number, number, number] } | null)?.range;
      if (!range) return startLoc;
      // An empty value (`run:`) has an empty range: point at its key instead.
      if (range[0] === range[1] && keyNode && keyNode !== target) {
        const kr = (keyNode as { range?: [number, number, number] }).range;
        if (kr) return toLoc(kr[0], kr[1]);
      }
      return toLoc(range[0], range[1]);
    };
    docs.push({ value: isNullDoc(contents) && !broken ? null : value, locate, startLoc, broken, yamlIssues });
  }
  return { fatal: false, docs, issues: [] };
}

/** A map key as the JS object key it becomes (`toJS` stringifies). */
function keyString(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  if (isAlias(key)) return `*${key.source}`;
  return String(key);
}

function isNullDoc(contents: unknown): boolean {
  return contents == null || (isScalar(contents) && contents.value == null);
}

// ───────────────────────────── JSON form ─────────────────────────────

/** A problem found by {@link checkJsonValue}: a path (segments) and a full message. */
interface ValueProblem {
  path: PathSeg[];
  message: string;
}

/**
 * Depth, size and plain-JSON checks on a JS value, iteratively (so cycles, shared sub-trees and
 * deep nesting cost at most `maxJsonNodes` steps). Returns the problems (a fatal one alone).
 */
function checkJsonValue(root: unknown): ValueProblem[] {
  const problems: ValueProblem[] = [];
  let nodes = 0;
  let bytes = 0;
  const stack: Array<{ v: unknown; depth: number; path: PathSeg[] }> = [{ v: root, depth: 0, path: [] }];
  while (stack.length) {
    const { v, depth, path } = stack.pop()!;
    if (++nodes > SPEC_LIMITS.maxJsonNodes) return [{ path: [], message: `the spec is too large: more than ${SPEC_LIMITS.maxJsonNodes} values` }];
    if (v === null || typeof v === 'boolean') continue;
    if (typeof v === 'string') {
      bytes += v.length;
      if (bytes > SPEC_LIMITS.maxBytes) return [{ path: [], message: `the spec is too large: more than ${KiB(SPEC_LIMITS.maxBytes)} of text` }];
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) problems.push({ path, message: `expected a finite number, got ${v}` });
      continue;
    }
    const isPlain = typeof v === 'object' && (Array.isArray(v) || [Object.prototype, null].includes(Object.getPrototypeOf(v)));
    if (!isPlain) {
      problems.push({ path, message: `expected plain data (strings, numbers, booleans, null, lists, maps), got ${describe(v)}` });
      continue;
    }
    if (depth + 1 > SPEC_LIMITS.maxDepth) return [{ path, message: `the spec nests maps/lists deeper than ${SPEC_LIMITS.maxDepth} levels` }];
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], depth: depth + 1, path: [...path, i] });
    } else {
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
        bytes += k.length;
        stack.push({ v: child, depth: depth + 1, path: [...path, k] });
      }
    }
  }
  return problems;
}

// ───────────────────────────── schema ─────────────────────────────

/** Issue params our schemas set: `at: 'key'` points the line at the key; `full`: no ", got …". */
interface IssueParams {
  at?: 'key';
  full?: boolean;
}

// Control characters, zero-width and bidirectional-override characters: a name is shown in the
// dashboard and the terminal and must not hide or reorder text.
const INVISIBLE = /[\p{Cc}\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/u;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED_ENV_PREFIX = 'JOBDECK_';

/** Checks a name; returns the problem or null. */
function nameProblem(v: string): string | null {
  if (v.trim() === '') return 'expected a non-empty name';
  if (v.length > SPEC_LIMITS.maxNameLength) return `expected a name of at most ${SPEC_LIMITS.maxNameLength} characters`;
  if (INVISIBLE.test(v)) return 'expected a name without control or invisible characters (newlines, tabs, escapes, zero-width, bidi)';
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
    if (v.includes('\0')) ctx.addIssue({ code: 'custom', message: `expected ${what} without NUL bytes`, params: { full: true } });
  });

const WorkdirSchema = z.string({ error: 'expected a directory path (a string)' }).superRefine((v, ctx) => {
  if (v.trim() === '') ctx.addIssue({ code: 'custom', message: 'expected a non-empty directory path' });
  else if (v.length > SPEC_LIMITS.maxWorkdirLength) ctx.addIssue({ code: 'custom', message: `expected a path of at most ${SPEC_LIMITS.maxWorkdirLength} characters`, params: { full: true } });
  else if (/\p{Cc}/u.test(v)) ctx.addIssue({ code: 'custom', message: 'expected a path without control characters' });
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

function envNameProblem(k: string): string | null {
  if (!ENV_NAME.test(k)) return `invalid env var name ${describe(k)}: expected letters, digits and _ (not starting with a digit)`;
  if (k.toUpperCase().startsWith(RESERVED_ENV_PREFIX)) return `env var name ${describe(k)} is reserved: names starting with ${RESERVED_ENV_PREFIX} are set by jobdeck`;
  return null;
}

function envValueProblem(v: string): string | null {
  const n = utf8Bytes(v);
  if (n > SPEC_LIMITS.maxEnvValueBytes) return `expected a value of at most ${KiB(SPEC_LIMITS.maxEnvValueBytes)}, got ${n} bytes`;
  if (v.includes('\0')) return 'expected a value without NUL bytes';
  return null;
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

const RESTARTS_EXPECTED = 'expected an integer ≥ 0';
const EXIT_CODE_EXPECTED = 'expected an exit code (an integer from 0 to 255)';
const ExitCodeSchema = z.int({ error: EXIT_CODE_EXPECTED }).min(0, { error: EXIT_CODE_EXPECTED }).max(255, { error: EXIT_CODE_EXPECTED });

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
  },
  { error: 'expected a map with max_restarts_on_errors, recover_on_exit_codes, strategy (or a strategy name)' },
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

const INFRA_EXPECTED = 'expected where to run: "local" or "slurm"';
/** `resources.infra`: validated here, normalized in validateTask (kept as written in `other`). */
const InfraSchema = z.string({ error: INFRA_EXPECTED }).superRefine((v, ctx) => {
  const n = v.trim().toLowerCase();
  if ((SPEC_EXECUTORS as readonly string[]).includes(n)) return;
  const shown = describe(v);
  const message = n.startsWith('slurm/')
    ? `infra ${shown}: jobdeck submits to the one Slurm cluster its server is set up for; write infra: slurm (the server picks the partition: JOBDECK_SLURM_PARTITION)`
    : `infra ${shown} is not available: jobdeck runs tasks on this machine (infra: local) or on Slurm (infra: slurm)`;
  ctx.addIssue({ code: 'custom', message, params: { full: true } });
});

const ResourcesSchema = z.strictObject(
  {
    cpus: CpusSchema.nullish(),
    memory: MemorySchema.nullish(),
    job_recovery: JobRecoverySchema.nullish(),
    ...Object.fromEntries(SKYPILOT_RESOURCE_KEYS.map((k) => [k, recorded])),
    infra: InfraSchema.nullish(),
    any_of: unsupported('any_of (a list of alternative resources) is not supported: give one set of resources'),
    ordered: unsupported('ordered (a list of alternative resources) is not supported: give one set of resources'),
  },
  { error: 'expected a map of resources (cpus, memory, job_recovery, …)' },
);

const TaskSchema = z.strictObject(
  {
    name: NameSchema.nullish(),
    envs: EnvsSchema.nullish(),
    workdir: WorkdirSchema.nullish(),
    setup: scriptSchema('setup').nullish(),
    run: scriptSchema('run').nullish(),
    resources: ResourcesSchema.nullish(),
    job_recovery: JobRecoverySchema.nullish(),
    num_nodes: z
      .int({ error: 'expected an integer (and only 1: multi-node is not supported)' })
      .superRefine((v, ctx) => {
        if (v !== 1) ctx.addIssue({ code: 'custom', message: `multi-node is not supported: jobdeck runs each task on one node (num_nodes must be 1, got ${v})`, params: { full: true } });
      })
      .nullish(),
    file_mounts: unsupported('file_mounts is not supported: jobdeck runs tasks on this machine; refer to files by path or set workdir'),
    service: unsupported('service (SkyServe) is not supported: jobdeck runs jobs, not services'),
    config: unsupported('config (SkyPilot config overrides) is not supported'),
    experimental: unsupported('experimental (SkyPilot config overrides) is not supported'),
    secrets: unsupported('secrets is not supported: use envs (values whose names look secret are masked when shown)'),
    volumes: unsupported('volumes is not supported: jobdeck runs tasks on this machine; refer to files by path'),
    inputs: unsupported('inputs (a SkyPilot optimizer hint) is not supported'),
    outputs: unsupported('outputs (a SkyPilot optimizer hint) is not supported'),
    event_callback: unsupported('event_callback is not supported'),
  },
  { error: 'expected a map of task keys (name, envs, workdir, setup, run, resources, job_recovery, num_nodes)' },
);

const TASK_KEYS = ['name', 'envs', 'workdir', 'setup', 'run', 'resources', 'job_recovery', 'num_nodes'];
const RESOURCE_KEYS = ['cpus', 'memory', 'job_recovery', ...SKYPILOT_RESOURCE_KEYS];
const JOB_RECOVERY_KEYS = ['max_restarts_on_errors', 'recover_on_exit_codes', 'strategy'];

/** The keys a map at `path` allows (for "did you mean"). */
function allowedKeysAt(path: readonly PathSeg[]): string[] {
  const last = path[path.length - 1];
  if (path.length === 0) return TASK_KEYS;
  if (last === 'resources') return RESOURCE_KEYS;
  if (last === 'job_recovery') return JOB_RECOVERY_KEYS;
  return [];
}

/** Edit distance with adjacent transpositions (optimal string alignment): "nmae" → "name" is 1. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

function unknownKeyMessage(key: string, allowed: string[]): string {
  if (key === 'spot_recovery') return `unknown key "spot_recovery"; use job_recovery (SkyPilot's newer name)`;
  if (key.length > 64) return `unknown key ${describe(key)}`;
  const lower = key.toLowerCase();
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of allowed) {
    const d = editDistance(lower, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  const shown = describe(key);
  if (best && bestD <= Math.max(1, Math.floor(best.length / 4))) return `unknown key ${shown}; did you mean "${best}"?`;
  return allowed.length ? `unknown key ${shown} (expected one of: ${allowed.join(', ')})` : `unknown key ${shown}`;
}

// ───────────────────────────── normalization ─────────────────────────────

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A task as validated, before overrides (envs may still hold nulls). */
interface DraftTask extends Omit<TaskSpec, 'envs'> {
  envs: Record<string, string | null>;
  /** `resources.infra`, normalized; null when not given. */
  infra: SpecExecutor | null;
  doc: RawDoc;
  label: string;
}

/** Issues listed per document at most (then one "…and N more"). */
const MAX_ISSUES_PER_DOCUMENT = 50;

const DEFAULT_RESOURCES = (): Resources => ({ cpus: 1, cpusAtLeast: false, memoryGb: null, memoryAtLeast: false, other: {} });

function finish(docs: RawDoc[], file: string, overrides: SpecOverrides | undefined, issues: SpecIssue[]): { spec: PipelineSpec | null; issues: SpecIssue[] } {
  if (docs.length === 0 || (docs.length === 1 && docs[0].value == null && !docs[0].broken)) {
    issues.push(issueAt(file, docs[0]?.startLoc ?? null, '', 'the spec is empty: expected a task (a map with at least `run`) or several separated by ---'));
    return { spec: null, issues };
  }

  // Header document: first of several, holding only `name` (SkyPilot's chain-DAG name).
  let headerName: string | null = null;
  let taskDocs = docs;
  const first = docs[0];
  if (docs.length > 1 && !first.broken && isPlainMap(first.value) && Object.keys(first.value).length === 1 && Object.hasOwn(first.value, 'name')) {
    taskDocs = docs.slice(1);
    const n = first.value.name;
    if (n != null) {
      const p = typeof n === 'string' ? nameProblem(n) : 'expected a name (a string)';
      if (p) issues.push(issueAt(file, first.locate(['name'], 'value'), 'pipeline.name', `${p}, got ${describe(n)}`));
      else headerName = n as string;
    }
  }
  if (taskDocs !== docs) for (const y of first.yamlIssues) issues.push(issueAt(file, y.loc, formatPath('pipeline', y.path), y.message));
  taskDocs.forEach((doc, index) => {
    for (const y of doc.yamlIssues) issues.push(issueAt(file, y.loc, formatPath(`task[${index}]`, y.path), y.message));
  });
  if (taskDocs.length > SPEC_LIMITS.maxTasks) {
    issues.push(issueAt(file, taskDocs[SPEC_LIMITS.maxTasks].startLoc, `task[${SPEC_LIMITS.maxTasks}]`, `too many tasks: ${taskDocs.length}, at most ${SPEC_LIMITS.maxTasks}`));
    return { spec: null, issues };
  }

  const drafts: DraftTask[] = [];
  taskDocs.forEach((doc, index) => {
    const label = `task[${index}]`;
    if (doc.broken) return;
    if (doc.value == null) {
      issues.push(issueAt(file, doc.startLoc, label, `empty document: expected a task${doc.startLoc ? ' (remove the extra --- or add the task)' : ''}`));
      return;
    }
    // YAML values are checked like the JSON form too (timestamps, binary, sets are not JSON).
    const problems = checkJsonValue(doc.value);
    if (problems.length) {
      for (const p of problems) issues.push(issueAt(file, doc.locate(p.path, 'value'), formatPath(label, p.path), p.message));
      return;
    }
    const draft = validateTask(doc, label, file, issues);
    if (draft) drafts.push(draft);
  });

  // Overrides.
  let overrideEnvs: Record<string, string> = {};
  if (overrides?.name !== undefined) {
    const p = typeof overrides.name === 'string' ? nameProblem(overrides.name) : 'expected a name (a string)';
    if (p) issues.push(issueAt(file, null, 'overrides.name', `${p}, got ${describe(overrides.name)}`));
  }
  if (overrides?.envs !== undefined) {
    if (!isPlainMap(overrides.envs)) issues.push(issueAt(file, null, 'overrides.envs', `expected a map of NAME: value, got ${describe(overrides.envs)}`));
    else if (Object.keys(overrides.envs).length > SPEC_LIMITS.maxEnvCount) {
      issues.push(issueAt(file, null, 'overrides.envs', `expected at most ${SPEC_LIMITS.maxEnvCount} env vars, got ${Object.keys(overrides.envs).length}`));
    } else {
      const ok: Array<[string, string]> = [];
      for (const [k, v] of Object.entries(overrides.envs)) {
        const path = formatPath('overrides.envs', [k]);
        const kp = envNameProblem(k);
        if (kp) issues.push(issueAt(file, null, path, kp));
        else if (typeof v !== 'string') issues.push(issueAt(file, null, path, `expected a string value, got ${describe(v)}`));
        else {
          const vp = envValueProblem(v);
          if (vp) issues.push(issueAt(file, null, path, vp));
          else ok.push([k, v]);
        }
      }
      overrideEnvs = Object.fromEntries(ok);
    }
  }

  // One executor per pipeline: the first task naming `infra` decides; others must agree.
  let executor: { value: SpecExecutor; label: string } | null = null;
  for (const d of drafts) {
    if (d.infra === null) continue;
    if (!executor) executor = { value: d.infra, label: d.label };
    else if (d.infra !== executor.value) {
      issues.push(
        issueAt(
          file,
          d.doc.locate(['resources', 'infra'], 'value'),
          `${d.label}.resources.infra`,
          `infra "${d.infra}" differs from ${executor.label}'s "${executor.value}": the tasks of a pipeline run on one executor`,
        ),
      );
    }
  }

  const tasks: TaskSpec[] = [];
  for (const d of drafts) {
    const envs: Array<[string, string]> = [];
    for (const [k, v] of Object.entries(d.envs)) {
      if (Object.hasOwn(overrideEnvs, k)) continue;
      if (v === null) {
        issues.push(issueAt(file, d.doc.locate(['envs', k], 'key'), formatPath(d.label, ['envs', k]), `has no value: give it in the spec or as an override (--env ${k}=…)`));
        continue;
      }
      envs.push([k, v]);
    }
    envs.push(...Object.entries(overrideEnvs));
    envs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (envs.length > SPEC_LIMITS.maxEnvCount) {
      issues.push(issueAt(file, d.doc.locate(['envs'], 'key'), `${d.label}.envs`, `expected at most ${SPEC_LIMITS.maxEnvCount} env vars (with overrides), got ${envs.length}`));
    }
    const total = envs.reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);
    if (total > SPEC_LIMITS.maxEnvTotalBytes) {
      issues.push(issueAt(file, d.doc.locate(['envs'], 'key'), `${d.label}.envs`, `expected env vars of at most ${KiB(SPEC_LIMITS.maxEnvTotalBytes)} in all (with overrides), got ${total} bytes`));
    }
    const { doc: _doc, label: _label, infra: _infra, ...rest } = d;
    tasks.push({ ...rest, envs: Object.fromEntries(envs) });
  }

  if (issues.length) return { spec: null, issues: sortIssues(issues) };
  const name = (overrides?.name as string | undefined) ?? headerName ?? tasks[0]?.name ?? deriveName(tasks) ?? 'job';
  return { spec: { name, tasks, ...(executor ? { executor: executor.value } : {}) }, issues: [] };
}

function sortIssues(issues: SpecIssue[]): SpecIssue[] {
  // Stable: whole-file and per-document issues keep their order; located ones by line.
  return issues
    .map((issue, i) => ({ issue, i }))
    .sort((a, b) => (a.issue.line ?? Infinity) - (b.issue.line ?? Infinity) || a.i - b.i)
    .map(({ issue }) => issue);
}

function validateTask(doc: RawDoc, label: string, file: string, issues: SpecIssue[]): DraftTask | null {
  const raw = doc.value;
  const parsed = TaskSchema.safeParse(raw);
  if (!parsed.success) {
    // Bounded work and output for hostile documents (thousands of bad keys or list items).
    let reported = 0;
    const total = parsed.error.issues.reduce((n, zi) => n + (zi.code === 'unrecognized_keys' ? zi.keys.length : 1), 0);
    const full = () => {
      if (reported < MAX_ISSUES_PER_DOCUMENT) return false;
      const last = issues[issues.length - 1];
      const loc = last && last.line != null ? { line: last.line, column: last.column ?? 1, endLine: last.endLine ?? last.line, endColumn: last.endColumn ?? 1 } : doc.startLoc;
      issues.push(issueAt(file, loc, label, `…and ${total - reported} more issues in this document`));
      return true;
    };
    for (const zi of parsed.error.issues) {
      let path = zi.path.filter((s): s is PathSeg => typeof s === 'string' || typeof s === 'number');
      if (zi.code === 'unrecognized_keys') {
        for (const key of zi.keys) {
          if (full()) return null;
          reported++;
          issues.push(issueAt(file, doc.locate([...path, key], 'key'), formatPath(label, [...path, key]), unknownKeyMessage(key, allowedKeysAt(path))));
        }
        continue;
      }
      if (full()) return null;
      reported++;
      const params = ((zi as { params?: IssueParams }).params ?? {}) as IssueParams;
      path = existingPath(raw, path);
      const message = params.full ? zi.message : `${zi.message}, got ${describe(valueAt(raw, path))}`;
      issues.push(issueAt(file, doc.locate(path, params.at === 'key' ? 'key' : 'value'), formatPath(label, path), message));
    }
    return null;
  }
  const t = parsed.data;
  const res = t.resources ?? null;
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
  };
  const blankToNull = (s: string | null | undefined) => (s == null || s.trim() === '' ? null : s);
  return {
    name: t.name ?? null,
    setup: blankToNull(t.setup),
    run: blankToNull(t.run),
    envs: t.envs ?? {},
    workdir: t.workdir ?? null,
    resources,
    jobRecovery: {
      maxRestartsOnErrors: jr?.max_restarts_on_errors ?? 0,
      recoverOnExitCodes: [...new Set(jr?.recover_on_exit_codes ?? [])].sort((a, b) => a - b),
      strategy: jr?.strategy ?? null,
    },
    infra: typeof res?.infra === 'string' ? (res.infra.trim().toLowerCase() as SpecExecutor) : null,
    doc,
    label,
  };
}

function lineOf(loc: Loc | null): string {
  return loc ? `, line ${loc.line}` : '';
}

/** A short job name from the first meaningful line of the first task with a `run`. */
function deriveName(tasks: TaskSpec[]): string | null {
  const run = tasks.find((t) => t.run)?.run;
  if (!run) return null;
  for (const rawLine of run.split('\n')) {
    const line = rawLine.replace(/[\p{Cc}\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/gu, ' ').replace(/\s+/g, ' ').trim();
    if (!line || line.startsWith('#')) continue;
    return line.length > 40 ? `${line.slice(0, 39).trimEnd()}…` : line;
  }
  return null;
}
