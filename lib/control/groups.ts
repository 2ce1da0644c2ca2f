/**
 * The verbs of a group (docs/design.md §17 "Groups"): cancel every live job of it, re-run its
 * slots that failed, delete it. Each acts through the job verbs (requestCancel, rerunJob,
 * deleteJobs), so a group's jobs keep every rule of a job; who may act is the group's submitter
 * (or an admin), by lib/jobs/roles.ts mayChangeJob.
 */
import type { SubmitOrigin } from '../jobs/origin';
import { mayChangeJob, type Actor } from '../jobs/roles';
import { isTerminal } from '../jobs/status';
import { deleteGroupRow, groupJobIds, groupRow, groupSlots, jobStatuses, type Store } from '../store';
import { requestCancel, type CancelOutcome } from './cancel';
import { deleteJobs, type DeleteOptions } from './delete';
import { rerunJob } from './rerun';

/** No group has this id. */
export class GroupNotFoundError extends Error {
  constructor(readonly groupId: number) {
    super(`group ${groupId} not found`);
    this.name = 'GroupNotFoundError';
  }
}

/** The actor may not change this group (a member and another's group, or a viewer). */
export class ForbiddenGroupError extends Error {
  constructor(readonly groupId: number) {
    super(`group ${groupId} was submitted by another user: a member changes only its own groups`);
    this.name = 'ForbiddenGroupError';
  }
}

/** A group with live jobs cannot be deleted. */
export class GroupLiveError extends Error {
  constructor(
    readonly groupId: number,
    readonly live: number,
  ) {
    super(`group ${groupId} has ${live} job${live === 1 ? '' : 's'} not finished: cancel the group first`);
    this.name = 'GroupLiveError';
  }
}

/** @throws GroupNotFoundError, ForbiddenGroupError */
async function mayChangeGroup(store: Store, groupId: number, actor: Actor | undefined): Promise<void> {
  const g = await groupRow(store, groupId);
  if (!g) throw new GroupNotFoundError(groupId);
  if (actor && !mayChangeJob(actor, g.userId)) throw new ForbiddenGroupError(groupId);
}

/**
 * Cancels every job of the group that is not terminal (every run of every slot): PENDING ones at
 * once, running ones through CANCELLING (lib/control/cancel.ts).
 * @throws GroupNotFoundError, ForbiddenGroupError
 */
export async function cancelGroup(store: Store, groupId: number, actor?: Actor): Promise<CancelOutcome> {
  await mayChangeGroup(store, groupId, actor);
  const ids = await groupJobIds(store, groupId);
  return requestCancel(store, ids);
}

/**
 * Re-runs each slot whose latest job ended without succeeding (FAILED_*, CANCELLED): a new job in
 * that slot, with its slot's envs (lib/control/rerun.ts). Slots still live or SUCCEEDED are left.
 * @returns the new jobs' ids by slot.
 * @throws GroupNotFoundError, ForbiddenGroupError; SpecError / PendingQuotaError as a re-run
 *   does (the slots before it were re-run).
 */
export async function rerunFailedInGroup(store: Store, groupId: number, origin: SubmitOrigin, actor?: Actor): Promise<Array<{ index: number; from: number; jobId: number }>> {
  await mayChangeGroup(store, groupId, actor);
  const failed = (await groupSlots(store, groupId)).filter((s) => isTerminal('job', s.status) && s.status !== 'SUCCEEDED');
  const out: Array<{ index: number; from: number; jobId: number }> = [];
  for (const s of failed) {
    const r = await rerunJob(store, s.jobId, origin, actor);
    out.push({ index: s.index, from: s.jobId, jobId: r.result.id });
  }
  return out;
}

/**
 * Deletes the group and every job of it (rows, folders, leftovers: lib/control/delete.ts).
 * @returns the jobs deleted.
 * @throws GroupNotFoundError, ForbiddenGroupError; GroupLiveError while a job of it is live
 *   (nothing deleted).
 */
export async function deleteGroup(store: Store, groupId: number, opts: DeleteOptions, actor?: Actor): Promise<number[]> {
  await mayChangeGroup(store, groupId, actor);
  const ids = await groupJobIds(store, groupId);
  const live = [...(await jobStatuses(store, ids)).values()].filter((s) => !isTerminal('job', s)).length;
  if (live) throw new GroupLiveError(groupId, live);
  const { deleted, refused } = await deleteJobs(store, ids, opts);
  // The row goes once no job of it is left (terminal jobs stay terminal; one deleted meanwhile is fine).
  if (refused.filter((r) => r.status !== null).length === 0) await deleteGroupRow(store, groupId);
  return deleted;
}
