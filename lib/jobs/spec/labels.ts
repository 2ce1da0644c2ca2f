import { z } from 'zod';
import { textProblem } from './text';

/**
 * `resources.labels` (SkyPilot's key: a map of string → string put on the task's instances or
 * pods). jobdeck keeps them on the job, shows them (`jobdeck queue --json`, the API's job record,
 * the dashboard) and filters by them (`jobdeck queue --label k=v`, `GET /api/jobs?label=k=v`);
 * docs/spec.md "resources". Pure: no node:* import.
 */

/** Most labels one task may carry. */
export const MAX_LABELS = 64;
/** Longest label value (characters). */
export const MAX_LABEL_VALUE = 256;

/**
 * A label key: 1–128 characters of letters, digits, `.`, `_`, `-` and `/` (a Kubernetes-style
 * `prefix/name`), starting and ending with a letter or digit. No `=`: `k=v` is how a filter names a pair.
 */
export const LABEL_KEY = /^[A-Za-z0-9](?:[A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$/;

/** What a label key must look like (the rule of {@link LABEL_KEY} in words). */
export const LABEL_KEY_EXPECTED = 'expected a label key: 1–128 letters, digits, ., _, - and /, starting and ending with a letter or digit';

/** The problem with a label value, or null. */
export function labelValueProblem(v: string): string | null {
  if (v.length > MAX_LABEL_VALUE) return `expected a label value of at most ${MAX_LABEL_VALUE} characters, got ${v.length}`;
  if (/\p{Cc}/u.test(v)) return 'expected a label value without control characters';
  return textProblem(v);
}

/** `resources.labels`: a map of key → string value (SkyPilot's schema: strings only). */
export const LabelsSchema = z.unknown().transform((v, ctx): Record<string, string> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    ctx.addIssue({ code: 'custom', message: 'expected a map of label key: value' });
    return z.NEVER;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_LABELS) ctx.addIssue({ code: 'custom', message: `expected at most ${MAX_LABELS} labels, got ${entries.length}`, params: { full: true } });
  const out: Record<string, string> = {};
  for (const [k, value] of entries) {
    if (!LABEL_KEY.test(k)) {
      ctx.addIssue({ code: 'custom', message: `label ${JSON.stringify(k.slice(0, 80))}: ${LABEL_KEY_EXPECTED}`, path: [k], params: { at: 'key', full: true } });
    } else if (typeof value !== 'string') {
      const shown = value === null ? 'nothing' : typeof value === 'object' ? 'a map or list' : `${typeof value} ${String(value)}`;
      ctx.addIssue({ code: 'custom', message: `expected a string value (quote it: ${k}: "${typeof value === 'number' || typeof value === 'boolean' ? String(value) : '…'}"), got ${shown}`, path: [k], params: { full: true } });
    } else {
      const p = labelValueProblem(value);
      if (p) ctx.addIssue({ code: 'custom', message: p, path: [k], params: { full: true } });
      else out[k] = value;
    }
  }
  return out;
});

/** The labels a stored task spec carries (`resources.other.labels`), string values only; {} when none. */
export function taskLabels(taskSpec: unknown): Record<string, string> {
  const other = (taskSpec as { resources?: { other?: { labels?: unknown } } } | null)?.resources?.other;
  const raw = other?.labels;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Job.labels of a pipeline: one map per task that has labels, in task order (empty: none). */
export function jobLabels(tasks: readonly unknown[]): Array<Record<string, string>> {
  return tasks.map(taskLabels).filter((l) => Object.keys(l).length > 0);
}

/**
 * The labels a job shows: every task's (Job.labels), a key's value from the first task that has
 * it. Values that are not strings (a job stored before labels were checked) are left out.
 */
export function mergedLabels(stored: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(stored)) return out;
  for (const m of stored) {
    if (!m || typeof m !== 'object' || Array.isArray(m)) continue;
    for (const [k, v] of Object.entries(m as Record<string, unknown>)) if (typeof v === 'string' && !Object.hasOwn(out, k)) out[k] = v;
  }
  return out;
}
