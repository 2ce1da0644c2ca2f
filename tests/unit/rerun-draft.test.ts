/**
 * "Re-run with changes": the draft the New job editor starts from holds the name and envs given at
 * launch, written where the spec reader takes them from (lib/jobs/spec), so that the draft as is
 * validates to the spec that ran.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseJobSpec, unstorableAt } from '../../lib/jobs/spec';
import { draftWithLaunch } from '../../lib/ui/rerun-draft';

const SINGLE = `# a training-like job
name: train-small
envs:
  EPOCHS: "30"
run: echo "epochs $EPOCHS"
`;
const PIPELINE = `name: prepare
run: echo prepare
---
run: echo train
`;

describe('draftWithLaunch', () => {
  it('writes the launch name and envs into a single task, keeping comments, and validates to what ran', () => {
    const launch = { name: 'renamed-train', envs: { EPOCHS: '2', EXTRA: 'x' } };
    const draft = draftWithLaunch(SINGLE, launch);
    expect(draft).toContain('# a training-like job');
    const ran = parseJobSpec(SINGLE, { overrides: launch });
    expect(parseJobSpec(draft)).toEqual(ran);
  });

  it('names a pipeline with a header document and sets the envs of every task', () => {
    const launch = { name: 'renamed', envs: { A: '1' } };
    const draft = draftWithLaunch(PIPELINE, launch);
    expect(draft.startsWith('name: "renamed"\n---\n')).toBe(true);
    const spec = parseJobSpec(draft);
    expect(spec).toEqual(parseJobSpec(PIPELINE, { overrides: launch }));
    expect(spec.tasks.map((t) => t.envs)).toEqual([{ A: '1' }, { A: '1' }]);
    // An existing header takes the name.
    expect(parseJobSpec(draftWithLaunch(`name: old\n---\n${PIPELINE}`, { name: 'new', envs: {} })).name).toBe('new');
  });

  it('keeps a long line of characters outside the BMP whole (no line folding inside a surrogate pair)', () => {
    const run = `echo \b${'😀'.repeat(60)}`;
    const out = draftWithLaunch(`run: ${JSON.stringify(run)}\n`, { name: 'x', envs: { A: '1' } });
    expect(unstorableAt(out)).toBeNull();
    expect((parseYaml(out) as { run: string }).run).toBe(run);
  });

  it('leaves the text alone with nothing to write, or when it does not parse', () => {
    expect(draftWithLaunch(SINGLE, { name: null, envs: {} })).toBe(SINGLE);
    expect(draftWithLaunch(SINGLE, undefined)).toBe(SINGLE);
    expect(draftWithLaunch('run: [1\n', { name: 'x', envs: {} })).toBe('run: [1\n');
  });
});
