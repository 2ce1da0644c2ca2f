/**
 * SkyPilot task files: every key is honoured, refused with a reason, or accepted with a warning
 * (docs/spec.md "SkyPilot keys") — never silently ignored. Two parts:
 * - the walk: every key the schema knows and every key of SkyPilot's task and resources schema,
 *   each given alone in a task; a key that is neither in the honoured list, nor refused, nor
 *   warned about fails the test (so a new key cannot come in silently);
 * - the corpus (tests/fixtures/skypilot/*.yaml): each file says its outcome in `# expect:` lines
 *   (accepted, `warning: <text>`, `refused: <text>`) and is checked through the validator.
 */
import { describe, expect, it } from 'vitest';
import { checkJobSpec, formatSpecIssue, ResourcesSchema, TaskSchema } from '../../lib/jobs/spec';
import { skypilotCorpus } from '../helpers/skypilot-corpus';

/** SkyPilot's task keys (sky/utils/schemas.py get_task_schema), with the older `experimental`. */
const SKYPILOT_TASK_KEYS = [
  'name',
  'workdir',
  'event_callback',
  'num_nodes',
  'resources',
  'file_mounts',
  'service',
  'setup',
  'run',
  'envs',
  'secrets',
  'inputs',
  'outputs',
  'config',
  'experimental',
  'volumes',
  'pool',
];

/** SkyPilot's resources keys (sky/utils/schemas.py get_resources_schema). */
const SKYPILOT_RESOURCES_KEYS = [
  'cloud',
  'infra',
  'region',
  'zone',
  'cpus',
  'memory',
  'accelerators',
  'accelerator_args',
  'instance_type',
  'use_spot',
  'job_recovery',
  'disk_size',
  'disk_tier',
  'network_tier',
  'ports',
  'labels',
  'image_id',
  'autostop',
  'any_of',
  'ordered',
];

/** Keys jobdeck acts on (docs/spec.md "Task keys"): giving one is neither refused nor warned about. */
const HONOURED_TASK = ['name', 'workdir', 'num_nodes', 'resources', 'setup', 'run', 'envs', 'secrets', 'job_recovery', 'priority', 'queue', 'max_duration'];
const HONOURED_RESOURCES = ['cloud', 'infra', 'cpus', 'memory', 'job_recovery', 'accelerators', 'any_of', 'ordered', 'labels'];

/** A value of the key's SkyPilot form, valid for jobdeck where jobdeck honours it. */
const TASK_SAMPLES: Record<string, string> = {
  name: 'name: n',
  workdir: 'workdir: /tmp',
  num_nodes: 'num_nodes: 1',
  resources: 'resources:\n  cpus: 1',
  setup: 'setup: "true"',
  envs: 'envs:\n  A: "1"',
  job_recovery: 'job_recovery:\n  max_restarts_on_errors: 1',
  priority: 'priority: 10',
  max_duration: 'max_duration: 10h',
  queue: 'queue: default',
  file_mounts: 'file_mounts:\n  /data: s3://bucket',
  service: 'service:\n  replicas: 1',
  secrets: 'secrets:\n  TOKEN: x',
  volumes: 'volumes:\n  /mnt: vol',
  pool: 'pool: p',
  event_callback: 'event_callback: echo done',
};
const RESOURCE_SAMPLES: Record<string, string> = {
  cloud: 'cloud: local',
  infra: 'infra: local',
  cpus: 'cpus: 1',
  memory: 'memory: 1',
  job_recovery: 'job_recovery:\n    max_restarts_on_errors: 1',
  any_of: 'any_of:\n    - cpus: 1',
  ordered: 'ordered:\n    - cpus: 1',
  ports: 'ports: 8080',
  accelerators: 'accelerators: A100:1',
  labels: 'labels:\n    a: b',
};

type Outcome = 'honoured' | 'refused' | 'warned';

function outcomeOf(text: string, key: string): { outcome: Outcome; issues: string[]; warnings: string[] } {
  const r = checkJobSpec(text, { defaultExecutor: 'local' });
  const issues = r.issues.map(formatSpecIssue);
  const warnings = r.warnings.map(formatSpecIssue);
  // A refusal or a warning must name the key (its path ends in it) and say something.
  const names = (lines: string[]) => lines.some((l) => new RegExp(`[.\\]]${key}(?:[.:\\[ ]|$)`).test(l) && l.split(': ').length > 1);
  if (issues.length) return { outcome: names(issues) ? 'refused' : ('?' as Outcome), issues, warnings };
  if (warnings.length) return { outcome: names(warnings) ? 'warned' : ('?' as Outcome), issues, warnings };
  return { outcome: 'honoured', issues, warnings };
}

const schemaTaskKeys = Object.keys(TaskSchema.shape);
const schemaResourceKeys = Object.keys(ResourcesSchema.shape);

describe('every SkyPilot key is honoured, refused with a reason, or warned about', () => {
  const taskKeys = [...new Set([...SKYPILOT_TASK_KEYS, ...schemaTaskKeys])].sort();
  const resourceKeys = [...new Set([...SKYPILOT_RESOURCES_KEYS, ...schemaResourceKeys])].sort();

  it('walks every task key', () => {
    const wrong: string[] = [];
    for (const key of taskKeys) {
      const sample = TASK_SAMPLES[key] ?? `${key}: x`;
      const text = key === 'run' ? 'run: echo hi\n' : `run: echo hi\n${sample}\n`;
      const { outcome, issues, warnings } = outcomeOf(text, key);
      const ok = HONOURED_TASK.includes(key) ? outcome === 'honoured' : outcome === 'refused' || outcome === 'warned';
      if (!ok) wrong.push(`${key}: ${outcome} (issues: ${issues.join(' | ') || 'none'}; warnings: ${warnings.join(' | ') || 'none'})`);
    }
    expect(wrong).toEqual([]);
  });

  it('walks every resources key', () => {
    const wrong: string[] = [];
    for (const key of resourceKeys) {
      const sample = RESOURCE_SAMPLES[key] ?? `${key}: x`;
      const { outcome, issues, warnings } = outcomeOf(`run: echo hi\nresources:\n  ${sample}\n`, key);
      const ok = HONOURED_RESOURCES.includes(key) ? outcome === 'honoured' : outcome === 'refused' || outcome === 'warned';
      if (!ok) wrong.push(`${key}: ${outcome} (issues: ${issues.join(' | ') || 'none'}; warnings: ${warnings.join(' | ') || 'none'})`);
    }
    expect(wrong).toEqual([]);
  });

  it('knows every key SkyPilot documents (none falls through to "unknown key")', () => {
    const unknown = [...SKYPILOT_TASK_KEYS.filter((k) => !schemaTaskKeys.includes(k)), ...SKYPILOT_RESOURCES_KEYS.filter((k) => !schemaResourceKeys.includes(k)).map((k) => `resources.${k}`)];
    expect(unknown).toEqual([]);
  });

  it('gives a warning a file:line, the key path and what jobdeck does instead', () => {
    const r = checkJobSpec('run: echo hi\nresources:\n  ports: 8080\n  use_spot: true\n', { filename: 'task.yaml' });
    expect(r.issues).toEqual([]);
    expect(r.warnings.map(formatSpecIssue)).toEqual([
      'task.yaml:3 task[0].resources.ports: ports: not managed by jobdeck; the job binds ports directly',
      'task.yaml:4 task[0].resources.use_spot: use_spot: not used by jobdeck: there are no spot instances; failed attempts restart as job_recovery says',
    ]);
  });

  it('treats cloud exactly like infra: the same executors, the same refusal', () => {
    const spec = checkJobSpec('run: x\nresources:\n  cloud: slurm\n').spec;
    expect(spec?.executor).toBe('slurm');
    expect(checkJobSpec('run: x\nresources:\n  cloud: kubernetes\n').issues.map(formatSpecIssue)).toEqual([
      'job.yaml:3 task[0].resources.cloud: cloud "kubernetes" is not available: jobdeck runs tasks on this machine (cloud: local) or on Slurm (cloud: slurm)',
    ]);
  });
});

describe('the SkyPilot corpus (tests/fixtures/skypilot) through the validator', () => {
  const corpus = skypilotCorpus();
  it('has a file per key and form, each with an expected outcome', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(20);
    for (const c of corpus) expect(c.text, c.file).toMatch(/^# expect: /m);
  });
  it.each(corpus.map((c) => [c.file, c] as const))('%s', (f, want) => {
    // The corpus is written for a machine without GPUs (accelerators-local.yaml).
    const r = checkJobSpec(want.text, { filename: f, defaultExecutor: 'local', localGpus: [] });
    const issues = r.issues.map(formatSpecIssue);
    const warnings = r.warnings.map(formatSpecIssue);
    if (want.accepted) expect(issues).toEqual([]);
    else for (const text of want.refusals) expect(issues.some((l) => l.includes(text)), `${text} in ${issues.join('\n')}`).toBe(true);
    if (want.required.length) {
      // Only values required at launch, each named: the text itself is valid.
      expect(r.issues).toEqual(r.required);
      expect(r.required).toHaveLength(want.required.length);
      for (const text of want.required) expect(issues.some((l) => l.includes(text)), `${text} in ${issues.join('\n')}`).toBe(true);
    }
    if (want.accepted) {
      // Exactly the warnings expected: one per `warning:` line, each with its text.
      expect(warnings).toHaveLength(want.warnings.length);
      for (const text of want.warnings) expect(warnings.some((l) => l.includes(text)), `${text} in ${warnings.join('\n')}`).toBe(true);
      for (const l of warnings) expect(l).toMatch(new RegExp(`^${f.replace('.', '\\.')}:\\d+ task\\[0\\]\\.`));
    }
  });
});
