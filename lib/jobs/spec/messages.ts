/**
 * The job spec's error texts: {@link SpecIssue}, {@link SpecError}, their one-line format, and the
 * helpers every message is built with (value descriptions, escaping, key paths, "did you mean").
 * The format and the rules for messages are in docs/spec.md ("Errors"). Pure: no node:* import.
 */

/** A key path inside one document: map keys and list indexes. */
export type PathSeg = string | number;

/** Where a node is in the text: 1-based lines and columns (`endColumn` exclusive). */
export interface Loc {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

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

/** Issues listed per document at most (then one "…and N more"). */
export const MAX_ISSUES_PER_DOCUMENT = 50;

/** Control characters from user text are shown escaped: an issue is safe to print to a terminal. */
export function escapeControls(s: string): string {
  return s.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** An issue at `loc` (null: no line, as in the JSON form), with file, path and message escaped. */
export function issueAt(file: string, loc: Loc | null, path: string, message: string): SpecIssue {
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
export function formatPath(prefix: string, path: readonly PathSeg[]): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Issues in reading order. Stable: whole-file and per-document issues keep their order; located ones by line. */
export function sortIssues(issues: SpecIssue[]): SpecIssue[] {
  return issues
    .map((issue, i) => ({ issue, i }))
    .sort((a, b) => (a.issue.line ?? Infinity) - (b.issue.line ?? Infinity) || a.i - b.i)
    .map(({ issue }) => issue);
}

/** A size in bytes as `64 KiB` when whole KiB, else `N bytes`. */
export const KiB = (n: number) => (n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`);

/** `, line N` for a located node, '' otherwise (to point at a second place in a message). */
export function lineOf(loc: Loc | null): string {
  return loc ? `, line ${loc.line}` : '';
}

/** A short, human description of a value for "got …" (strings quoted, cut at 40 characters). */
export function describe(v: unknown): string {
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

/**
 * The message for an unknown key: a "did you mean" when one of `allowed` is close (edit distance
 * ≤ max(1, ⌊length/4⌋), case-insensitive), else the allowed keys. `spot_recovery` (SkyPilot's
 * older name) points at `job_recovery`.
 */
export function unknownKeyMessage(key: string, allowed: string[]): string {
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

/**
 * What a YAML syntax problem is, as lib/jobs/spec/syntax.ts tells it from the parser's error and
 * the line it is on; {@link yamlProblemMessage} words it.
 */
export type YamlProblem =
  /** `run: echo a: b` — a plain one-line value holding ": ". */
  | { kind: 'colon-in-value' }
  /** `cpus: 2` followed by a line indented deeper: keys under a key that has its value. */
  | { kind: 'indented-under-value' }
  /** `[`, `{` or a quote opened and never closed (the parser sees it at the end of the text). */
  | { kind: 'unclosed'; opener: string }
  /** Keys of one map at different columns. */
  | { kind: 'misaligned-keys' }
  | { kind: 'tab-indent' }
  /** `B 2` where `key: value` was expected. */
  | { kind: 'missing-colon' }
  /** Anything else: the parser's own words. */
  | { kind: 'other'; warning: boolean; text: string };

const CLOSERS: Record<string, string> = { '[': ']', '{': '}', '"': '"', "'": "'" };
const OPENED: Record<string, string> = { '[': 'list', '{': 'map', '"': 'string', "'": 'string' };

/** The one message of a YAML syntax problem ("YAML syntax error: …"). */
export function yamlProblemMessage(p: YamlProblem): string {
  const syntax = (s: string) => `YAML syntax error: ${s}`;
  switch (p.kind) {
    case 'colon-in-value':
      return syntax('a one-line value containing ": " must be quoted (\'…\') or written as a block (|): YAML reads the ": " as the start of a nested key');
    case 'indented-under-value':
      return syntax('the next line is indented under this key, but this key already has its value on this line: line the next key up with this one');
    case 'unclosed':
      return syntax(`this ${p.opener} ${OPENED[p.opener] ?? 'value'} is never closed with ${CLOSERS[p.opener] ?? p.opener}`);
    case 'misaligned-keys':
      return syntax('the keys of one map must start at the same column: this line is indented differently from the keys before it');
    case 'tab-indent':
      return syntax('this line is indented with a tab: YAML indentation must be spaces');
    case 'missing-colon':
      return syntax('expected "key: value" here: a key needs ":" and a space after it');
    case 'other':
      return `${p.warning ? 'YAML problem' : 'YAML syntax error'}: ${p.text}`;
  }
}
