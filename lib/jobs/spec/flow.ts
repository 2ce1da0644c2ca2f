/**
 * The job-level keys that relate jobs to one another (docs/spec.md "depends_on", "array"):
 * `depends_on` (this job waits for other jobs) and `array` (this spec is submitted as a group of
 * jobs, one per slot). Their schemas, normalized types, limits, and the pure expansion of an
 * array into its jobs' envs and names. Pure: no node:* import.
 *
 * `depends_on` is a map so that the in-job form (a task waiting for tasks of its own job, by
 * name) can be added beside `jobs` as another key of the same map.
 */
import { z } from 'zod';

/**
 * When a dependent may start (Slurm's `afterok`, `afternotok`, `afterany`): `ok` once every job
 * it names SUCCEEDED, `failed` once every one ended otherwise (FAILED_*, CANCELLED), `any` once
 * every one ended.
 */
export const AFTER_MODES = ['ok', 'failed', 'any'] as const;
export type AfterMode = (typeof AFTER_MODES)[number];

/** Jobs one `depends_on` may name. */
export const MAX_DEPENDS_ON = 32;

/** A job-level `depends_on`, normalized: the jobs as written (ids, or names the submit resolves) and the mode. */
export interface SpecDependsOn {
  jobs: Array<number | string>;
  after: AfterMode;
}

/** Bounds of an `array` (also the CLI's `--num-jobs` and `--param`). */
export const ARRAY_LIMITS = Object.freeze({
  /** Jobs one group may hold: num_jobs × the product of the parameters' value counts. */
  maxJobs: 1000,
  /** Parameters of one sweep. */
  maxParams: 8,
  /** Values of one parameter. */
  maxValues: 1000,
  /** Characters of one value. */
  maxValueLength: 200,
});

/** An `array`, normalized: copies per combination and the parameters in the order written (values as strings). */
export interface SpecArray {
  numJobs: number;
  params: Array<[string, string[]]>;
}

const JOB_REF_EXPECTED = 'expected a job id (a positive integer) or a job name';

const TASK_REF_EXPECTED = 'expected a task name (1–128 characters)';

const JobRefSchema = z.union([z.int().min(1), z.string().min(1).max(128)], { error: JOB_REF_EXPECTED });

/**
 * `depends_on: {jobs: [41, train], after: ok}` (other jobs) and/or `{tasks: [prep]}` (tasks of this
 * job, by name: a task DAG, lib/jobs/spec/task-graph-spec.ts). `after` is about `jobs` only.
 */
export const DependsOnSchema = z
  .strictObject(
    {
      jobs: z
        .array(JobRefSchema, { error: 'expected a list of job ids or names, e.g. [41, train]' })
        .min(1, { error: 'expected at least one job' })
        .max(MAX_DEPENDS_ON, { error: `expected at most ${MAX_DEPENDS_ON} jobs` })
        .nullish(),
      tasks: z
        .array(z.string({ error: TASK_REF_EXPECTED }).min(1, { error: TASK_REF_EXPECTED }).max(128, { error: TASK_REF_EXPECTED }), { error: 'expected a list of task names of this job, e.g. [prepare]' })
        .min(1, { error: 'expected at least one task' })
        .max(MAX_DEPENDS_ON, { error: `expected at most ${MAX_DEPENDS_ON} tasks` })
        .nullish(),
      after: z.enum(AFTER_MODES, { error: `expected one of ${AFTER_MODES.join(', ')}` }).nullish(),
    },
    { error: 'expected a map: depends_on: {jobs: [ID or NAME, …], after: ok | failed | any} or {tasks: [NAME, …]}' },
  )
  .refine((v) => v.jobs != null || v.tasks != null, { error: 'expected jobs: [ID or NAME, …] (other jobs) or tasks: [NAME, …] (tasks of this job)' })
  .refine((v) => v.after == null || v.jobs != null, { error: 'after: is about depends_on.jobs; a task named in depends_on.tasks must succeed first', path: ['after'] });

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VALUE_EXPECTED = `expected a value (a string, number or boolean of at most ${ARRAY_LIMITS.maxValueLength} characters)`;

const ParamValueSchema = z.union([z.string().max(ARRAY_LIMITS.maxValueLength), z.number(), z.boolean()], { error: VALUE_EXPECTED });

/** `array: {num_jobs: 4, params: {lr: [1e-3, 3e-4], seed: [1, 2, 3]}}`. */
export const ArraySchema = z.strictObject(
  {
    num_jobs: z
      .int({ error: 'expected a job count (an integer ≥ 1)' })
      .min(1, { error: 'expected a job count (an integer ≥ 1)' })
      .max(ARRAY_LIMITS.maxJobs, { error: `expected at most ${ARRAY_LIMITS.maxJobs} jobs` })
      .nullish(),
    params: z
      .record(
        z.string().regex(PARAM_NAME, { error: 'expected a parameter name (letters, digits and _, not starting with a digit): it is the env var of its value' }),
        z
          .array(ParamValueSchema, { error: 'expected a list of values, e.g. [1e-3, 3e-4]' })
          .min(1, { error: 'expected at least one value' })
          .max(ARRAY_LIMITS.maxValues, { error: `expected at most ${ARRAY_LIMITS.maxValues} values` }),
      )
      .nullish(),
  },
  { error: 'expected a map: array: {num_jobs: N, params: {NAME: [values…]}}' },
);

/** A parameter value as its env var holds it: a number as JavaScript writes it (`1e-3` → `0.001`; quote it to keep the text). */
export function paramText(v: string | number | boolean): string {
  return typeof v === 'string' ? v : String(v);
}

/** The number of jobs an array submits: numJobs × the product of the value counts. */
export function arraySize(a: SpecArray): number {
  return a.params.reduce((n, [, values]) => n * values.length, a.numJobs);
}

/** What bounds an array breaks (too many params or jobs), or null. */
export function arrayProblem(a: SpecArray): string | null {
  if (a.params.length > ARRAY_LIMITS.maxParams) return `expected at most ${ARRAY_LIMITS.maxParams} parameters, got ${a.params.length}`;
  const size = arraySize(a);
  if (size > ARRAY_LIMITS.maxJobs) return `the array has ${size} jobs (${[String(a.numJobs), ...a.params.map(([, v]) => String(v.length))].join(' × ')}); at most ${ARRAY_LIMITS.maxJobs}`;
  return null;
}

/** One job of an array: its rank (0-based) and its parameter values. */
export interface ArraySlot {
  index: number;
  values: Array<[string, string]>;
}

/**
 * The array's jobs in rank order: the parameters' cartesian product, the first parameter varying
 * slowest, each combination `numJobs` times in a row.
 */
export function arraySlots(a: SpecArray): ArraySlot[] {
  let combos: Array<Array<[string, string]>> = [[]];
  for (const [name, values] of a.params) combos = combos.flatMap((c) => values.map((v) => [...c, [name, v] as [string, string]]));
  const out: ArraySlot[] = [];
  for (const values of combos) for (let r = 0; r < a.numJobs; r++) out.push({ index: out.length, values });
  return out;
}

/**
 * The envs a job of a group gets (wins over the spec's, like `--env`): SkyPilot's
 * `SKYPILOT_JOB_RANK` / `SKYPILOT_NUM_JOBS`, jobdeck's `JOBDECK_ARRAY_INDEX` /
 * `JOBDECK_ARRAY_COUNT`, and each parameter under its own name.
 */
export function slotEnvs(slot: ArraySlot, count: number): Record<string, string> {
  const out: Record<string, string> = {
    SKYPILOT_JOB_RANK: String(slot.index),
    SKYPILOT_NUM_JOBS: String(count),
    JOBDECK_ARRAY_INDEX: String(slot.index),
    JOBDECK_ARRAY_COUNT: String(count),
  };
  for (const [k, v] of slot.values) out[k] = v;
  return out;
}

/** A job's name in its group: `base[lr=1e-3 seed=1]`, or `base[3]` without parameters (or when that would pass `max` characters). */
export function slotName(base: string, slot: ArraySlot, max = 128): string {
  const withValues = `${base}[${slot.values.map(([k, v]) => `${k}=${v}`).join(' ')}]`;
  if (slot.values.length && withValues.length <= max) return withValues;
  const plain = `${base}[${slot.index}]`;
  return plain.length <= max ? plain : `${base.slice(0, max - plain.length + base.length)}[${slot.index}]`;
}

/**
 * Parses the CLI's `--param NAME=v1,v2,…` (values split on commas; none may be empty).
 * @throws Error saying what is wrong with it.
 */
export function parseParamFlag(flag: string): [string, string[]] {
  const eq = flag.indexOf('=');
  if (eq <= 0) throw new Error(`--param ${flag}: expected NAME=v1,v2,…`);
  const name = flag.slice(0, eq);
  if (!PARAM_NAME.test(name)) throw new Error(`--param ${flag}: ${JSON.stringify(name)} is not a parameter name (letters, digits and _, not starting with a digit)`);
  const values = flag.slice(eq + 1).split(',');
  if (values.some((v) => v === '')) throw new Error(`--param ${flag}: a value is empty`);
  if (values.some((v) => v.length > ARRAY_LIMITS.maxValueLength)) throw new Error(`--param ${flag}: a value is longer than ${ARRAY_LIMITS.maxValueLength} characters`);
  return [name, values];
}
