/**
 * `image_id: docker:IMAGE` at submit (docs/spec.md "image_id"): taken on the local executor of a
 * server with a container runtime, refused everywhere else with the reason; the monitor reads the
 * image back from the stored task (lib/monitor/taskspec.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkJobSpec, dockerImageOf, formatSpecIssue } from '../../lib/jobs/spec';
import { readTaskSpec } from '../../lib/monitor/taskspec';

const check = (text: string, containers: boolean, defaultExecutor: 'local' | 'slurm' = 'local') => checkJobSpec(text, { defaultExecutor, containers });
const issues = (text: string, containers: boolean, defaultExecutor: 'local' | 'slurm' = 'local') => check(text, containers, defaultExecutor).issues.map(formatSpecIssue);

describe('image_id docker:IMAGE', () => {
  const yaml = 'resources:\n  image_id: docker:localhost/trainer:3\nrun: python train.py\n';

  it('is taken on the local executor of a server with a runtime, without a "not used" warning, and reaches the monitor', () => {
    const r = check(yaml, true);
    expect(r.issues).toEqual([]);
    expect(r.warnings.map(formatSpecIssue).join('\n')).not.toContain('image_id');
    expect(readTaskSpec(r.spec!.tasks[0], 1).image).toBe('localhost/trainer:3');
  });

  it('is refused with the runtime off, on Slurm, per region and without a name', () => {
    expect(issues(yaml, false)).toEqual([expect.stringContaining('needs a container runtime, and none is configured for jobdeck (JOBDECK_CONTAINER_RUNTIME is off)')]);
    expect(issues(yaml, true, 'slurm')).toEqual([expect.stringContaining('the Slurm executor runs no containers (no container runtime on its nodes is configured for jobdeck); use infra: local')]);
    expect(issues(`resources:\n  infra: slurm\n  image_id: docker:x\nrun: x\n`, true)).toEqual([expect.stringContaining('the Slurm executor runs no containers')]);
    expect(issues('resources:\n  image_id:\n    us-east-1: docker:x\nrun: x\n', true)).toEqual([expect.stringContaining('not per region, not per alternative')]);
    expect(issues('resources:\n  image_id: "docker:"\nrun: x\n', true)).toEqual([expect.stringContaining('names no image')]);
  });

  it('a cloud image is still only a warning, and no image at all runs on the host', () => {
    const r = check('resources:\n  image_id: ami-0123\nrun: x\n', false);
    expect(r.issues).toEqual([]);
    expect(r.warnings.map(formatSpecIssue)).toEqual([expect.stringContaining("image_id: not used by jobdeck")]);
    expect(readTaskSpec(r.spec!.tasks[0], 1).image).toBeUndefined();
    expect(dockerImageOf(' Docker: ubuntu:22.04 ')).toBe('ubuntu:22.04');
    expect(dockerImageOf({ 'us-east-1': 'docker:x' })).toBeNull();
  });
});
