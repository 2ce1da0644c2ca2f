/**
 * Loading a spec's documents: YAML text → one {@link RawDoc} per document (its plain value, its
 * YAML problems, and the map from key paths to file:line:column), and the same limits for the
 * JSON form ({@link checkJsonValue}). Hostile input is refused before values are built (see
 * docs/spec.md "Limits"); every step is linear in the input. Pure: no node:* import.
 */
import { Composer, LineCounter, Parser, isAlias, isMap, isPair, isScalar, isSeq, visit, type CST, type Document } from 'yaml';
import { describe, issueAt, KiB, MAX_ISSUES_PER_DOCUMENT, type Loc, type PathSeg, type SpecIssue } from './messages';
import { SPEC_LIMITS, utf8Bytes } from './schema';
import { textLines, yamlSyntaxIssues, type TextLines, type YamlIssue } from './syntax';
import { textProblem, unstorableAt } from './text';

/** One document's value and how to find a path's line in it. */
export interface RawDoc {
  value: unknown;
  /** Location of the value at `path` (or of its key when `at` is 'key'); the deepest found. */
  locate: (path: PathSeg[], at: 'key' | 'value') => Loc | null;
  /** Where the document starts. */
  startLoc: Loc | null;
  /** The document had YAML errors (in `yamlIssues`): they are reported, its value is not validated. */
  broken: boolean;
  yamlIssues: YamlIssue[];
}

/** What {@link loadYaml} gives: a fatal issue alone (nothing else read), or the documents. */
export interface LoadedYaml {
  fatal: boolean;
  docs: RawDoc[];
  issues: SpecIssue[];
}

/** Offsets of the text → 1-based positions (after the parser has seen every line). */
interface Lines {
  toLoc(start: number, end?: number): Loc;
  /** The 1-based line of an offset. */
  lineAt(offset: number): number;
}

/** A node's `[start, valueEnd, nodeEnd]` offsets, if it has them. */
type Range = [number, number, number];
const rangeOf = (n: unknown): Range | undefined => (n as { range?: Range } | null)?.range;

/**
 * YAML text → documents, refusing hostile input first (size, documents, depth, aliases).
 * Never throws: a fatal problem comes back as `{ fatal: true, issues: [that one] }`.
 */
export function loadYaml(text: string, file: string): LoadedYaml {
  const fatal = (loc: Loc | null, message: string) => ({ fatal: true, docs: [], issues: [issueAt(file, loc, '', message)] });
  // Bytes ≥ UTF-16 units, so the cheap check first; the exact one only for small texts.
  if (text.length > SPEC_LIMITS.maxBytes || utf8Bytes(text) > SPEC_LIMITS.maxBytes) {
    return fatal(null, `the spec is too large: ${utf8Bytes(text)} bytes, at most ${KiB(SPEC_LIMITS.maxBytes)}`);
  }
  // The text is stored as written (Job.specYaml): even a comment must be storable text.
  const unstorable = unstorableAt(text);
  if (unstorable) return fatal(textLoc(text, unstorable.index), `expected text without ${unstorable.what}`);
  const lc = new LineCounter();
  const lines: Lines = {
    toLoc: (start, end = start) => {
      const a = lc.linePos(start);
      const b = lc.linePos(Math.max(start, end));
      return { line: a.line, column: a.col, endLine: b.line, endColumn: b.col };
    },
    lineAt: (offset) => lc.linePos(offset).line,
  };
  let tokens: CST.Token[];
  try {
    tokens = Array.from(new Parser(lc.addNewLine).parse(text));
  } catch (err) {
    return fatal(null, `YAML could not be read: ${(err as Error).message}`);
  }
  const refused = checkSyntaxTree(tokens, lines);
  if (refused) return fatal(refused.loc, refused.message);

  const composer = new Composer({ prettyErrors: false, uniqueKeys: false, strict: true, logLevel: 'silent' });
  let documents: Document.Parsed[];
  try {
    documents = Array.from(composer.compose(tokens, true, text.length));
  } catch (err) {
    return fatal(null, `YAML could not be read: ${(err as Error).message}`);
  }
  const t = textLines(text, lines.toLoc);
  return { fatal: false, docs: documents.map((doc) => readDocument(doc, lines, text, t)), issues: [] };
}

/** The 1-based line and column of the UTF-16 index `at` of `text`, one character wide. */
function textLoc(text: string, at: number): Loc {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: at - start + 1, endLine: line, endColumn: at - start + 2 };
}

/**
 * Limits on the concrete syntax tree, before any value is built (iterative: no recursion):
 * documents, then nesting depth, then aliases. Returns the first refusal, or null.
 */
function checkSyntaxTree(tokens: CST.Token[], lines: Lines): { loc: Loc; message: string } | null {
  const cstDocs = tokens.filter((t): t is CST.Document => t.type === 'document');
  if (cstDocs.length > SPEC_LIMITS.maxTasks + 1) {
    return {
      loc: lines.toLoc(cstDocs[SPEC_LIMITS.maxTasks + 1].offset),
      message: `too many YAML documents: ${cstDocs.length}, at most ${SPEC_LIMITS.maxTasks} tasks (plus a name-only header)`,
    };
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
  if (tooDeepAt >= 0) return { loc: lines.toLoc(tooDeepAt), message: `the spec nests maps/lists deeper than ${SPEC_LIMITS.maxDepth} levels` };
  if (aliasOffsets.length > SPEC_LIMITS.maxAliasCount) {
    aliasOffsets.sort((a, b) => a - b);
    return {
      loc: lines.toLoc(aliasOffsets[SPEC_LIMITS.maxAliasCount]),
      message: `too many YAML aliases: ${aliasOffsets.length}, at most ${SPEC_LIMITS.maxAliasCount} (refused as a possible alias bomb)`,
    };
  }
  return null;
}

/** One composed document → its value, YAML problems and locator. */
function readDocument(doc: Document.Parsed, lines: Lines, text: string, t: TextLines): RawDoc {
  const contents = doc.contents;
  const startLoc = lines.toLoc(doc.range[0]);
  const pathAt = pathFinder(contents);
  const yamlIssues = yamlSyntaxIssues(doc, text, t);
  if (!yamlIssues.length) yamlIssues.push(...duplicateKeyIssues(doc, lines, pathAt));
  if (!yamlIssues.length) yamlIssues.push(...danglingAliasIssues(doc, lines, pathAt));
  let broken = yamlIssues.length > 0;
  if (!broken) keepEnvsAsWritten(contents);
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
  const locate = locator(contents, startLoc, lines);
  return { value: isNullDoc(contents) && !broken ? null : value, locate, startLoc, broken, yamlIssues };
}

/** The key path of the node at `offset` (a duplicate key, a dangling alias) in a tree that read. */
function pathFinder(contents: unknown): (offset: number) => PathSeg[] {
  return (offset) => {
    const path: PathSeg[] = [];
    let node: unknown = contents;
    const within = (n: unknown, end?: unknown) => {
      const r = rangeOf(n);
      const e = rangeOf(end) ?? r;
      return !!r && !!e && r[0] <= offset && offset <= e[2];
    };
    // Descend through block collections; stop at a value the error starts on (the value as a
    // whole is wrong) and at flow collections (their structure is what broke).
    for (let guard = 0; guard <= SPEC_LIMITS.maxDepth; guard++) {
      const r = rangeOf(node);
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
}

/**
 * Duplicate keys, checked here in linear time (yaml's own `uniqueKeys` check is quadratic in the
 * size of a map: seconds for a hostile 30k-key map). Keys compare as JS object keys do.
 */
function duplicateKeyIssues(doc: Document.Parsed, lines: Lines, pathAt: (offset: number) => PathSeg[]): YamlIssue[] {
  const out: YamlIssue[] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Map<string, number>();
      for (const pair of map.items) {
        const k = keyString(pair.key);
        const at = rangeOf(pair.key);
        const first = seen.get(k);
        if (first !== undefined && at) {
          if (out.length >= MAX_ISSUES_PER_DOCUMENT) return visit.BREAK;
          out.push({ loc: lines.toLoc(at[0], at[1]), path: pathAt(at[0]), message: `YAML key ${describe(k)} is given twice (first at line ${lines.lineAt(first)}): keys must be unique` });
        } else if (at && first === undefined) seen.set(k, at[0]);
      }
    },
  });
  return out;
}

/** Aliases must point at an anchor defined before them. */
function danglingAliasIssues(doc: Document.Parsed, lines: Lines, pathAt: (offset: number) => PathSeg[]): YamlIssue[] {
  const out: YamlIssue[] = [];
  visit(doc, {
    Alias(_key, node) {
      if (!node.resolve(doc)) {
        const r = node.range ?? [doc.range[0], doc.range[0]];
        out.push({ loc: lines.toLoc(r[0], r[1]), path: pathAt(r[0]), message: `YAML alias *${node.source} refers to no anchor (&${node.source} must come before it in the same document)` });
      }
    },
  });
  return out;
}

/** envs: keep numbers/booleans as written (`1.10` → "1.10"; docs/spec.md "envs"). */
function keepEnvsAsWritten(contents: unknown): void {
  if (!isMap(contents)) return;
  const envs = contents.get('envs', true);
  if (!isMap(envs)) return;
  for (const pair of envs.items) {
    const v = pair.value;
    if (isScalar(v) && (typeof v.value === 'number' || typeof v.value === 'boolean')) {
      v.value = typeof v.source === 'string' && v.source !== '' ? v.source : String(v.value);
    }
  }
}

/** The map from key paths to positions: the deepest node of `path` that exists. */
function locator(contents: unknown, startLoc: Loc, lines: Lines): RawDoc['locate'] {
  return (path, at) => {
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
    const range = rangeOf(target);
    if (!range) return startLoc;
    // An empty value (`run:`) has an empty range: point at its key instead.
    if (range[0] === range[1] && keyNode && keyNode !== target) {
      const kr = rangeOf(keyNode);
      if (kr) return lines.toLoc(kr[0], kr[1]);
    }
    return lines.toLoc(range[0], range[1]);
  };
}

/** A map key as the JS object key it becomes (`toJS` stringifies). */
function keyString(key: unknown): string {
  // An empty key (`:` alone) is null, which toJS makes "".
  if (isScalar(key)) return key.value === null ? '' : String(key.value);
  if (isAlias(key)) return `*${key.source}`;
  return String(key);
}

function isNullDoc(contents: unknown): boolean {
  return contents == null || (isScalar(contents) && contents.value == null);
}

// ───────────────────────────── JSON form ─────────────────────────────

/** A problem found by {@link checkJsonValue}: a path (segments) and a full message. */
export interface ValueProblem {
  path: PathSeg[];
  message: string;
}

/**
 * Depth, size, plain-JSON and storable-text ({@link textProblem}: strings and keys) checks on a
 * JS value, iteratively (so cycles, shared sub-trees and
 * deep nesting cost at most `maxJsonNodes` steps). Returns the problems (a fatal one alone).
 * YAML values go through it too: timestamps, binary and sets are not JSON.
 */
export function checkJsonValue(root: unknown): ValueProblem[] {
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
      const p = textProblem(v);
      if (p) problems.push({ path, message: p });
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
        const p = textProblem(k);
        if (p) problems.push({ path: [...path, k], message: `key: ${p}` });
        stack.push({ v: child, depth: depth + 1, path: [...path, k] });
      }
    }
  }
  return problems;
}
