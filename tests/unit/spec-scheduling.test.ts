/**
 * The job-level scheduling keys of the spec (docs/spec.md "priority", "queue"): absent when not
 * given (so a spec's specHash is what it was before the keys existed), one value per pipeline,
 * bounded, and — with the server's queue list — a queue must be one of them.
 */
import { describe, expect, it } from 'vitest';
import { SpecError, checkJobSpec, parseJobSpec } from '../../lib/jobs/spec';

/** Issues of a YAML text, as "line path: message" strings (file left out). */
function issuesOf(text: string, opts?: Parameters<typeof parseJobSpec>[1]): string[] {
  try {
    parseJobSpec(text, opts);
  } catch (err) {
    if (err instanceof SpecError) return err.issues.map((i) => `${i.line ?? '-'} ${i.path}: ${i.message}`);
    throw err;
  }
  throw new Error('expected a SpecError, nothing was thrown');
}

describe('priority and queue', () => {
  it('are job-level keys: absent when not given, one per pipeline, the queue one of the server\'s', () => {
    expect(parseJobSpec('run: x\n')).not.toHaveProperty('priority');
    expect(parseJobSpec('run: x\n')).not.toHaveProperty('queue');
    expect(parseJobSpec('run: x\npriority: 0\nqueue: gpu-2\n')).toMatchObject({ priority: 0, queue: 'gpu-2' });
    expect(parseJobSpec('name: p\n---\nrun: a\n---\npriority: 900\nqueue: gpu\nrun: b\n')).toMatchObject({ priority: 900, queue: 'gpu' });
    expect(parseJobSpec('run: x\npriority: 7\n').tasks[0]).not.toHaveProperty('priority');
    expect(issuesOf('run: a\npriority: 1\n---\nrun: b\npriority: 2\n')).toEqual(['5 task[1].priority: priority 2 differs from task[0]\'s 1: the tasks of a pipeline have one priority']);
    expect(issuesOf('run: a\nqueue: x\n---\nrun: b\nqueue: y\n')).toEqual(['5 task[1].queue: queue "y" differs from task[0]\'s "x": the tasks of a pipeline are in one queue']);
    expect(issuesOf('run: a\npriority: high\nqueue: GPU\n')).toEqual([
      '2 task[0].priority: expected a priority (an integer from 0 to 1000), got "high"',
      '3 task[0].queue: expected a queue name (1–63 characters: a–z, 0–9, - and _, starting with a letter or digit), got "GPU"',
    ]);
    expect(issuesOf('run: a\nqueue: gpux\n', { queues: ['gpu', 'batch'] })).toEqual(['2 task[0].queue: queue "gpux" is not defined; the queues are: default, batch, gpu']);
    expect(checkJobSpec('run: a\nqueue: default\n', { queues: [] }).issues).toEqual([]);
  });
});
