import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SPEC_EXAMPLE_NAMES,
  SPEC_LIMITS,
  SpecError,
  canonicalJson,
  checkJobSpec,
  commandSpec,
  jobCpus,
  jobNodes,
  parseJobSpec,
  parseJobSpecObject,
  specHash,
  type PipelineSpec,
  type SpecIssue,
  type TaskSpec,
} from '../../lib/jobs/spec';
import { nameProblem } from '../../lib/jobs/spec/schema';

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLES = path.join(ROOT, 'examples');
/** Job files a user wrote, kept as test inputs (each with the outcome it should have). */
const REFERENCE_EXAMPLES = path.join(__dirname, '..', 'fixtures', 'reference-examples');

/** The SpecError a call throws (fails the test when it does not throw one). */
function specError(fn: () => unknown): SpecError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SpecError) return err;
    throw err;
  }
  throw new Error('expected a SpecError, nothing was thrown');
}

/** Issues of a YAML text, as "line path: message" strings (file left out). */
function issuesOf(text: string, opts?: Parameters<typeof parseJobSpec>[1]): string[] {
  return specError(() => parseJobSpec(text, opts)).issues.map((i) => `${i.line ?? '-'} ${i.path}: ${i.message}`);
}

const DEFAULT_RESOURCES = { cpus: 1, cpusAtLeast: false, memoryGb: null, memoryAtLeast: false, other: {} };
const NO_RECOVERY = { maxRestartsOnErrors: 0, recoverOnExitCodes: [], strategy: null };
const task = (t: Partial<TaskSpec>): TaskSpec => ({
  name: null,
  setup: null,
  run: null,
  envs: {},
  workdir: null,
  resources: DEFAULT_RESOURCES,
  jobRecovery: NO_RECOVERY,
  ...t,
});

describe('the exact error format', () => {
  const text = [
    '# a two-line header comment',
    'name: train',
    '---',
    'name: step-1',
    'run: python train.py',
    'job_recovery:',
    '  max_restarts_on_errors: two',
  ].join('\n');

  it('says file:line path: expected …, got …', () => {
    const err = specError(() => parseJobSpec(text, { filename: 'pipeline.yaml' }));
    expect(err.message).toBe('pipeline.yaml:7 task[0].job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got "two"');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('SpecError');
    expect(err.issues).toEqual<SpecIssue[]>([
      {
        file: 'pipeline.yaml',
        line: 7,
        column: 27,
        endLine: 7,
        endColumn: 30,
        path: 'task[0].job_recovery.max_restarts_on_errors',
        message: 'expected an integer ≥ 0, got "two"',
      },
    ]);
  });

  it('defaults the file name to job.yaml and says task[0] for a one-document job', () => {
    const err = specError(() => parseJobSpec('run: echo\njob_recovery:\n  max_restarts_on_errors: -1\n'));
    expect(err.message).toBe('job.yaml:3 task[0].job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got -1');
  });

  it('reports every issue at once, one per line, in line order, across documents', () => {
    const err = specError(() =>
      parseJobSpec(
        [
          'name: pipe', // 1
          '---',
          'run: 42', // 3
          'resources:',
          '  cpus: lots', // 5
          '---',
          'nmae: typo', // 7
          'run: ok',
          'job_recovery:',
          '  recover_on_exit_codes: [0, 256]', // 10
          'num_nodes: 0', // 11
        ].join('\n'),
        { filename: 'p.yaml' },
      ),
    );
    expect(err.message.split('\n')).toEqual([
      'p.yaml:3 task[0].run: expected run (a string of shell commands), got 42',
      'p.yaml:5 task[0].resources.cpus: expected a CPU count > 0: a number (exactly, e.g. 2) or a string like "2+" (at least), got "lots"',
      'p.yaml:7 task[1].nmae: unknown key "nmae"; did you mean "name"?',
      'p.yaml:10 task[1].job_recovery.recover_on_exit_codes[1]: expected an exit code (an integer from 0 to 255), got 256',
      'p.yaml:11 task[1].num_nodes: expected a node count (an integer ≥ 1), got 0',
    ]);
    expect(err.issues.map((i) => i.line)).toEqual([3, 5, 7, 10, 11]);
  });

  it('never shows a raw schema-library dump', () => {
    const texts = [
      'run: [1, 2]',
      'name: {a: 1}\nrun: x',
      'envs: [A]\nrun: x',
      'resources: 2\nrun: x',
      'job_recovery: [1]\nrun: x',
      'job_recovery: {max_restarts_on_errors: 1.5}\nrun: x',
      'resources: {memory: [1]}\nrun: x',
      'workdir: 3\nrun: x',
      'num_nodes: "1"\nrun: x',
      '- a\n- b',
      'just a string',
    ];
    for (const t of texts) {
      for (const issue of specError(() => parseJobSpec(t)).issues) {
        expect(issue.message, t).toMatch(/^(expected|unknown key|multi-node)/);
        expect(issue.message, t).not.toMatch(/Invalid input|received|nonoptional/);
        expect(issue.line, t).not.toBeNull();
      }
    }
  });

  it('points an unknown key at the key, with a hint or the allowed keys', () => {
    expect(issuesOf('run: x\nresources:\n  cpu: 2\n')).toEqual(['3 task[0].resources.cpu: unknown key "cpu"; did you mean "cpus"?']);
    expect(issuesOf('run: x\nbanana: 1\n')).toEqual([
      '2 task[0].banana: unknown key "banana" (expected one of: name, envs, secrets, workdir, file_mounts, setup, run, resources, job_recovery, num_nodes, max_duration, priority, queue, notify, retention, depends_on, array)',
    ]);
    expect(issuesOf('run: x\njob_recovery:\n  max_restart_on_errors: 1\n')).toEqual([
      '3 task[0].job_recovery.max_restart_on_errors: unknown key "max_restart_on_errors"; did you mean "max_restarts_on_errors"?',
    ]);
    expect(issuesOf('run: x\nresources:\n  spot_recovery: FAILOVER\n')).toEqual([
      '3 task[0].resources.spot_recovery: unknown key "spot_recovery"; use job_recovery (SkyPilot\'s newer name)',
    ]);
  });

  it('carries the line of YAML syntax errors, with the key they are under', () => {
    expect(issuesOf('name: a\nsetup: echo "step: one"\nrun: b\n')).toEqual([
      `2 task[0].setup: YAML syntax error: a one-line value containing ": " must be quoted ('…') or written as a block (|): YAML reads the ": " as the start of a nested key`,
    ]);
    expect(issuesOf('run: x\nname: a\nname: b\n')).toEqual(['3 task[0].name: YAML key "name" is given twice (first at line 2): keys must be unique']);
    expect(issuesOf('run: x\nresources:\n  labels: {1: a, "1": b}\n')).toEqual(['3 task[0].resources.labels: YAML key "1" is given twice (first at line 3): keys must be unique']);
    expect(issuesOf('run: "abc\n')).toEqual(['1 task[0].run: YAML syntax error: this " string is never closed with "']);
    expect(issuesOf('name: p\n---\nrun: ok\n---\nrun: x\n\tenvs: {}\n')).toEqual(['6 task[1]: YAML syntax error: this line is indented with a tab: YAML indentation must be spaces']);
  });

  it('refuses unresolved aliases, unknown tags and non-JSON YAML types with a line', () => {
    expect(issuesOf('run: *nothing\n')).toEqual(['1 task[0].run: YAML alias *nothing refers to no anchor (&nothing must come before it in the same document)']);
    expect(issuesOf('run: x\nenvs:\n  A: !custom 1\n')).toEqual(['3 task[0].envs.A: YAML problem: Unresolved tag: !custom']);
    expect(issuesOf('run: x\nresources:\n  labels:\n    when: !!timestamp 2001-12-14\n')).toEqual([
      '4 task[0].resources.labels.when: expected plain data (strings, numbers, booleans, null, lists, maps), got a timestamp',
    ]);
    expect(issuesOf('run: x\nresources:\n  labels: !!binary aGVsbG8=\n')).toEqual([
      '3 task[0].resources.labels: expected plain data (strings, numbers, booleans, null, lists, maps), got binary data',
    ]);
  });

  it('is also available without throwing (checkJobSpec) for editors', () => {
    const bad = checkJobSpec('run: x\nnum_nodes: 2\n', { defaultExecutor: 'local' });
    expect(bad.spec).toBeNull();
    expect(bad.issues).toHaveLength(1);
    expect(bad.issues[0]).toMatchObject({ line: 2, column: 12, path: 'task[0].num_nodes' });
    const good = checkJobSpec('run: x\n');
    expect(good.issues).toEqual([]);
    expect(good.spec?.tasks[0].run).toBe('x');
  });
});

describe('documents and pipelines', () => {
  it('reads a single document as a one-task job', () => {
    expect(parseJobSpec('name: one\nrun: echo hi\n')).toEqual<PipelineSpec>({ name: 'one', tasks: [task({ name: 'one', run: 'echo hi' })] });
  });

  it('reads documents separated by --- as tasks run in order', () => {
    const spec = parseJobSpec('run: echo 1\n---\nrun: echo 2\n---\nname: third\nrun: echo 3\n');
    expect(spec.tasks.map((t) => [t.name, t.run])).toEqual([
      [null, 'echo 1'],
      [null, 'echo 2'],
      ['third', 'echo 3'],
    ]);
  });

  it('takes a first document holding only name as the pipeline name, not a task', () => {
    const spec = parseJobSpec('name: my-pipeline\n---\nname: a\nrun: echo a\n---\nrun: echo b\n');
    expect(spec.name).toBe('my-pipeline');
    expect(spec.tasks.map((t) => t.name)).toEqual(['a', null]);
    // …and numbers tasks from the first real task.
    expect(issuesOf('name: p\n---\nrun: ok\n---\nrun: 1\n')).toEqual(['5 task[1].run: expected run (a string of shell commands), got 1']);
    // A header name is checked like any name.
    expect(issuesOf('name: 5\n---\nrun: x\n')).toEqual(['1 pipeline.name: expected a name (a string), got 5']);
  });

  it('keeps a first document with name and more as a task', () => {
    const spec = parseJobSpec('name: first\nrun: echo 1\n---\nrun: echo 2\n');
    expect(spec.name).toBe('first');
    expect(spec.tasks).toHaveLength(2);
    expect(spec.tasks[0].name).toBe('first');
  });

  it('reads a lone name-only document as a one-task job with no run (as SkyPilot does)', () => {
    expect(parseJobSpec('name: nothing-to-do\n')).toEqual({ name: 'nothing-to-do', tasks: [task({ name: 'nothing-to-do' })] });
  });

  it('gives a task without run (or with a blank one) run: null', () => {
    expect(parseJobSpec('name: a\nsetup: echo s\n').tasks[0]).toMatchObject({ run: null, setup: 'echo s' });
    expect(parseJobSpec('name: a\nrun: "  \\n "\nsetup:\n').tasks[0]).toMatchObject({ run: null, setup: null });
  });

  it('refuses empty documents with their line, and an empty spec', () => {
    expect(issuesOf('name: p\n---\nrun: a\n---\n---\nrun: b\n---\n')).toEqual([
      '4 task[1]: empty document: expected a task (remove the extra --- or add the task)',
      '7 task[3]: empty document: expected a task (remove the extra --- or add the task)',
    ]);
    expect(issuesOf('')).toEqual(['1 : the spec is empty: expected a task (a map with at least `run`) or several separated by ---']);
    expect(issuesOf('# only a comment\n\n')).toHaveLength(1);
    expect(issuesOf('---\n')).toHaveLength(1);
    expect(issuesOf('run: a\n---\n~\n')).toEqual(['2 task[1]: empty document: expected a task (remove the extra --- or add the task)']);
  });

  it('accepts a leading --- and comments before it', () => {
    expect(parseJobSpec('# comment\n---\nrun: x\n').tasks).toHaveLength(1);
  });

  it('refuses a document that is not a map', () => {
    expect(issuesOf('- run: x\n')).toEqual([
      '1 task[0]: expected a map of task keys (name, envs, secrets, workdir, file_mounts, setup, run, resources, job_recovery, num_nodes, max_duration, priority, queue, notify, retention, depends_on, array), got a list of 1',
    ]);
    expect(issuesOf('echo hello\n')[0]).toMatch(/^1 task\[0\]: expected a map of task keys .*, got "echo hello"$/);
  });

  describe('job name', () => {
    it('is the header name, else the first task name', () => {
      expect(parseJobSpec('name: head\n---\nname: t\nrun: x\n').name).toBe('head');
      expect(parseJobSpec('setup: x\n---\nname: second\n').name).toBe('job');
      expect(parseJobSpec('name: first\nrun: x\n---\nname: second\nrun: y\n').name).toBe('first');
    });

    it('is derived from the first meaningful line of run, short', () => {
      expect(parseJobSpec('run: |\n  #!/bin/bash\n\n  # comment\n  python   train.py --lr 0.1\n  echo done\n').name).toBe('python train.py --lr 0.1');
      const long = parseJobSpec('run: python train.py --epochs 100 --learning-rate 0.001 --batch-size 512\n').name;
      expect(long).toBe('python train.py --epochs 100 --learning…');
      expect(long.length).toBeLessThanOrEqual(40);
      // Control characters never reach a name.
      expect(parseJobSpec('run: "printf \\"\\e[31mred\\""\n').name).toBe('printf " [31mred"');
      // The first task with a run.
      expect(parseJobSpec('setup: x\n---\nrun: make all\n').name).toBe('make all');
    });

    it('derives a name that passes the name rule: no invisible character, no half of a pair', () => {
      // 60 astral characters: a cut by UTF-16 units at 39 would leave a lone surrogate.
      const astral = parseJobSpecObject({ run: '\u{1F600}'.repeat(60) }).name;
      expect(nameProblem(astral)).toBeNull();
      expect([...astral]).toHaveLength(40);
      for (const hidden of ['\u3164', '\u00AD', '\u180E', '\u034F', '\u{E0041}', '\uFFA0']) {
        const name = parseJobSpecObject({ run: `echo a${hidden}b` }).name;
        expect(nameProblem(name), JSON.stringify(name)).toBeNull();
      }
    });

    it('is "job" when nothing else gives one', () => {
      expect(parseJobSpec('setup: echo\n').name).toBe('job');
      expect(parseJobSpec('run: "# only a comment"\n').name).toBe('job');
    });

    it('is replaced by overrides.name', () => {
      expect(parseJobSpec('name: head\n---\nrun: x\n', { overrides: { name: 'mine' } }).name).toBe('mine');
      expect(issuesOf('run: x\n', { overrides: { name: 'a\nb' } })).toEqual([
        '- overrides.name: expected a name without control or invisible characters (newlines, tabs, escapes, zero-width, bidi; found U+000A), got "a\\nb"',
      ]);
    });
  });
});

describe('task keys', () => {
  describe('envs', () => {
    it('keeps strings and turns numbers and booleans into strings as written', () => {
      const t = parseJobSpec('run: x\nenvs:\n  A: hello\n  V: 1.10\n  H: 0x1F\n  B: true\n  N: -3\n  E: ""\n').tasks[0];
      expect(t.envs).toEqual({ A: 'hello', V: '1.10', H: '0x1F', B: 'true', N: '-3', E: '' });
    });

    it('accepts an empty map or null', () => {
      expect(parseJobSpec('run: x\nenvs: {}\n').tasks[0].envs).toEqual({});
      expect(parseJobSpec('run: x\nenvs:\n').tasks[0].envs).toEqual({});
    });

    it('checks names, values and the reserved prefix', () => {
      expect(issuesOf('run: x\nenvs:\n  1A: x\n  MY-VAR: y\n  JOBDECK_ATTEMPT: 3\n  OK: [1]\n  M: {a: 1}\n')).toEqual([
        '3 task[0].envs["1A"]: invalid env var name "1A": expected letters, digits and _ (not starting with a digit)',
        '4 task[0].envs["MY-VAR"]: invalid env var name "MY-VAR": expected letters, digits and _ (not starting with a digit)',
        '5 task[0].envs.JOBDECK_ATTEMPT: env var name "JOBDECK_ATTEMPT" is reserved: names starting with JOBDECK_ are set by jobdeck',
        '6 task[0].envs.OK: expected a string, number or boolean value, got a list of 1',
        '7 task[0].envs.M: expected a string, number or boolean value, got a map',
      ]);
      expect(issuesOf('run: x\nenvs: [A, B]\n')).toEqual(['2 task[0].envs: expected a map of NAME: value, got a list of 2']);
    });

    it('requires a value left empty to come from overrides (SkyPilot required env vars)', () => {
      expect(issuesOf('run: x\nenvs:\n  HF_TOKEN:\n  B: 2\n')).toEqual(['3 task[0].envs.HF_TOKEN: has no value: required at launch — give it in the spec or at launch (--env HF_TOKEN, or --env HF_TOKEN=…)']);
      const spec = parseJobSpec('run: x\nenvs:\n  HF_TOKEN:\n  B: 2\n', { overrides: { envs: { HF_TOKEN: 'secret' } } });
      expect(spec.tasks[0].envs).toEqual({ B: '2', HF_TOKEN: 'secret' });
    });

    it('merges overrides into every task, the override winning', () => {
      const spec = parseJobSpec('name: p\n---\nrun: a\nenvs: {A: file, B: file}\n---\nrun: b\n', { overrides: { envs: { A: 'cli', C: 'cli' } } });
      expect(spec.tasks.map((t) => t.envs)).toEqual([
        { A: 'cli', B: 'file', C: 'cli' },
        { A: 'cli', C: 'cli' },
      ]);
    });

    it('checks override envs like file envs', () => {
      const err = specError(() => parseJobSpec('run: x\n', { overrides: { envs: { 'BAD-NAME': 'x', JOBDECK_JOB_ID: '1', OK: 5 as unknown as string } } }));
      expect(err.issues.map((i) => [i.line, i.path])).toEqual([
        [null, 'overrides.envs["BAD-NAME"]'],
        [null, 'overrides.envs.JOBDECK_JOB_ID'],
        [null, 'overrides.envs.OK'],
      ]);
      expect(err.message.split('\n')[2]).toBe('job.yaml overrides.envs.OK: expected a string value, got 5');
    });

    it('keeps a __proto__ env as a plain own key', () => {
      const t = parseJobSpec('run: x\nenvs:\n  __proto__: polluted\n').tasks[0];
      expect(Object.getOwnPropertyNames(t.envs)).toEqual(['__proto__']);
      expect(Object.getPrototypeOf(t.envs)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  it('records workdir, setup and run as written', () => {
    const t = parseJobSpec('workdir: ~/project\nsetup: |\n  pip install -r requirements.txt\nrun: |\n  python main.py\n').tasks[0];
    expect(t).toMatchObject({ workdir: '~/project', setup: 'pip install -r requirements.txt\n', run: 'python main.py\n' });
    expect(issuesOf('run: x\nworkdir: ""\n')).toEqual(['2 task[0].workdir: expected a non-empty directory path, got an empty string']);
  });

  describe('resources', () => {
    const res = (yaml: string) => parseJobSpec(`run: x\nresources:\n${yaml}`).tasks[0].resources;

    it('defaults to 1 CPU exactly and no memory', () => {
      expect(parseJobSpec('run: x\n').tasks[0].resources).toEqual(DEFAULT_RESOURCES);
      expect(res('  {}\n')).toEqual(DEFAULT_RESOURCES);
    });

    it('reads cpus: N exactly or "N+" at least', () => {
      expect(res('  cpus: 2\n')).toMatchObject({ cpus: 2, cpusAtLeast: false });
      expect(res('  cpus: 2+\n')).toMatchObject({ cpus: 2, cpusAtLeast: true });
      expect(res('  cpus: "4"\n')).toMatchObject({ cpus: 4, cpusAtLeast: false });
      expect(res('  cpus: 0.5\n')).toMatchObject({ cpus: 0.5, cpusAtLeast: false });
      expect(res('  cpus: "0.5+"\n')).toMatchObject({ cpus: 0.5, cpusAtLeast: true });
      for (const bad of ['0', '-1', '"abc"', '"2++"', '"+2"', 'true', '[2]', '"0+"', '"inf"']) {
        expect(issuesOf(`run: x\nresources:\n  cpus: ${bad}\n`)[0], bad).toMatch(/^3 task\[0\]\.resources\.cpus: expected a CPU count > 0: .*, got /);
      }
      expect(issuesOf('run: x\nresources:\n  cpus: .inf\n')).toEqual(['3 task[0].resources.cpus: expected a finite number, got Infinity']);
    });

    it('reads memory in GB, with "+" and units', () => {
      expect(res('  memory: 4\n')).toMatchObject({ memoryGb: 4, memoryAtLeast: false });
      expect(res('  memory: 4+\n')).toMatchObject({ memoryGb: 4, memoryAtLeast: true });
      expect(res('  memory: 8GB\n')).toMatchObject({ memoryGb: 8, memoryAtLeast: false });
      expect(res('  memory: 8GB+\n')).toMatchObject({ memoryGb: 8, memoryAtLeast: true });
      expect(res('  memory: 512MB\n')).toMatchObject({ memoryGb: 0.5 });
      expect(res('  memory: 1TB\n')).toMatchObject({ memoryGb: 1024 });
      expect(res('  memory: 2GiB\n')).toMatchObject({ memoryGb: 2 });
      expect(res('  memory: 1024k\n')).toMatchObject({ memoryGb: 1 / 1024 });
      for (const bad of ['0', '"lots"', '"8XB"', '"8+GB+"', '-4', '"0MB"']) {
        expect(issuesOf(`run: x\nresources:\n  memory: ${bad}\n`)[0], bad).toMatch(/^3 task\[0\]\.resources\.memory: expected a memory size > 0 in GB: .*, got /);
      }
    });

    it('records other SkyPilot resource keys as written; alternatives must be a list of resource maps', () => {
      const r = res('  accelerators: A100:8\n  cloud: local\n  ports: [8080, "9000-9010"]\n  disk_size: 256\n  use_spot: true\n  labels: {team: ml}\n');
      expect(r.other).toEqual({ accelerators: 'A100:8', cloud: 'local', ports: [8080, '9000-9010'], disk_size: 256, use_spot: true, labels: { team: 'ml' } });
      expect(issuesOf('run: x\nresources:\n  any_of: cpus\n')).toEqual(['3 task[0].resources.any_of: expected a list of resource maps (any_of: the alternatives), got "cpus"']);
      expect(issuesOf('run: x\nresources: [cpus]\n')).toEqual(['2 task[0].resources: expected a map of resources (cpus, memory, job_recovery, …), got a list of 1']);
    });
  });

  describe('job_recovery', () => {
    it('defaults to no restarts', () => {
      expect(parseJobSpec('run: x\n').tasks[0].jobRecovery).toEqual(NO_RECOVERY);
    });

    it('reads max_restarts_on_errors, recover_on_exit_codes (int or list) and strategy', () => {
      const jr = parseJobSpec('run: x\njob_recovery:\n  max_restarts_on_errors: 3\n  recover_on_exit_codes: [137, 1, 137, 0]\n  strategy: FAILOVER\n').tasks[0].jobRecovery;
      expect(jr).toEqual({ maxRestartsOnErrors: 3, recoverOnExitCodes: [0, 1, 137], strategy: 'FAILOVER' });
      expect(parseJobSpec('run: x\njob_recovery:\n  recover_on_exit_codes: 33\n').tasks[0].jobRecovery.recoverOnExitCodes).toEqual([33]);
    });

    it('accepts SkyPilot\'s string shorthand for the strategy', () => {
      expect(parseJobSpec('run: x\njob_recovery: EAGER_NEXT_REGION\n').tasks[0].jobRecovery).toEqual({ ...NO_RECOVERY, strategy: 'EAGER_NEXT_REGION' });
    });

    it('is also accepted under resources, where older SkyPilot files put it', () => {
      const spec = parseJobSpec('run: x\nresources:\n  cpus: 1+\n  job_recovery:\n    max_restarts_on_errors: 2\n    recover_on_exit_codes: 7\n');
      expect(spec.tasks[0].jobRecovery).toEqual({ maxRestartsOnErrors: 2, recoverOnExitCodes: [7], strategy: null });
      expect(spec.tasks[0].resources).toEqual({ ...DEFAULT_RESOURCES, cpusAtLeast: true });
      expect(issuesOf('run: x\nresources:\n  job_recovery:\n    max_restarts_on_errors: two\n')).toEqual([
        '4 task[0].resources.job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got "two"',
      ]);
    });

    it('refuses it in both places at once', () => {
      expect(issuesOf('run: x\njob_recovery:\n  max_restarts_on_errors: 1\nresources:\n  job_recovery: FAILOVER\n')).toEqual([
        '5 task[0].resources.job_recovery: job_recovery is given twice (also at the top level, line 2): keep one',
      ]);
    });

    it('refuses bad values with expected vs got', () => {
      expect(issuesOf('run: x\njob_recovery:\n  max_restarts_on_errors: 1.5\n')).toEqual(['3 task[0].job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got 1.5']);
      expect(issuesOf('run: x\njob_recovery:\n  max_restarts_on_errors: "1"\n')).toEqual(['3 task[0].job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got "1"']);
      expect(issuesOf(`run: x\njob_recovery:\n  max_restarts_on_errors: ${SPEC_LIMITS.maxRestartsOnErrors + 1}\n`)).toEqual([
        `3 task[0].job_recovery.max_restarts_on_errors: expected at most ${SPEC_LIMITS.maxRestartsOnErrors} restarts, got ${SPEC_LIMITS.maxRestartsOnErrors + 1}`,
      ]);
      expect(issuesOf('run: x\njob_recovery:\n  recover_on_exit_codes: 300\n')).toEqual([
        '3 task[0].job_recovery.recover_on_exit_codes: expected an exit code (an integer from 0 to 255), got 300',
      ]);
      expect(issuesOf('run: x\njob_recovery:\n  recover_on_exit_codes: [1, -1]\n')).toEqual([
        '3 task[0].job_recovery.recover_on_exit_codes[1]: expected an exit code (an integer from 0 to 255), got -1',
      ]);
      expect(issuesOf('run: x\njob_recovery:\n  recover_on_exit_codes: "1,2"\n')).toEqual([
        '3 task[0].job_recovery.recover_on_exit_codes: expected an exit code 0–255 or a list of them, got "1,2"',
      ]);
      expect(issuesOf('run: x\njob_recovery:\n  strategy: 3\n')).toEqual(['3 task[0].job_recovery.strategy: expected a strategy name (a string, e.g. FAILOVER), got 3']);
    });
  });

  it('accepts num_nodes N ≥ 1 (absent from the stored task at 1), per-node resources counted N times', () => {
    const one = parseJobSpec('run: x\nnum_nodes: 1\n');
    expect(one.tasks[0]).not.toHaveProperty('numNodes');
    expect(specHash(one)).toBe(specHash(parseJobSpec('run: x\n')));
    const gang = parseJobSpec('run: x\nnum_nodes: 3\nresources:\n  cpus: 2\n  infra: slurm\n');
    expect(gang.tasks[0].numNodes).toBe(3);
    expect(jobCpus(gang)).toBe(6);
    expect(jobNodes(gang)).toBe(3);
    expect(jobNodes(parseJobSpec('run: x\n---\nrun: y\nnum_nodes: 4\n'))).toBe(4);
    expect(issuesOf('run: x\nnum_nodes: many\n')).toEqual(['2 task[0].num_nodes: expected a node count (an integer ≥ 1), got "many"']);
    expect(issuesOf('run: x\nnum_nodes: 0\n')).toEqual(['2 task[0].num_nodes: expected a node count (an integer ≥ 1), got 0']);
    expect(issuesOf('run: x\nnum_nodes: 5000\n')).toEqual(['2 task[0].num_nodes: expected at most 1024 nodes, got 5000']);
  });

  it('refuses num_nodes > 1 on the local executor, named or the server default', () => {
    const msg = '2 task[0].num_nodes: num_nodes: 2 needs the Slurm executor (infra: slurm): the local executor runs a task on this one machine';
    expect(issuesOf('run: x\nnum_nodes: 2\nresources:\n  infra: local\n')).toEqual([msg]);
    expect(checkJobSpec('run: x\nnum_nodes: 2\n', { defaultExecutor: 'local' }).issues.map((i) => `${i.line} ${i.path}: ${i.message}`)).toEqual([msg]);
    // The spec's own infra wins over the server's default; without either, the spec is accepted.
    expect(checkJobSpec('run: x\nnum_nodes: 2\nresources:\n  infra: slurm\n', { defaultExecutor: 'local' }).issues).toEqual([]);
    expect(checkJobSpec('run: x\nnum_nodes: 2\n', { defaultExecutor: 'slurm' }).issues).toEqual([]);
    expect(checkJobSpec('run: x\nnum_nodes: 2\n').issues).toEqual([]);
  });

  it('refuses SkyPilot keys it cannot honour, saying why (null tolerated)', () => {
    expect(issuesOf('run: x\nfile_mounts:\n  /data: s3://bucket\nservice:\n  replicas: 2\n')).toEqual([
      '3 task[0].file_mounts["/data"]: "s3://bucket" is a bucket or cloud-storage source, not supported: jobdeck does not manage cloud storage; copy the data in setup (e.g. aws s3 cp, gsutil cp) or give a local path as the source (uploaded with the job)',
      '4 task[0].service: service (SkyServe) is not supported: jobdeck runs jobs, not services',
    ]);
    expect(parseJobSpec('run: x\nfile_mounts:\nconfig:\n').tasks).toHaveLength(1);
  });

  it('file_mounts: local sources need their upload; absolute targets only under the operator root; storage objects refused', () => {
    const text = 'run: x\nfile_mounts:\n  cfg.txt: ./config.txt\n  ~/data: ../data\n  /srv/data/in: ./in\n';
    expect(issuesOf(text)).toEqual([
      '3 task[0].file_mounts["cfg.txt"]: a local source needs its content uploaded with the job: jobdeck launch does it, the API takes fileMountUploads',
      '4 task[0].file_mounts["~/data"]: a local source needs its content uploaded with the job: jobdeck launch does it, the API takes fileMountUploads',
      "5 task[0].file_mounts[\"/srv/data/in\"]: an absolute target is allowed only under the folder the operator allows (JOBDECK_FILE_MOUNT_ROOT); use a relative target (inside the attempt's working folder) or ~/…",
    ]);
    const targets = ['cfg.txt', '~/data', '/srv/data/in'];
    expect(checkJobSpec(text, { uploads: { fileMountTargets: targets, fileMountRoot: '/srv/data' } }).issues).toEqual([]);
    expect(checkJobSpec(text, { uploads: { fileMountTargets: targets, fileMountRoot: '/srv/other' } }).issues.map((i) => i.message)).toEqual([
      "an absolute target is allowed only under the folder the operator allows (JOBDECK_FILE_MOUNT_ROOT); use a relative target (inside the attempt's working folder) or ~/… (allowed here: under /srv/other)",
    ]);
    expect(checkJobSpec(text, { uploads: { fileMountTargets: targets, fileMountRoot: '/srv/data' } }).spec?.tasks[0].fileMounts).toEqual({ 'cfg.txt': './config.txt', '~/data': '../data', '/srv/data/in': './in' });
    expect(issuesOf('run: x\nfile_mounts:\n  /d:\n    source: s3://b\n    mode: MOUNT\n')[0]).toContain('task[0].file_mounts["/d"]: storage objects (source/store/mode) are not supported');
    expect(issuesOf('run: x\nfile_mounts:\n  ../up: ./x\n')[0]).toContain('without control characters or ..');
    // No file_mounts: the stored spec has no key (its specHash is unchanged).
    expect('fileMounts' in parseJobSpec('run: x\n').tasks[0]).toBe(false);
  });

  it('takes secrets like envs, apart from them, with the same name rules; launch values win', () => {
    const t = parseJobSpec('run: x\nenvs:\n  A: "1"\nsecrets:\n  TOKEN: abc\n  N: 2\n').tasks[0];
    expect({ envs: t.envs, secrets: t.secrets }).toEqual({ envs: { A: '1' }, secrets: { N: '2', TOKEN: 'abc' } });
    expect(parseJobSpec('run: x\n').tasks[0]).not.toHaveProperty('secrets');
    expect(parseJobSpec('run: x\nsecrets:\n  T:\n', { overrides: { secrets: { T: 'given' } } }).tasks[0].secrets).toEqual({ T: 'given' });
    expect(issuesOf('run: x\nsecrets:\n  JOBDECK_X: y\n')[0]).toMatch(/^3 task\[0\]\.secrets\.JOBDECK_X: env var name "JOBDECK_X" is reserved/);
    const r = checkJobSpec('run: x\nsecrets:\n  T:\nenvs:\n  E:\n');
    expect(r.required.map((i) => i.path)).toEqual(['task[0].secrets.T', 'task[0].envs.E']); // by line
    expect(r.issues).toEqual(r.required);
  });

  it('checks names', () => {
    expect(parseJobSpec(`name: ${'n'.repeat(SPEC_LIMITS.maxNameLength)}\nrun: x\n`).name).toHaveLength(SPEC_LIMITS.maxNameLength);
    expect(issuesOf(`name: ${'n'.repeat(SPEC_LIMITS.maxNameLength + 1)}\nrun: x\n`)[0]).toMatch(/^1 task\[0\]\.name: expected a name of at most 128 characters, got "n+…" \(129 characters\)$/);
    expect(issuesOf('name: "a\\u0007b"\nrun: x\n')[0]).toMatch(/^1 task\[0\]\.name: expected a name without control or invisible characters/);
    expect(issuesOf('name: "evil\\u202Etxt.exe"\nrun: x\n')[0]).toMatch(/without control or invisible characters/);
    expect(issuesOf('name: "  "\nrun: x\n')).toEqual(['1 task[0].name: expected a non-empty name, got "  "']);
    expect(issuesOf('name: 2024\nrun: x\n')).toEqual(['1 task[0].name: expected a name (a string), got 2024']);
    expect(parseJobSpec('name: "训练 run ✓"\nrun: x\n').name).toBe('训练 run ✓');
  });

  // Each hides text or renders as nothing: Cf (U+061C, U+00AD, U+180E, U+206A, tags, interlinear
  // annotation), default-ignorable (U+034F), Hangul fillers (U+3164, U+115F, U+1160, U+FFA0),
  // private use (U+E000), line/paragraph separators (U+2028, U+2029).
  it.each(['061C', '00AD', '180E', '206A', '034F', 'E0001', 'E0041', 'FFF9', 'FFFB', '3164', '115F', '1160', 'FFA0', 'E000', '2028', '2029', '200B', 'FEFF'])(
    'refuses U+%s in every name-like field',
    (hex) => {
      const ch = String.fromCodePoint(parseInt(hex, 16));
      const esc = hex.length > 4 ? `\\U${hex.padStart(8, '0')}` : `\\u${hex}`;
      expect(issuesOf(`name: "a${esc}b"\nrun: x\n`)[0]).toMatch(/^1 task\[0\]\.name: expected a name without control or invisible characters/);
      expect(issuesOf(`name: "a${esc}b"\n---\nrun: x\n`)[0]).toMatch(/^1 pipeline\.name: expected a name without control or invisible characters/);
      expect(issuesOf(`run: x\njob_recovery: "F${esc}X"\n`)[0]).toMatch(/job_recovery(\.strategy)?: expected a strategy name without control or invisible characters/);
      expect(issuesOf('run: x\n', { overrides: { name: `a${ch}b` } })[0]).toMatch(/overrides\.name: expected a name without control or invisible characters/);
    },
  );
});

describe('limits (hostile input is refused cleanly)', () => {
  it('exposes the limits', () => {
    expect(SPEC_LIMITS).toMatchObject({ maxBytes: 262144, maxTasks: 64, maxDepth: 32, maxAliasCount: 50, maxNameLength: 128, maxEnvCount: 256, maxEnvValueBytes: 65536, maxScriptBytes: 65536 });
  });

  it('refuses a text over maxBytes (counted in UTF-8)', () => {
    expect(issuesOf(`run: "${'x'.repeat(SPEC_LIMITS.maxBytes)}"\n`)).toEqual([`- : the spec is too large: ${SPEC_LIMITS.maxBytes + 8} bytes, at most 256 KiB`]);
    // 100k three-byte characters are 300 KB although only 100k UTF-16 units.
    expect(issuesOf(`run: "${'€'.repeat(100_000)}"\n`)[0]).toMatch(/the spec is too large: 300008 bytes/);
    // 10 MB is refused without being parsed.
    expect(issuesOf('#'.repeat(10_000_000))[0]).toMatch(/the spec is too large/);
  });

  it('refuses more than maxTasks tasks, counting a header apart', () => {
    const tasks = (n: number) => Array.from({ length: n }, (_, i) => `run: echo ${i}`).join('\n---\n');
    expect(parseJobSpec(tasks(SPEC_LIMITS.maxTasks)).tasks).toHaveLength(SPEC_LIMITS.maxTasks);
    expect(parseJobSpec(`name: p\n---\n${tasks(SPEC_LIMITS.maxTasks)}`).tasks).toHaveLength(SPEC_LIMITS.maxTasks);
    expect(issuesOf(tasks(SPEC_LIMITS.maxTasks + 1))).toEqual([`128 task[64]: too many tasks: 65, at most 64`]);
    // Thousands of documents are refused before any is built.
    expect(issuesOf('run: x\n---\n'.repeat(10_000))[0]).toMatch(/^130 : too many YAML documents: 10001, at most 64 tasks/);
  });

  it('refuses nesting deeper than maxDepth, without a stack overflow', () => {
    const nested = (n: number) => `run: x\nresources:\n  accelerator_args: ${'['.repeat(n)}${']'.repeat(n)}\n`;
    expect(parseJobSpec(nested(SPEC_LIMITS.maxDepth - 2)).tasks[0].resources.other.accelerator_args).toBeDefined();
    expect(issuesOf(nested(SPEC_LIMITS.maxDepth - 1))).toEqual(['3 : the spec nests maps/lists deeper than 32 levels']);
    // A hang (refusal depending on the input's depth) is caught by the test's timeout; no clock here.
    expect(issuesOf(`run: ${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toEqual(['1 : the spec nests maps/lists deeper than 32 levels']);
    expect(issuesOf(`run: ${'{a: '.repeat(50_000)}1${'}'.repeat(50_000)}`)).toEqual(['1 : the spec nests maps/lists deeper than 32 levels']);
    let block = 'run: x\nresources:\n  accelerator_args:\n';
    for (let i = 0; i < 500; i++) block += `${' '.repeat(4 + i)}k${i}:\n`;
    expect(issuesOf(block)[0]).toMatch(/nests maps\/lists deeper than 32 levels/);
  });

  it('refuses a billion-laughs alias bomb before expanding it', () => {
    const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i <= 9; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(',')}]`);
    // Expanding it would not end within the test's timeout: refusing it at all is the proof.
    expect(issuesOf(lines.join('\n'))).toEqual(['7 : too many YAML aliases: 90, at most 50 (refused as a possible alias bomb)']);
  });

  it('refuses a smaller bomb (few aliases, large expansion) through the expansion bound', () => {
    const lines = ['run: x', 'resources:', '  labels:', '    a0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i <= 4; i++) lines.push(`    a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`);
    expect(issuesOf(lines.join('\n'))).toEqual(['1 task[0]: YAML aliases expand too much (more than 50): refused as a possible alias bomb']);
  });

  it('still allows a few ordinary aliases', () => {
    const spec = parseJobSpec('run: x\nresources:\n  labels:\n    a: &who team-ml\n    b: *who\n');
    expect(spec.tasks[0].resources.other.labels).toEqual({ a: 'team-ml', b: 'team-ml' });
  });

  it('limits env count, env value size and total env size', () => {
    const envs = (n: number) => `run: x\nenvs:\n${Array.from({ length: n }, (_, i) => `  E${i}: v`).join('\n')}\n`;
    expect(Object.keys(parseJobSpec(envs(SPEC_LIMITS.maxEnvCount)).tasks[0].envs)).toHaveLength(SPEC_LIMITS.maxEnvCount);
    expect(issuesOf(envs(SPEC_LIMITS.maxEnvCount + 1))).toEqual(['2 task[0].envs: expected at most 256 env vars, got 257']);
    // Overrides count too.
    expect(issuesOf(envs(SPEC_LIMITS.maxEnvCount), { overrides: { envs: { EXTRA: '1' } } })).toEqual([
      '2 task[0].envs: expected at most 256 env vars (with overrides), got 257',
    ]);
    const big = 'v'.repeat(SPEC_LIMITS.maxEnvValueBytes + 1);
    expect(issuesOf(`run: x\nenvs:\n  BIG: ${big}\n`)).toEqual(['3 task[0].envs.BIG: expected a value of at most 64 KiB, got 65537 bytes']);
    expect(issuesOf('run: x\n', { overrides: { envs: { BIG: big } } })).toEqual(['- overrides.envs.BIG: expected a value of at most 64 KiB, got 65537 bytes']);
    const many = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`E${i}`, 'v'.repeat(60_000)]));
    expect(issuesOf('run: x\n', { overrides: { envs: many } })).toEqual(['1 task[0].envs: expected env vars of at most 512 KiB in all (with overrides), got 540018 bytes']);
    expect(issuesOf('run: x\nenvs:\n  NUL: "a\\0b"\n')).toEqual(['3 task[0].envs.NUL: expected text without a NUL character (U+0000), found at character 2']);
  });

  it('bounds the issues listed for a document with thousands of problems', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: 1`).join('\n');
    const issues = specError(() => parseJobSpec(`run: x\n${keys}\n`)).issues;
    expect(issues).toHaveLength(51);
    expect(issues[0]).toMatchObject({ line: 2, path: 'task[0].k0' });
    expect(issues[50]).toMatchObject({ line: 51, path: 'task[0]', message: '…and 19950 more issues in this document' });
    const codes = specError(() => parseJobSpec(`run: x\njob_recovery:\n  recover_on_exit_codes: [${Array(30_000).fill('-1').join(',')}]\n`)).issues;
    expect(codes.length).toBeLessThanOrEqual(51);
    const envs = Array.from({ length: 20_000 }, (_, i) => `  ${i}X: 1`).join('\n');
    expect(issuesOf(`run: x\nenvs:\n${envs}\n`)).toEqual(['2 task[0].envs: expected at most 256 env vars, got 20000']);
    const tagged = specError(() => parseJobSpec(`run: x\nresources:\n  labels:\n${'    - !t x\n'.repeat(20_000)}`)).issues;
    expect(tagged).toHaveLength(51);
    expect(tagged[50].message).toBe('…and 19950 more YAML problems in this document');
    const dups = specError(() => parseJobSpec(`run: x\nresources:\n  labels:\n${'    a: 1\n'.repeat(20_000)}`)).issues;
    expect(dups).toHaveLength(50);
    expect(dups[0].message).toBe('YAML key "a" is given twice (first at line 4): keys must be unique');
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`E${i}`, '1']));
    expect(issuesOf('run: x\n', { overrides: { envs: many } })).toEqual(['- overrides.envs: expected at most 256 env vars, got 300']);
  });

  it('shows control characters from the input escaped, so issues are safe to print', () => {
    const err = specError(() => parseJobSpec('run: x\n"\\e]0;pwned\\a": 1\nname: "\\e[2J"\n', { filename: 'evil\u001b.yaml' }));
    expect(err.message).not.toMatch(/\p{Cc}(?<!\n)/u);
    expect(err.message.split('\n')).toHaveLength(2);
    expect(err.message).toContain('\\u001b]0;pwned\\u0007');
  });

  it('limits setup and run size and refuses NUL bytes', () => {
    const script = 'x'.repeat(SPEC_LIMITS.maxScriptBytes);
    expect(parseJobSpec(`run: ${script}\n`).tasks[0].run).toHaveLength(SPEC_LIMITS.maxScriptBytes);
    expect(issuesOf(`run: ${script}y\n`)).toEqual(['1 task[0].run: expected run of at most 64 KiB, got 65537 bytes']);
    expect(issuesOf(`setup: ${script}y\n`)).toEqual(['1 task[0].setup: expected setup of at most 64 KiB, got 65537 bytes']);
    expect(issuesOf('run: "echo \\0"\n')).toEqual(['1 task[0].run: expected text without a NUL character (U+0000), found at character 6']);
    expect(issuesOf('run: "echo \\ud800"\n')).toEqual(['1 task[0].run: expected text without a lone surrogate (U+D800, not a character), found at character 6']);
    expect(issuesOf('run: echo hi # \u0000\n')).toEqual(['1 : expected text without a NUL character (U+0000)']);
  });
});

describe('the JSON form (parseJobSpecObject)', () => {
  it('reads one task object', () => {
    const spec = parseJobSpecObject({ name: 'j', run: 'echo', envs: { N: 1, B: false }, resources: { cpus: '2+' }, job_recovery: { max_restarts_on_errors: 1 } });
    expect(spec).toEqual({
      name: 'j',
      tasks: [task({ name: 'j', run: 'echo', envs: { N: '1', B: 'false' }, resources: { ...DEFAULT_RESOURCES, cpus: 2, cpusAtLeast: true }, jobRecovery: { ...NO_RECOVERY, maxRestartsOnErrors: 1 } })],
    });
  });

  it('reads an array of documents with the same rules (header included)', () => {
    const spec = parseJobSpecObject([{ name: 'p' }, { run: 'a' }, { run: 'b' }]);
    expect(spec.name).toBe('p');
    expect(spec.tasks.map((t) => t.run)).toEqual(['a', 'b']);
  });

  it('reports issues with line null and the file name', () => {
    const err = specError(() => parseJobSpecObject([{ name: 'p' }, { run: 'a' }, { run: 'b', job_recovery: { max_restarts_on_errors: 'two' } }, null], { filename: 'body.json' }));
    expect(err.message.split('\n')).toEqual([
      'body.json task[1].job_recovery.max_restarts_on_errors: expected an integer ≥ 0, got "two"',
      'body.json task[2]: empty document: expected a task',
    ]);
    expect(err.issues.every((i) => i.line === null && i.column === null)).toBe(true);
    expect(specError(() => parseJobSpecObject([])).message).toBe('job.json: the spec is empty: expected a task (a map with at least `run`) or a list of them');
    expect(specError(() => parseJobSpecObject('run: x')).message).toMatch(/^job\.json task\[0\]: expected a map of task keys .*, got "run: x"$/);
  });

  it('refuses non-JSON values, cycles, deep and huge values without recursion', () => {
    expect(specError(() => parseJobSpecObject({ run: 'x', resources: { labels: { when: new Date(0) } } })).message).toBe(
      'job.json task[0].resources.labels.when: expected plain data (strings, numbers, booleans, null, lists, maps), got a timestamp',
    );
    expect(specError(() => parseJobSpecObject({ run: 'x', resources: { disk_size: Infinity } })).message).toBe('job.json task[0].resources.disk_size: expected a finite number, got Infinity');
    const cyclic: Record<string, unknown> = { run: 'x' };
    cyclic.resources = { labels: cyclic };
    expect(specError(() => parseJobSpecObject(cyclic)).message).toMatch(/deeper than 32 levels|too large/);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(specError(() => parseJobSpecObject({ run: 'x', resources: { labels: deep } })).message).toMatch(/deeper than 32 levels/);
    // Shared sub-trees (a JS "alias bomb") are bounded by the node count.
    let shared: unknown[] = ['x'];
    for (let i = 0; i < 20; i++) shared = [shared, shared];
    expect(specError(() => parseJobSpecObject({ run: 'x', resources: { labels: shared } })).message).toBe(`job.json: the spec is too large: more than ${SPEC_LIMITS.maxJsonNodes} values`);
    expect(specError(() => parseJobSpecObject({ run: 'x'.repeat(SPEC_LIMITS.maxBytes + 1) })).message).toBe('job.json: the spec is too large: more than 256 KiB of text');
    expect(specError(() => parseJobSpecObject(Array.from({ length: 70 }, () => ({ run: 'x' })))).message).toBe('job.json task[64]: too many tasks: 70, at most 64');
  });
});

describe('commandSpec (CLI --cmd)', () => {
  it('makes a one-task job from a command; its task is named like the job (-n, else the command, else "cmd")', () => {
    expect(commandSpec('python train.py --lr 0.1')).toEqual({ name: 'python train.py --lr 0.1', tasks: [task({ name: 'python train.py --lr 0.1', run: 'python train.py --lr 0.1' })] });
    expect(commandSpec('make', { name: 'build', envs: { CI: '1' } })).toEqual({ name: 'build', tasks: [task({ name: 'build', run: 'make', envs: { CI: '1' } })] });
    expect(commandSpec('# nothing but a comment\n').tasks[0].name).toBe('cmd');
  });

  it('validates the command, the name and the envs', () => {
    expect(specError(() => commandSpec('  ')).message).toBe('command run: expected a non-empty command, got "  "');
    expect(specError(() => commandSpec('x'.repeat(SPEC_LIMITS.maxScriptBytes + 1))).message).toBe('command task[0].run: expected run of at most 64 KiB, got 65537 bytes');
    expect(specError(() => commandSpec('echo', { envs: { '1X': 'a' } })).message).toBe(
      'command overrides.envs["1X"]: invalid env var name "1X": expected letters, digits and _ (not starting with a digit)',
    );
    expect(specError(() => commandSpec('echo', { name: '' })).message).toBe('command overrides.name: expected a non-empty name, got an empty string');
  });
});

describe('specHash and jobCpus', () => {
  it('hashes the canonical (sorted-key) JSON of the normalized spec', () => {
    const spec = parseJobSpec('name: h\nrun: x\nenvs: {B: 2, A: 1}\n');
    const h = specHash(spec);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).toBe(createHash('sha256').update(canonicalJson(spec)).digest('hex'));
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: undefined }, null] })).toBe('{"a":[{"d":1},null],"b":1}');
  });

  it('is the same for equivalent specs and differs when anything changes', () => {
    const a = parseJobSpec('name: h\nrun: x\nresources:\n  cpus: 2\nenvs:\n  A: "1"\n  B: "2"\n');
    const b = parseJobSpec('envs: {B: 2, A: 1}\nresources: {cpus: "2"}\nrun: x\nname: h\n');
    const c = parseJobSpecObject({ run: 'x', name: 'h', envs: { A: 1, B: 2 }, resources: { cpus: 2 } });
    expect(specHash(b)).toBe(specHash(a));
    expect(specHash(c)).toBe(specHash(a));
    expect(specHash(parseJobSpec('name: h\nrun: x\nresources:\n  cpus: 2+\nenvs: {A: 1, B: 2}\n'))).not.toBe(specHash(a));
    expect(specHash(parseJobSpec('name: h\nrun: x\nresources:\n  cpus: 2\nenvs: {A: 1, B: 2}\n'), )).toBe(specHash(a));
    expect(specHash(parseJobSpec('name: h\nrun: "x "\nresources:\n  cpus: 2\nenvs: {A: 1, B: 2}\n'))).not.toBe(specHash(a));
  });

  it('gives the max cpus over tasks', () => {
    expect(jobCpus(parseJobSpec('run: x\n'))).toBe(1);
    expect(jobCpus(parseJobSpec('run: x\nresources: {cpus: 0.5}\n---\nrun: y\nresources: {cpus: 3+}\n---\nrun: z\n'))).toBe(3);
  });
});

describe('examples', () => {
  const read = (dir: string, name: string) => readFileSync(path.join(dir, `${name}.yaml`), 'utf8');

  /** What each example must parse to: the behaviour-relevant part of every task. */
  const EXPECTED: Record<string, { name: string; tasks: Array<Partial<TaskSpec>> }> = {
    hello: { name: 'hello', tasks: [{ name: 'hello', run: 'echo "hello from jobdeck"', jobRecovery: NO_RECOVERY }] },
    'seed-retry-pipeline': {
      name: 'retry-each-task',
      tasks: [
        { name: 'retry-each-task', run: 'echo "task 1, attempt $JOBDECK_ATTEMPT"\nexit 1\n', resources: { ...DEFAULT_RESOURCES, cpusAtLeast: true }, jobRecovery: { ...NO_RECOVERY, maxRestartsOnErrors: 1 } },
        { name: null, run: 'echo "task 2 (should never run)"\nexit 0\n', jobRecovery: NO_RECOVERY },
      ],
    },
    'setup-fails': {
      name: 'broken-setup',
      tasks: [{ name: 'broken-setup', setup: 'echo "installing dependencies"\nexit 2\n', run: 'echo "never printed"', jobRecovery: { ...NO_RECOVERY, maxRestartsOnErrors: 1 } }],
    },
    'middle-task-retry': {
      name: 'flaky-middle',
      tasks: [
        { name: 'prepare', jobRecovery: NO_RECOVERY },
        { name: 'flaky', jobRecovery: { ...NO_RECOVERY, maxRestartsOnErrors: 1 } },
        { name: 'report', jobRecovery: NO_RECOVERY },
      ],
    },
    'training-like': {
      name: 'train-small',
      tasks: [{ name: 'train-small', envs: { EPOCHS: '30' }, setup: 'echo "setup: preparing data"\n', resources: DEFAULT_RESOURCES, jobRecovery: NO_RECOVERY }],
    },
    'hostile-output': { name: 'hostile-output', tasks: [{ name: 'hostile-output', setup: null, jobRecovery: NO_RECOVERY }] },
  };

  it('has exactly the named files, each with a header comment saying the expected outcome', () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml')).sort();
    expect(files).toEqual([...SPEC_EXAMPLE_NAMES].map((n) => `${n}.yaml`).sort());
    for (const name of SPEC_EXAMPLE_NAMES) {
      const text = read(EXAMPLES, name);
      expect(text.startsWith('# '), name).toBe(true);
      expect(text, name).toMatch(/^# .*Expected: (SUCCEEDED|FAILED|FAILED_SETUP)\b/m);
    }
    const readme = readFileSync(path.join(EXAMPLES, 'README.md'), 'utf8');
    for (const name of SPEC_EXAMPLE_NAMES) expect(readme, name).toContain(`\`${name}.yaml\``);
  });

  it.each(SPEC_EXAMPLE_NAMES.map((n) => [n]))('examples/%s.yaml parses to the expected pipeline', (name) => {
    const spec = parseJobSpec(read(EXAMPLES, name), { filename: `${name}.yaml` });
    const want = EXPECTED[name];
    expect(spec.name).toBe(want.name);
    expect(spec.tasks).toHaveLength(want.tasks.length);
    want.tasks.forEach((t, i) => expect(spec.tasks[i], `task ${i}`).toMatchObject(t));
  });

  it('middle-task-retry keeps its marker under a folder named after the job id', () => {
    const spec = parseJobSpec(read(EXAMPLES, 'middle-task-retry'));
    for (const t of spec.tasks) expect(t.run).toContain('${TMPDIR:-/tmp}/jobdeck-example-${JOBDECK_JOB_ID');
    expect(spec.tasks[1].run).toMatch(/exit 3/);
  });

  it('hostile-output prints the same hostile text as the reference example', () => {
    const spec = parseJobSpec(read(EXAMPLES, 'hostile-output'));
    expect(spec.tasks[0].run).toContain('<script>document.title="pwned"</script>');
    expect(spec.tasks[0].run).toContain("printf '\\033]0;title-change\\007");
    expect(spec.tasks[0].run?.trimEnd().endsWith("printf 'no newline at the end'")).toBe(true);
  });

  describe('the reference examples (tests/fixtures/reference-examples)', () => {
    it.each(['hostile-output', 'middle-task-retry', 'seed-retry-pipeline', 'setup-fails'].map((n) => [n]))('%s.yaml parses to the expected pipeline', (name) => {
      const spec = parseJobSpec(read(REFERENCE_EXAMPLES, name), { filename: `${name}.yaml` });
      const want = EXPECTED[name];
      expect(spec.name).toBe(want.name);
      expect(spec.tasks.map((t) => [t.name, t.jobRecovery.maxRestartsOnErrors])).toEqual(want.tasks.map((t) => [t.name, t.jobRecovery?.maxRestartsOnErrors]));
      if (name !== 'middle-task-retry') want.tasks.forEach((t, i) => expect(spec.tasks[i]).toMatchObject(t));
    });

    it('training-like.yaml is invalid YAML (an unquoted ": " in setup) and is refused at its line', () => {
      // PyYAML, SkyPilot's parser, refuses it too ("mapping values are not allowed here", line 7).
      expect(specError(() => parseJobSpec(read(REFERENCE_EXAMPLES, 'training-like'), { filename: 'training-like.yaml' })).message).toBe(
        `training-like.yaml:7 task[0].setup: YAML syntax error: a one-line value containing ": " must be quoted ('…') or written as a block (|): YAML reads the ": " as the start of a nested key`,
      );
      // Quoted, it is the pipeline the repo's examples/training-like.yaml describes.
      const fixed = read(REFERENCE_EXAMPLES, 'training-like').replace('setup: echo "setup: preparing data"', `setup: 'echo "setup: preparing data"'`);
      expect(parseJobSpec(fixed).tasks[0]).toMatchObject({ name: 'train-small', envs: { EPOCHS: '30' }, setup: 'echo "setup: preparing data"', resources: DEFAULT_RESOURCES });
    });
  });
});
