/**
 * The spec's `notify` key (docs/spec.md "notify"): the webhook subscriptions a job's events also
 * go to — absent when not given, one list per pipeline, each name bounded, every problem at its
 * file:line like every other key.
 */
import { describe, expect, it } from 'vitest';
import { parseJobSpec, SpecError } from '../../lib/jobs/spec';

function issuesOf(yaml: string): string[] {
  try {
    parseJobSpec(yaml, { filename: 'job.yaml' });
  } catch (err) {
    if (err instanceof SpecError) return err.issues.map((i) => `${i.line} ${i.path}: ${i.message}`);
    throw err;
  }
  return [];
}

describe('notify', () => {
  it('lists webhook names: absent when not given, one list per pipeline, de-duplicated', () => {
    expect(parseJobSpec('run: x\n')).not.toHaveProperty('notify');
    expect(parseJobSpec('run: x\nnotify: [ops, pager, ops]\n')).toMatchObject({ notify: ['ops', 'pager'] });
    expect(parseJobSpec('name: p\n---\nrun: a\n---\nnotify: [ops]\nrun: b\n')).toMatchObject({ notify: ['ops'] });
  });

  it('refuses what is not a list of names, with file:line', () => {
    expect(issuesOf('run: a\nnotify: ops\n')).toEqual(['2 task[0].notify: expected a list of webhook names, e.g. [ops-alerts], got "ops"']);
    expect(issuesOf('run: a\nnotify: [Ops]\n')).toEqual(['2 task[0].notify[0]: expected a webhook name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit), got "Ops"']);
    expect(issuesOf('run: a\nnotify: []\n')).toEqual(['2 task[0].notify: expected at least one webhook name, got an empty list']);
    expect(issuesOf(`run: a\nnotify: [${Array.from({ length: 11 }, (_, i) => `w${i}`).join(', ')}]\n`)[0]).toMatch(/^2 task\[0\]\.notify: expected at most 10 webhook names/);
    expect(issuesOf('run: a\nnotify: [a]\n---\nrun: b\nnotify: [b]\n')).toEqual(['5 task[1].notify: notify "b" differs from task[0]\'s "a": the tasks of a pipeline notify the same webhooks']);
    expect(issuesOf('run: a\nnotfy: [a]\n')[0]).toMatch(/^2 task\[0\]\.notfy: unknown key "notfy".*notify/);
  });
});
