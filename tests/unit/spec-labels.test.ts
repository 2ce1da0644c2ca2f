/**
 * `resources.labels` (docs/spec.md "resources"): honoured — kept on each task, merged for the job
 * (a key's value from the first task that has it), one map per task for the label filter — with
 * SkyPilot's rule (string values) and bounded keys, every problem at its file:line. And the advice
 * for an empty env given as `--secret` (or an empty secret given as `--env`), which SkyPilot refuses too.
 */
import { describe, expect, it } from 'vitest';
import { checkJobSpec, jobLabels, mergedLabels, parseJobSpec, SpecError, taskLabels } from '../../lib/jobs/spec';

function issuesOf(yaml: string, overrides?: { envs?: Record<string, string>; secrets?: Record<string, string> }): string[] {
  try {
    parseJobSpec(yaml, { filename: 'job.yaml', overrides });
  } catch (err) {
    if (err instanceof SpecError) return err.issues.map((i) => `${i.line} ${i.path}: ${i.message}`);
    throw err;
  }
  return [];
}

describe('resources.labels', () => {
  it('is kept on each task, without a warning; the job has one map per task that has labels, and shows them merged', () => {
    const text = 'name: p\n---\nresources:\n  labels:\n    team: vision\n    tier: gold\nrun: a\n---\nrun: b\n---\nresources:\n  labels:\n    team: nlp\n    run-id: r7\nrun: c\n';
    const r = checkJobSpec(text, { defaultExecutor: 'local' });
    expect(r.issues).toEqual([]);
    expect(r.warnings).toEqual([]);
    const tasks = r.spec!.tasks;
    expect(tasks.map(taskLabels)).toEqual([{ team: 'vision', tier: 'gold' }, {}, { team: 'nlp', 'run-id': 'r7' }]);
    expect(jobLabels(tasks)).toEqual([{ team: 'vision', tier: 'gold' }, { team: 'nlp', 'run-id': 'r7' }]);
    expect(mergedLabels(jobLabels(tasks))).toEqual({ team: 'vision', tier: 'gold', 'run-id': 'r7' });
    expect(mergedLabels(null)).toEqual({});
    // A value a job stored before labels were checked (a number) is left out of what is shown.
    expect(mergedLabels([{ a: 1, b: 'x' }])).toEqual({ b: 'x' });
  });

  it('refuses a value that is not a string (as SkyPilot does), a bad key, and too many labels, with file:line', () => {
    expect(issuesOf('resources:\n  labels:\n    replicas: 3\n    ok: "3"\nrun: x\n')).toEqual(['3 task[0].resources.labels.replicas: expected a string value (quote it: replicas: "3"), got number 3']);
    expect(issuesOf('resources:\n  labels:\n    "a=b": x\n    -bad: y\nrun: x\n')).toEqual([
      '3 task[0].resources.labels["a=b"]: label "a=b": expected a label key: 1–128 letters, digits, ., _, - and /, starting and ending with a letter or digit',
      '4 task[0].resources.labels["-bad"]: label "-bad": expected a label key: 1–128 letters, digits, ., _, - and /, starting and ending with a letter or digit',
    ]);
    expect(issuesOf('resources:\n  labels: [a, b]\nrun: x\n')).toEqual(['2 task[0].resources.labels: expected a map of label key: value, got a list of 2']);
    const many = Array.from({ length: 65 }, (_, i) => `    k${i}: v`).join('\n');
    expect(issuesOf(`resources:\n  labels:\n${many}\nrun: x\n`)[0]).toMatch(/^3 task\[0\]\.resources\.labels: expected at most 64 labels, got 65$/);
    expect(issuesOf(`resources:\n  labels:\n    k: "${'v'.repeat(257)}"\nrun: x\n`)).toEqual(['3 task[0].resources.labels.k: expected a label value of at most 256 characters, got 257']);
  });
});

describe('an empty env or secret given as the other kind', () => {
  it('says which section only that flag fills, and how to fix it either way', () => {
    expect(issuesOf('envs:\n  WANDB_API_KEY:\nrun: x\n', { secrets: { WANDB_API_KEY: 's3cret' } })).toEqual([
      '2 task[0].envs.WANDB_API_KEY: has no value: it was given as a secret (--secret WANDB_API_KEY), but the file declares it under envs, where only --env gives a value — to pass it as a secret, move it under secrets: (secrets: {WANDB_API_KEY: }); else give it with --env WANDB_API_KEY',
    ]);
    expect(issuesOf('secrets:\n  HF_TOKEN:\nrun: x\n', { envs: { HF_TOKEN: 'x' } })).toEqual([
      '2 task[0].secrets.HF_TOKEN: has no value: it was given as an env (--env HF_TOKEN), but the file declares it under secrets, where only --secret gives a value — give it with --secret HF_TOKEN (or --secret HF_TOKEN=…), or move it under envs: if it is not secret',
    ]);
    // Declared where it is given: accepted (the secret stays masked).
    expect(issuesOf('secrets:\n  WANDB_API_KEY:\nrun: x\n', { secrets: { WANDB_API_KEY: 's3cret' } })).toEqual([]);
  });
});
