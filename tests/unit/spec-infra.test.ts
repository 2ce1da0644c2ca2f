import { describe, expect, it } from 'vitest';
import { SpecError, jobExecutor, parseJobSpec, parseJobSpecObject, specHash } from '../../lib/jobs/spec';

/**
 * Executor selection in the job spec: SkyPilot's `resources.infra` (`local` | `slurm`) becomes
 * PipelineSpec.executor; without it the server's JOBDECK_EXECUTOR default applies (jobExecutor).
 */

function issuesOf(text: string): string[] {
  try {
    parseJobSpec(text);
  } catch (err) {
    if (err instanceof SpecError) return err.issues.map((i) => `${i.line ?? '-'} ${i.path}: ${i.message}`);
    throw err;
  }
  throw new Error('expected a SpecError');
}

describe('resources.infra', () => {
  it('infra: slurm / local selects the executor and is still recorded as written', () => {
    const s = parseJobSpec('run: x\nresources:\n  infra: slurm\n');
    expect(s.executor).toBe('slurm');
    expect(s.tasks[0].resources.other).toEqual({ infra: 'slurm' });
    expect(parseJobSpec('run: x\nresources:\n  infra: local\n').executor).toBe('local');
    // Case and surrounding blanks do not matter (normalized); `other` keeps the text.
    const t = parseJobSpec('run: x\nresources:\n  infra: " Slurm "\n');
    expect(t.executor).toBe('slurm');
    expect(t.tasks[0].resources.other.infra).toBe(' Slurm ');
  });

  it('no infra → no executor field (the server default decides); specHash of such specs is unchanged', () => {
    const s = parseJobSpec('run: x\n');
    expect('executor' in s).toBe(false);
    expect(s).toEqual({ name: 'x', tasks: [expect.objectContaining({ run: 'x' })] });
    // The hash does not depend on the new field when it is absent.
    expect(specHash(s)).toBe(specHash({ name: s.name, tasks: s.tasks }));
    expect(specHash(parseJobSpec('run: x\nresources:\n  infra: slurm\n'))).not.toBe(specHash(parseJobSpec('run: x\nresources:\n  infra: local\n')));
  });

  it('refuses clouds, k8s and slurm/<cluster>/<partition> with a reason and the line', () => {
    expect(issuesOf('run: x\nresources:\n  infra: aws\n')).toEqual([
      '3 task[0].resources.infra: infra "aws" is not available: jobdeck runs tasks on this machine (infra: local) or on Slurm (infra: slurm)',
    ]);
    expect(issuesOf('run: x\nresources:\n  infra: k8s/my-context\n')[0]).toMatch(/^3 task\[0\]\.resources\.infra: infra "k8s\/my-context" is not available/);
    expect(issuesOf('run: x\nresources:\n  infra: slurm/mycluster/gpu\n')).toEqual([
      '3 task[0].resources.infra: infra "slurm/mycluster/gpu": jobdeck submits to the one Slurm cluster its server is set up for; write infra: slurm (the server picks the partition: JOBDECK_SLURM_PARTITION)',
    ]);
    expect(issuesOf('run: x\nresources:\n  infra: 3\n')).toEqual(['3 task[0].resources.infra: expected where to run: "local" or "slurm", got 3']);
  });

  it('a pipeline runs on one executor: tasks without infra follow, a conflicting one is an error', () => {
    const p = parseJobSpec('name: p\n---\nrun: a\n---\nrun: b\nresources:\n  infra: slurm\n---\nrun: c\n');
    expect(p.executor).toBe('slurm');
    expect(p.tasks.map((t) => t.run)).toEqual(['a', 'b', 'c']);
    expect(issuesOf('run: a\nresources:\n  infra: slurm\n---\nrun: b\nresources:\n  infra: local\n')).toEqual([
      `7 task[1].resources.infra: infra "local" differs from task[0]'s "slurm": the tasks of a pipeline run on one executor`,
    ]);
  });

  it('the JSON form reads the same key', () => {
    expect(parseJobSpecObject({ run: 'x', resources: { infra: 'slurm' } }).executor).toBe('slurm');
    expect(() => parseJobSpecObject({ run: 'x', resources: { infra: 'gcp' } })).toThrow(/task\[0\]\.resources\.infra: infra "gcp" is not available/);
  });
});

describe('jobExecutor (Job.executor at submission)', () => {
  const spec = (infra?: string) => parseJobSpec(`run: x\n${infra ? `resources:\n  infra: ${infra}\n` : ''}`);

  it('the spec wins over the server default', () => {
    expect(jobExecutor(spec('slurm'), { JOBDECK_EXECUTOR: 'local' })).toBe('slurm');
    expect(jobExecutor(spec('local'), { JOBDECK_EXECUTOR: 'slurm' })).toBe('local');
  });

  it('without infra: JOBDECK_EXECUTOR (case-insensitive), default local', () => {
    expect(jobExecutor(spec(), {})).toBe('local');
    expect(jobExecutor(spec(), { JOBDECK_EXECUTOR: '' })).toBe('local');
    expect(jobExecutor(spec(), { JOBDECK_EXECUTOR: 'SLURM' })).toBe('slurm');
    expect(jobExecutor(spec(), { JOBDECK_EXECUTOR: 'local' })).toBe('local');
  });

  it('an unknown JOBDECK_EXECUTOR is an error that names the variable', () => {
    expect(() => jobExecutor(spec(), { JOBDECK_EXECUTOR: 'k8s' })).toThrow('JOBDECK_EXECUTOR must be one of local, slurm, got "k8s"');
  });
});
