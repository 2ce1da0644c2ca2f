/**
 * YAML syntax problems as a person reads them: one issue per problem, at the line where it is,
 * under a clean key path. The parser (the `yaml` library) often reports one mistake several
 * times (`run: echo a: b` gives two "nested mappings" errors and an "implicit keys" one), reports
 * an unclosed `[` or quote where the text ends, and — parsing a broken map — names keys made of
 * values (`run["echo a"]["b foo"]`). So: an unclosed bracket or quote is placed at its opening;
 * of the errors in one top-level entry (a line at column 1 and the lines indented under it)
 * only the first is kept, the rest being its echoes (warnings, such as an unknown tag, stand
 * alone: one per line); and the path is read from the text's
 * indentation, not from the broken tree. Messages: messages.ts yamlProblemMessage. Pure.
 */
import { isMap, isScalar, isSeq, visit, type Document, type YAMLError, type YAMLWarning } from 'yaml';
import { MAX_ISSUES_PER_DOCUMENT, yamlProblemMessage, type Loc, type PathSeg, type YamlProblem } from './messages';

/** A YAML-level problem of one document; the path is relative to the document. */
export type YamlIssue = { loc: Loc | null; path: PathSeg[]; message: string };

/** The text's lines, read once per spec (shared by its documents). */
export interface TextLines {
  /** The text split at "\n" (index 0 is line 1). */
  lines: string[];
  /** Per line (0-based), the 0-based index of the top-level entry it belongs to: the last line at or above it that starts at column 1 (not blank, not a comment). */
  entryOf: number[];
  /** 1-based line and column of an offset. */
  toLoc(start: number, end?: number): Loc;
}

/** Splits a text into {@link TextLines}; `toLoc` is the parser's line counter. One pass. */
export function textLines(text: string, toLoc: TextLines['toLoc']): TextLines {
  const lines = text.split('\n');
  const entryOf = new Array<number>(lines.length);
  let entry = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l !== '' && !/^\s/.test(l) && !l.startsWith('#')) entry = i;
    entryOf[i] = entry;
  }
  return { lines, entryOf, toLoc };
}

/** A line's key (`  key: value`, `- key:`), the column of its ":" (1-based) and its value text. */
function keyOfLine(line: string): { key: string; colon: number; value: string } | null {
  const lead = /^\s*(?:-\s+)*/.exec(line)![0].length;
  const m = /^("[^"]*"|'[^']*'|[^\s#'"][^#]*?)\s*:(?=\s|$)/.exec(line.slice(lead));
  if (!m) return null;
  const raw = m[1];
  const key = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
  const value = line.slice(lead + m[0].length).replace(/(^|\s)#.*$/, '').trim();
  return { key, colon: lead + m[0].length, value };
}

const indentOf = (line: string) => /^\s*/.exec(line)![0].length;

/**
 * The key path of a place in the text: the keys (with no value on their line) that it is
 * indented under, then its own line's key when the place is after that key's ":". List items
 * add no index (the text alone does not say which). Stops at the document's first line.
 */
export function textPath(t: TextLines, line: number, column: number, firstLine: number): PathSeg[] {
  const own = t.lines[line - 1] ?? '';
  const path: PathSeg[] = [];
  const k = keyOfLine(own);
  if (k && column > k.colon) path.push(k.key);
  let threshold = own.trim() === '' ? column - 1 : indentOf(own);
  for (let i = line - 2; i >= firstLine - 1 && threshold > 0; i--) {
    const l = t.lines[i];
    if (l.trim() === '' || l.trim().startsWith('#')) continue;
    const ind = indentOf(l);
    if (ind >= threshold) continue;
    const parent = keyOfLine(l);
    // A key with its value on its line (`run: echo`, `run: |`) has no keys under it.
    if (!parent || parent.value !== '') break;
    path.unshift(parent.key);
    threshold = ind;
  }
  return path;
}

/**
 * Whether a flow collection's or quoted string's text (from its opening character) closes: a
 * string ends with its quote, a collection's brackets balance (quoted items skipped; a quote
 * inside a plain item, as in `[don't]`, is no quote).
 */
function isClosed(body: string): boolean {
  const open = body[0];
  if (open === '"' || open === "'") return body.length > 1 && body.endsWith(open) && !(open === '"' && /(^|[^\\])(\\\\)*\\"$/.test(body));
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if ((c === '"' || c === "'") && /[[{,:]$/.test(body.slice(0, i).trimEnd())) quote = c;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
  }
  return depth <= 0 && quote === null;
}

/** The opening `[`, `{` or quote of an unclosed collection or string that ends at `before`. */
function unclosedOpening(doc: Document.Parsed, text: string, before: number, opener: string | null): number | null {
  let best: number | null = null;
  visit(doc, {
    Node(_k, n) {
      const r = (n as { range?: [number, number, number] }).range;
      if (!r || r[0] > before) return;
      const first = text[r[0]];
      const flow = (isMap(n) || isSeq(n)) && n.flow;
      const quoted = isScalar(n) && (n.type === 'QUOTE_DOUBLE' || n.type === 'QUOTE_SINGLE');
      if (!flow && !quoted) return;
      if (opener !== null && first !== opener) return;
      if (isClosed(text.slice(r[0], r[1]).trimEnd())) return;
      if (best === null || r[0] > best) best = r[0];
    },
  });
  return best;
}

/** What the parser's error is, from its code and words, and the text of the line it is on. */
function classify(e: YAMLError | YAMLWarning, lineText: string): YamlProblem {
  const warning = e.name === 'YAMLWarning';
  switch (e.code) {
    case 'BLOCK_AS_IMPLICIT_KEY': {
      const k = keyOfLine(lineText);
      return k && /:(\s|$)/.test(k.value) ? { kind: 'colon-in-value' } : { kind: 'indented-under-value' };
    }
    case 'TAB_AS_INDENT':
      return { kind: 'tab-indent' };
    case 'BAD_INDENT':
      if (/same column/.test(e.message)) return { kind: 'misaligned-keys' };
      break;
    case 'MISSING_CHAR':
      if (/followed by map values/.test(e.message)) return { kind: 'missing-colon' };
      break;
  }
  return { kind: 'other', warning, text: e.message };
}

/** The opener an "is not closed" error is about ("[" / "{" / a quote), or null for another error. */
function unclosedOpener(e: YAMLError | YAMLWarning): string | null | undefined {
  if (e.code === 'BAD_INDENT' || e.code === 'MISSING_CHAR') {
    const m = /end with an? ([\]}])|Missing closing (["'])quote/.exec(e.message);
    if (m) return m[1] === ']' ? '[' : m[1] === '}' ? '{' : (m[2] ?? null);
  }
  return undefined;
}

/**
 * The syntax problems of one document (yaml's errors and warnings): one error per top-level entry,
 * one warning per line, at most {@link MAX_ISSUES_PER_DOCUMENT} (then a count).
 */
export function yamlSyntaxIssues(doc: Document.Parsed, text: string, t: TextLines): YamlIssue[] {
  const problems = [...doc.errors, ...doc.warnings].sort((a, b) => a.pos[0] - b.pos[0]);
  const firstLine = t.toLoc(doc.range[0]).line;
  const out: YamlIssue[] = [];
  const entries = new Set<string>();
  let dropped = 0;
  for (const e of problems) {
    let start = e.pos[0];
    let end = e.pos[1];
    let problem: YamlProblem | null = null;
    const opener = unclosedOpener(e);
    if (opener !== undefined) {
      const at = unclosedOpening(doc, text, start, opener);
      if (at !== null) {
        [start, end] = [at, at + 1];
        problem = { kind: 'unclosed', opener: text[at] };
      }
    }
    const loc = t.toLoc(start, end);
    // Errors echo within their entry; a warning (an unknown tag) is its own, one per line.
    const group = e.name === 'YAMLWarning' ? `w${loc.line}` : `e${t.entryOf[loc.line - 1] ?? loc.line - 1}`;
    if (entries.has(group)) continue;
    entries.add(group);
    if (out.length >= MAX_ISSUES_PER_DOCUMENT) {
      dropped++;
      continue;
    }
    problem ??= classify(e, t.lines[loc.line - 1] ?? '');
    out.push({ loc, path: textPath(t, loc.line, loc.column, firstLine), message: yamlProblemMessage(problem) });
  }
  if (dropped) out.push({ loc: out[out.length - 1].loc, path: [], message: `…and ${dropped} more YAML problems in this document` });
  return out;
}
