/**
 * YAML syntax problems: one issue per problem, at the line where the mistake is, under a clean
 * key path (lib/jobs/spec/syntax.ts; the words in lib/jobs/spec/messages.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkJobSpec, formatSpecIssue } from '../../lib/jobs/spec';

/** `file:line path: message` of each issue, and its column. */
const issuesOf = (text: string) => checkJobSpec(text, {}).issues.map((i) => `${formatSpecIssue(i)} @${i.column}`);

describe('YAML syntax problems', () => {
  it('an unquoted ": " in a value, with an unclosed [ on the line under it: one problem, line 1, path task[0].run', () => {
    // The parser reports four: the nested mapping twice, an implicit key, the [ at the end of
    // the text — with paths made of values (task[0].run["echo a"]["b foo"]).
    expect(issuesOf('run: echo a: b\n  foo: [1\n')).toEqual([
      `job.yaml:1 task[0].run: YAML syntax error: a one-line value containing ": " must be quoted ('…') or written as a block (|): YAML reads the ": " as the start of a nested key @6`,
    ]);
  });

  it('a mistake under resources on line 4 is reported at line 4 under task[0].resources, not at the end of the text', () => {
    expect(issuesOf('name: x\nrun: echo hi\nresources:\n  cpus: [2\n')).toEqual(['job.yaml:4 task[0].resources.cpus: YAML syntax error: this [ list is never closed with ] @9']);
    expect(issuesOf('name: x\nrun: echo hi\nresources:\n  cpus: "2\n')).toEqual(['job.yaml:4 task[0].resources.cpus: YAML syntax error: this " string is never closed with " @9']);
    expect(issuesOf('name: x\nrun: echo hi\nresources:\n  cpus: 2\n memory: 3\n')).toEqual([
      'job.yaml:5 task[0].resources: YAML syntax error: the keys of one map must start at the same column: this line is indented differently from the keys before it @1',
    ]);
    // An empty key (":" alone) is shown at its own line, not at its map's.
    expect(issuesOf('name: x\nrun: >\n  echo hi\nresources:\n  cpus: 2\n  :\n')).toEqual([
      expect.stringMatching(/^job\.yaml:6 task\[0\]\.resources\[""\]: unknown key an empty string/),
    ]);
  });

  it('two separate problems in one document are two issues, each at its own line', () => {
    expect(issuesOf('run: echo hi\n  x: 1\nresources:\n  cpus: [2\n')).toEqual([
      'job.yaml:1 task[0].run: YAML syntax error: the next line is indented under this key, but this key already has its value on this line: line the next key up with this one @6',
      'job.yaml:4 task[0].resources.cpus: YAML syntax error: this [ list is never closed with ] @9',
    ]);
  });

  it('words the common mistakes plainly', () => {
    expect(issuesOf('run: echo hi\nenvs:\n  A: 1\n  B 2\n  C: 3\n')).toEqual(['job.yaml:4 task[0].envs: YAML syntax error: expected "key: value" here: a key needs ":" and a space after it @3']);
    expect(issuesOf('run: echo hi\nresources:\n\tcpus: 2\n')).toEqual(['job.yaml:3 task[0].resources: YAML syntax error: this line is indented with a tab: YAML indentation must be spaces @1']);
    expect(issuesOf('run: echo hi\nenvs: [a, [b]\nresources:\n  cpus: 2\n')).toEqual(['job.yaml:2 task[0].envs: YAML syntax error: this [ list is never closed with ] @7']);
    expect(issuesOf('run: echo hi\nresources: {cpus: 2\n')).toEqual(['job.yaml:2 task[0].resources: YAML syntax error: this { map is never closed with } @12']);
    expect(issuesOf("run: 'it''s\n")).toEqual(["job.yaml:1 task[0].run: YAML syntax error: this ' string is never closed with ' @6"]);
  });

  it('labels the document of a pipeline it is in', () => {
    expect(issuesOf('name: p\n---\nrun: ok\n---\nrun: echo a: b\n')).toEqual([
      `job.yaml:5 task[1].run: YAML syntax error: a one-line value containing ": " must be quoted ('…') or written as a block (|): YAML reads the ": " as the start of a nested key @6`,
    ]);
  });
});
