/**
 * `resources.any_of` / `ordered` (docs/spec.md "any_of and ordered"): each alternative merged over
 * the task's other resources, the first the executor can satisfy is used and recorded on the
 * task's resources (`alternative`); none → refused listing each reason; both keys → refused.
 */
import { describe, expect, it } from 'vitest';
import { parseLocalGpus } from '../../lib/jobs/gpus';
import { checkJobSpec, formatSpecIssue } from '../../lib/jobs/spec';

const check = (text: string, localGpus = 0, defaultExecutor: 'local' | 'slurm' = 'local') => checkJobSpec(text, { defaultExecutor, localGpus: parseLocalGpus(String(localGpus))! });

describe('resource alternatives', () => {
  it('any_of: the first alternative that fits, merged over the other resources, recorded', () => {
    const r = check('run: x\nresources:\n  memory: 4\n  any_of:\n    - accelerators: A100:1\n      cpus: 8\n    - cpus: 2\n');
    expect(r.issues).toEqual([]);
    const res = r.spec!.tasks[0].resources;
    expect(res).toMatchObject({ cpus: 2, memoryGb: 4, alternative: { key: 'any_of', index: 1, of: 2 } });
    expect(res.other.accelerators).toBeUndefined();
    // With a GPU on this machine the first one fits.
    expect(check('run: x\nresources:\n  any_of:\n    - accelerators: A100:1\n      cpus: 8\n    - cpus: 2\n', 1).spec!.tasks[0].resources).toMatchObject({ cpus: 8, alternative: { index: 0 }, other: { accelerators: 'A100:1' } });
  });

  it('ordered: in order; an alternative may name the executor, and the job runs there', () => {
    const r = check('run: x\nnum_nodes: 2\nresources:\n  ordered:\n    - infra: local\n    - infra: slurm\n      cpus: 4\n');
    expect(r.issues).toEqual([]);
    expect(r.spec!.executor).toBe('slurm');
    expect(r.spec!.tasks[0].resources).toMatchObject({ cpus: 4, alternative: { key: 'ordered', index: 1, of: 2 } });
    // On a Slurm server the first one (no infra named) fits.
    expect(check('run: x\nresources:\n  ordered:\n    - accelerators: H100:8\n    - cpus: 1\n', 0, 'slurm').spec!.tasks[0].resources.alternative).toEqual({ key: 'ordered', index: 0, of: 2 });
  });

  it('none fits, both keys, a bad alternative: refused at the key', () => {
    expect(check('run: x\nresources:\n  any_of:\n    - accelerators: A100:1\n    - accelerators: A100:1.5\n').issues.map(formatSpecIssue)).toEqual([
      'job.yaml:3 task[0].resources.any_of: none of the 2 alternatives can run here: [0] asks for A100:1; the local executor has 0 GPUs (nvidia-smi, or JOBDECK_LOCAL_GPUS); [1] accelerators: expected a GPU count — a whole number from 1 to 64, or a share of one GPU between 0 and 1 (e.g. 0.5) — got "1.5": write a type and a count, e.g. A100:2, T4:0.5 (a share of one GPU), or alternatives {A100: 1, V100: 1}',
    ]);
    expect(check('run: x\nresources:\n  any_of:\n    - cpus: 1\n  ordered:\n    - cpus: 1\n').issues.map(formatSpecIssue)).toEqual(['job.yaml:5 task[0].resources.ordered: give any_of or ordered, not both']);
    expect(check('run: x\nresources:\n  any_of:\n    - gpus: 1\n').issues.map(formatSpecIssue)[0]).toContain('task[0].resources.any_of[0].gpus: unknown key "gpus"');
    expect(check('run: x\nresources:\n  any_of: []\n').issues.map(formatSpecIssue)[0]).toContain('expected at least one alternative in any_of');
    expect(check('run: x\nresources:\n  any_of:\n    - image_id: docker:ubuntu\n').issues.map(formatSpecIssue)[0]).toContain('needs a container runtime');
  });

  it('a task without alternatives records none', () => {
    expect('alternative' in check('run: x\nresources:\n  cpus: 2\n').spec!.tasks[0].resources).toBe(false);
  });
});
