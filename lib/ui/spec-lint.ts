/**
 * Spec problems → editor diagnostics (character ranges in the YAML text), for the New job
 * editor's lint. Pure: works on the text, not on CodeMirror objects. Browser-safe.
 */
import { MASKED_VALUE } from '../auth/secrets';
import type { SpecIssue } from './api';

/** A problem at a character range [from, to) of the text. */
export interface TextDiagnostic {
  from: number;
  to: number;
  severity: 'error' | 'warning';
  message: string;
}

/** Start offsets of every line (index 0 = line 1). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** "run" or "tasks[1].envs.TOKEN" from a path in either form. */
export function formatPath(p: SpecIssue['path']): string {
  if (!p) return '';
  if (typeof p === 'string') return p;
  return p.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${k}` : String(k)), '');
}

/**
 * Places each issue at its line (1-based) and column (1-based, optional): from the column (or
 * the line's first non-blank character) to the end of the line. An issue without a line goes on
 * line 1. Lines past the end are clamped to the last line. `severity`: 'warning' for the spec's
 * warnings (keys accepted, not acted on).
 */
export function issuesToDiagnostics(text: string, issues: SpecIssue[], severity: TextDiagnostic['severity'] = 'error'): TextDiagnostic[] {
  const starts = lineStarts(text);
  return issues.map((iss) => {
    const ln = Math.min(Math.max(1, iss.line ?? 1), starts.length);
    const start = starts[ln - 1];
    const end = ln < starts.length ? starts[ln] - 1 : text.length;
    const lineText = text.slice(start, end);
    const indent = lineText.length - lineText.trimStart().length;
    const col = iss.column && iss.column > 0 ? Math.min(iss.column - 1, lineText.length) : indent;
    const from = start + col;
    const to = Math.max(from, end);
    const where = formatPath(iss.path);
    return { from, to, severity, message: where ? `${where}: ${iss.message}` : iss.message };
  });
}

/**
 * Every masked secret value ("••••••") in the text: the job would receive the mask instead of
 * the secret, so each must be replaced before submitting.
 */
export function maskedDiagnostics(text: string): TextDiagnostic[] {
  const out: TextDiagnostic[] = [];
  for (let i = text.indexOf(MASKED_VALUE); i !== -1; i = text.indexOf(MASKED_VALUE, i + MASKED_VALUE.length)) {
    out.push({ from: i, to: i + MASKED_VALUE.length, severity: 'error', message: 'Masked secret value: type the real value (the API never shows secrets back).' });
  }
  return out;
}

/** 1-based line number of a character offset. */
export function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
