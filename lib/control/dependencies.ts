/**
 * A submit's `depends_on` (docs/spec.md "depends_on", docs/design.md §18): what each entry names,
 * checked at submit — an unknown job, a job the entry cannot wait for, or the job itself is
 * refused with the entry's file:line; the rest become the job's edges and tell whether it waits.
 *
 * Cycles: every edge points from the job being submitted to jobs that exist before it, so the
 * edges of all jobs form a graph ordered by id and no cycle can close through later submits. The
 * one cycle a spec can write is a job (or an array) naming its own name — refused here.
 */
import { decideDependencies, type DependencyState } from '../jobs/dependencies';
import { issueAt, SpecError, type SpecDependsOn, type SpecIssue } from '../jobs/spec';
import { isTerminal } from '../jobs/status';
import { dependencyTargets, type DependencyTarget } from '../store';
import type { StoreScope } from '../store';

/** What a resolved `depends_on` gives the new job. */
export interface ResolvedDependencies {
  edges: Array<{ onJobId: number; after: string }>;
  /** True while some edge is not met (Job.depsWaiting). */
  waiting: boolean;
  /** Its pending reason while it waits ("waits for job 41 to succeed"); null otherwise. */
  reason: string | null;
}

/** The place an entry's issue names: its file:line when the spec was YAML, else the key path. */
function entryIssue(at: Omit<SpecIssue, 'message'> | undefined, file: string, index: number, message: string): SpecIssue {
  return at ? { ...at, message } : issueAt(file, null, `depends_on.jobs[${index}]`, message);
}

/**
 * Resolves `dependsOn` for a job named `ownName` (an array: its group's name) submitted by
 * `userId` (undefined: no submitter — names resolve among every job). A name is the most recent
 * job of the submitter with exactly that name, else the most recent group of its with that name
 * (standing for the latest job of each of its slots); an id is any job.
 * @throws SpecError listing every entry that names nothing, names the job itself, or names a job
 *   that already ended in a way its mode can never accept (Slurm keeps such a job as
 *   DependencyNeverSatisfied; jobdeck refuses it at once).
 */
export async function resolveDependencies(store: StoreScope, deps: SpecDependsOn, ownName: string, userId: number | undefined, refsAt: ReadonlyArray<Omit<SpecIssue, 'message'>> = [], file = 'job.yaml'): Promise<ResolvedDependencies> {
  const ids = deps.jobs.filter((j): j is number => typeof j === 'number');
  const names = deps.jobs.filter((j): j is string => typeof j === 'string' && !/^[1-9][0-9]*$/.test(j));
  const numeric = deps.jobs.filter((j): j is string => typeof j === 'string' && /^[1-9][0-9]*$/.test(j)).map(Number);
  const { byId, byName } = await dependencyTargets(store, [...ids, ...numeric], names.filter((n) => n !== ownName), userId);
  const issues: SpecIssue[] = [];
  const targets = new Map<number, DependencyTarget>();
  deps.jobs.forEach((ref, i) => {
    const asId = typeof ref === 'number' ? ref : /^[1-9][0-9]*$/.test(ref) ? Number(ref) : null;
    if (asId !== null) {
      const t = byId.get(asId);
      if (!t) issues.push(entryIssue(refsAt[i], file, i, `job ${asId} does not exist`));
      else targets.set(t.id, t);
      return;
    }
    const name = ref as string;
    if (name === ownName) {
      issues.push(entryIssue(refsAt[i], file, i, `a dependency cycle: "${name}" is this job's own name, so it would wait for itself; name an earlier run by its id`));
      return;
    }
    const hit = byName.get(name);
    if (!hit) issues.push(entryIssue(refsAt[i], file, i, `no job or group named "${name}"${userId !== undefined ? ' was submitted by you' : ''}; name it by its id, or check the name`));
    else for (const t of hit.kind === 'job' ? [hit.job] : hit.jobs) targets.set(t.id, t);
  });
  if (issues.length) throw new SpecError(issues);
  const states: DependencyState[] = [...targets.values()].map((t) => ({ onJobId: t.id, after: deps.after, status: t.status }));
  const verdict = decideDependencies(states);
  if (verdict.kind === 'never') {
    const bad = states.find((s) => isTerminal('job', s.status ?? '') && verdict.reason.startsWith(`job ${s.onJobId} `));
    const i = deps.jobs.findIndex((r) => (typeof r === 'number' ? r : Number(r)) === bad?.onJobId || (typeof r === 'string' && byName.get(r)?.kind === 'job' && (byName.get(r) as { job: DependencyTarget }).job.id === bad?.onJobId));
    throw new SpecError([entryIssue(refsAt[Math.max(i, 0)], file, Math.max(i, 0), `${verdict.reason.replace('this job waited', 'this job would wait')}: it can never start`)]);
  }
  return {
    edges: states.map((s) => ({ onJobId: s.onJobId, after: s.after })),
    waiting: verdict.kind === 'wait',
    reason: verdict.kind === 'wait' ? verdict.reason : null,
  };
}
