import { describe, expect, it } from 'vitest';
import { loadTemplates } from '../../app/jobs/new/templates';
import { checkJobSpec } from '../../lib/jobs/spec';
import { summarise, toTemplate } from '../../lib/ui/templates';
import { ROOT } from '../helpers/server';

describe('New job templates', () => {
  it('summary: the first comment line, continued while its sentence goes on, cut at the sentence end', () => {
    expect(summarise(['One line.', 'More detail.'])).toBe('One line.');
    expect(summarise(['', 'Starts after a blank line.'])).toBe('Starts after a blank line.');
    expect(summarise(['Output that must show as text:', 'tags, colours, and no', 'newline at the end. Expected: fine', 'x'])).toBe(
      'Output that must show as text: tags, colours, and no newline at the end.',
    );
    expect(summarise(['A job (with a note)', 'Expected: nothing'])).toBe('A job (with a note)');
    expect(summarise([])).toBe('');
  });

  it('a summary longer than 200 characters is cut at a word with an ellipsis', () => {
    const long = summarise([`${'word '.repeat(60)}end`]);
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long).toMatch(/word…$/);
  });

  it('toTemplate keeps the whole comment as the description and reads the name', () => {
    const t = toTemplate('x', '# First line,\n# second line. Then more.\nname: "demo"\nrun: echo hi\n');
    expect(t).toMatchObject({ id: 'x', name: 'demo', summary: 'First line, second line.', description: 'First line, second line. Then more.' });
  });

  it('every template in the project has a useful summary (not a 30-character stub)', () => {
    const all = loadTemplates(ROOT);
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const t of all) {
      expect(t.summary.length, t.id).toBeGreaterThan(30);
      expect(t.summary.length, t.id).toBeLessThanOrEqual(200);
      expect(t.summary, t.id).toMatch(/[.:)!?…]$/);
    }
  });

  it('the templates are what a user starts from — one command, a pipeline with retries, a job with setup — and valid as they are', () => {
    const all = loadTemplates(ROOT);
    expect(all.map((t) => t.id)).toEqual(['single-command', 'pipeline-with-retries', 'training-with-setup']);
    const specs = Object.fromEntries(all.map((t) => [t.id, checkJobSpec(t.yaml, { filename: `${t.id}.yaml` })]));
    for (const [id, r] of Object.entries(specs)) expect(r.issues, id).toEqual([]);
    expect(specs['single-command'].spec!.tasks).toHaveLength(1);
    const pipeline = specs['pipeline-with-retries'].spec!;
    expect(pipeline.tasks.length).toBeGreaterThan(1);
    expect(pipeline.tasks.some((t) => t.jobRecovery.maxRestartsOnErrors > 0)).toBe(true);
    const train = specs['training-with-setup'].spec!.tasks[0];
    expect(train.setup).toBeTruthy();
    expect(Object.keys(train.envs)).toContain('EPOCHS');
    // Written for a user, not as a test fixture.
    for (const t of all) expect(t.yaml, t.id).not.toMatch(/seed|Expected:|should never run/i);
  });
});
