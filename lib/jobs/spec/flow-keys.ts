/**
 * Job-level values given on tasks: pipelineValue() (the first task naming one decides, the others
 * must agree — `resources.infra`, `priority`, `queue`…) and flowKeys(), which reads `depends_on`
 * and `array` by that rule (lib/jobs/spec/flow.ts). Pure: no node:* import.
 */
import { formatPath, issueAt, type PathSeg, type SpecIssue } from './messages';
import type { RawDoc } from './positions';
import { arrayProblem, type SpecArray, type SpecDependsOn } from './flow';

/** What these functions read of a task's draft: where it is, and its label (`task[1]`). */
export interface Drafted {
  doc: RawDoc;
  label: string;
}

/**
 * A job-level value given on tasks (`resources.infra`, `priority`): the first task naming it
 * decides; the others must agree ("the tasks of a pipeline <what>").
 */
export function pipelineValue<T extends string | number, D extends Drafted>(
  drafts: readonly D[],
  get: (d: D) => T | null,
  at: PathSeg[],
  key: string,
  what: string,
  file: string,
  issues: SpecIssue[],
): T | null {
  let first: { value: T; label: string } | null = null;
  for (const d of drafts) {
    const v = get(d);
    if (v === null) continue;
    if (!first) first = { value: v, label: d.label };
    else if (v !== first.value) {
      const show = (x: T) => (typeof x === 'string' ? `"${x}"` : String(x));
      issues.push(issueAt(file, d.doc.locate(at, 'value'), formatPath(d.label, at), `${key} ${show(v)} differs from ${first.label}'s ${show(first.value)}: the tasks of a pipeline ${what}`));
    }
  }
  return first?.value ?? null;
}

/**
 * `depends_on` and `array` (lib/jobs/spec/flow.ts): job-level keys, given on any task, equal
 * where several give them (as `priority`); the array's size is bounded.
 */
export function flowKeys(drafts: ReadonlyArray<Drafted & { dependsOn: SpecDependsOn | null; array: SpecArray | null }>, file: string, issues: SpecIssue[]): { dependsOn: SpecDependsOn | null; array: SpecArray | null; jobRefsAt: Array<Omit<SpecIssue, 'message'>> } {
  const depsKey = pipelineValue(drafts, (d) => (d.dependsOn ? JSON.stringify(d.dependsOn) : null), ['depends_on'], 'depends_on', 'wait for the same jobs', file, issues);
  const arrayKey = pipelineValue(drafts, (d) => (d.array ? JSON.stringify(d.array) : null), ['array'], 'array', 'are one array', file, issues);
  const dependsOn = depsKey === null ? null : (JSON.parse(depsKey) as SpecDependsOn);
  const array = arrayKey === null ? null : (JSON.parse(arrayKey) as SpecArray);
  const arrayDraft = drafts.find((d) => d.array !== null);
  if (array && arrayDraft) {
    const p = arrayProblem(array);
    if (p) issues.push(issueAt(file, arrayDraft.doc.locate(['array'], 'key'), formatPath(arrayDraft.label, ['array']), p));
  }
  const depsDraft = drafts.find((d) => d.dependsOn !== null);
  const jobRefsAt = depsDraft
    ? (dependsOn?.jobs ?? []).map((_, i) => {
        const { message: _m, ...at } = issueAt(file, depsDraft.doc.locate(['depends_on', 'jobs', i], 'value'), formatPath(depsDraft.label, ['depends_on', 'jobs', i]), '');
        return at;
      })
    : [];
  return { dependsOn, array, jobRefsAt };
}
