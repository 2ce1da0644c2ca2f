/**
 * Who may change which job (docs/design.md §15): the one check of the verbs that change a job
 * (cancel, delete, re-run, priority), with lib/jobs/roles.ts mayChangeJob as the rule. A verb
 * called without an actor (the monitor, tests, tools in the server's own process) is not limited.
 */
import { mayChangeJob, type Actor } from '../jobs/roles';
import { jobSubmitters, type StoreScope } from '../store';

/** The actor may not change this job (a member and another's job, or a viewer). */
export class ForbiddenJobError extends Error {
  constructor(
    readonly jobId: number,
    readonly role: Actor['role'],
  ) {
    super(role === 'viewer' ? `job ${jobId}: a viewer cannot change jobs` : `job ${jobId} was submitted by another user: a member changes only its own jobs`);
    this.name = 'ForbiddenJobError';
  }
}

/**
 * Splits `ids` into those `actor` may change and those it may not. Ids of jobs that do not
 * exist count as allowed (the verb answers "not found" for them). Without an actor, all allowed.
 */
export async function splitByOwnership(store: StoreScope, actor: Actor | undefined, ids: readonly number[]): Promise<{ allowed: number[]; forbidden: number[] }> {
  if (!actor || actor.role === 'admin') return { allowed: [...ids], forbidden: [] };
  const owners = await jobSubmitters(store, ids);
  const allowed: number[] = [];
  const forbidden: number[] = [];
  for (const id of ids) {
    if (!owners.has(id) || mayChangeJob(actor, owners.get(id) ?? null)) allowed.push(id);
    else forbidden.push(id);
  }
  return { allowed, forbidden };
}

/**
 * @throws ForbiddenJobError when `actor` may not change job `id` (a job that does not exist
 *   passes: the verb answers "not found").
 */
export async function assertMayChange(store: StoreScope, actor: Actor | undefined, id: number): Promise<void> {
  const { forbidden } = await splitByOwnership(store, actor, [id]);
  if (forbidden.length) throw new ForbiddenJobError(id, actor!.role);
}
