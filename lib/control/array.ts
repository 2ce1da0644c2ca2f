/**
 * Arrays and sweeps (docs/spec.md "array", docs/design.md §17 "Groups"): a spec with `array`
 * (or a submit with `numJobs` / `params`) becomes one job per slot — each an ordinary job with
 * its rank's and its parameters' envs and its own name — written as one group.
 */
import { ArraySchema, arrayProblem, arraySize, arraySlots, issueAt, paramText, slotEnvs, slotName, SpecError, specHash, type PipelineSpec, type SpecArray, type SpecIssue } from '../jobs/spec';

/** An array given with a submit (the API's `numJobs` / `params`, the CLI's `--num-jobs` / `--param`); wins over the spec's `array`. */
export interface ArrayInput {
  numJobs?: number;
  /** Parameter → its values, in the order given. */
  params?: Record<string, Array<string | number | boolean>>;
}

/**
 * The array of a submit: the input's (checked like the spec key, issues at `overrides.array`),
 * else the spec's; null for a single job.
 * @throws SpecError when the input's is malformed or too big.
 */
export function arrayOf(spec: PipelineSpec, input: ArrayInput | undefined, file: string): SpecArray | null {
  if (!input || (input.numJobs === undefined && input.params === undefined)) return spec.array ?? null;
  const parsed = ArraySchema.safeParse({ num_jobs: input.numJobs, params: input.params });
  if (!parsed.success) {
    const issues: SpecIssue[] = parsed.error.issues.map((i) => issueAt(file, null, ['overrides.array', ...i.path.map(String)].join('.'), i.message));
    throw new SpecError(issues);
  }
  const a: SpecArray = { numJobs: parsed.data.num_jobs ?? 1, params: Object.entries(parsed.data.params ?? {}).map(([k, vs]) => [k, vs.map(paramText)]) };
  const p = arrayProblem(a);
  if (p) throw new SpecError([issueAt(file, null, 'overrides.array', p)]);
  return a;
}

/** One job of an array: its spec (the slot's envs in every task, its name; no `array`), hash and the envs a re-run passes again. */
export interface MemberSpec {
  index: number;
  spec: PipelineSpec;
  hash: string;
  /** The slot's envs (SKYPILOT_JOB_RANK…, the parameters), as launch overrides keep them. */
  envs: Record<string, string>;
}

/** The array's jobs in rank order (lib/jobs/spec/flow.ts arraySlots, slotEnvs, slotName). */
export function memberSpecs(spec: PipelineSpec, array: SpecArray): MemberSpec[] {
  const count = arraySize(array);
  const { array: _array, ...base } = spec;
  return arraySlots(array).map((slot) => {
    const envs = slotEnvs(slot, count);
    const member: PipelineSpec = { ...withSlotEnvs(base, envs), name: slotName(spec.name, slot) };
    return { index: slot.index, spec: member, hash: specHash(member), envs };
  });
}

/** The spec of a job re-run in its group's slot: its stored spec's `array` dropped (the slot's envs come with its launch overrides). */
export function withoutArray(spec: PipelineSpec): PipelineSpec {
  const { array: _array, ...rest } = spec;
  return rest;
}

/** The spec with a slot's envs in every task (they win over the spec's, as at the group's submit). */
export function withSlotEnvs(spec: PipelineSpec, envs: Record<string, string>): PipelineSpec {
  if (!Object.keys(envs).length) return spec;
  return { ...spec, tasks: spec.tasks.map((t) => ({ ...t, envs: { ...t.envs, ...envs } })) };
}
