/**
 * The `retention:` spec key (lib/jobs/spec/retention.ts, docs/spec.md "retention"): days or
 * forever for logs and/or the job, one value per pipeline, each problem at its file:line.
 */
import { describe, expect, it } from 'vitest';
import { checkJobSpec, formatSpecIssue, parseJobSpec } from '../../lib/jobs/spec';

const problems = (yaml: string) => checkJobSpec(yaml).issues.map(formatSpecIssue);

describe('retention', () => {
  it('normalizes days and forever, and leaves the spec without it as before', () => {
    expect(parseJobSpec('run: echo\nretention:\n  logs: forever\n  job: 30\n').retention).toEqual({ logs: 'forever', job: 30 });
    expect(parseJobSpec('run: echo\nretention: {logs: 7}\n').retention).toEqual({ logs: 7 });
    expect('retention' in parseJobSpec('run: echo\n')).toBe(false);
  });

  it('refuses a bad period, an unknown key, an empty map and two values in one pipeline, at file:line', () => {
    expect(problems('run: echo\nretention:\n  logs: 0\n')).toEqual([expect.stringMatching(/^job\.yaml:3 .*retention\.logs.*expected a number of days \(1–36500\) or forever/)]);
    expect(problems('run: echo\nretention:\n  logs: always\n')[0]).toMatch(/^job\.yaml:3 .*expected a number of days/);
    expect(problems('run: echo\nretention:\n  log: 3\n')[0]).toMatch(/^job\.yaml:3 .*log.*logs/);
    expect(problems('run: echo\nretention: {}\n')[0]).toMatch(/^job\.yaml:2 .*expected logs and\/or job/);
    expect(problems('run: echo\nretention: forever\n')[0]).toMatch(/^job\.yaml:2 .*expected a map with logs and\/or job/);
    expect(problems('name: p\n---\nrun: a\nretention: {logs: 3}\n---\nrun: b\nretention: {logs: 4}\n')[0]).toMatch(/^job\.yaml:7 .*retention/);
  });
});
