/**
 * The group API's operations (docs/design.md §17 "Groups"): list, show, cancel, re-run the failed
 * slots, delete — lib/control/groups.ts's verbs with their domain outcomes as HTTP answers, each
 * change recorded in the audit log.
 */
import { cancelGroup, deleteGroup, ForbiddenGroupError, GroupLiveError, GroupNotFoundError, PendingQuotaError, rerunFailedInGroup, type DeleteOptions } from '../control';
import type { SubmitOrigin } from '../jobs/origin';
import type { Actor } from '../jobs/roles';
import { SpecError } from '../jobs/spec';
import { listGroupRows, type Store } from '../store';
import { record } from './audit';
import { ApiError, conflict, forbidden, notFound } from './errors';
import { groupDetail, groupSummaries } from './group-views';
import { specProblem } from './jobs';
import type { CancelResult, GroupDetail, GroupSummary } from './types';

/** A group verb's error as its HTTP answer. */
function problemOf(err: unknown): unknown {
  if (err instanceof GroupNotFoundError) return notFound(err.message);
  if (err instanceof ForbiddenGroupError) return forbidden(err.message, { groupId: err.groupId });
  if (err instanceof GroupLiveError) return conflict(err.message, { groupId: err.groupId, live: err.live });
  if (err instanceof SpecError) return specProblem(err.issues);
  if (err instanceof PendingQuotaError) return new ApiError(429, 'Too Many Requests', err.message, { pending: err.pending, maxPendingJobs: err.maxPendingJobs });
  return err;
}

/** GET /api/groups: newest first, a page of `limit` before the id `before`; `mine`: the caller's. */
export async function listGroups(store: Store, o: { limit: number; before?: number; mine: boolean }, actor?: Actor): Promise<{ groups: GroupSummary[]; next: number | null }> {
  const rows = await listGroupRows(store, { take: o.limit + 1, before: o.before, userId: o.mine && actor ? actor.userId : undefined });
  const page = rows.slice(0, o.limit);
  return { groups: await groupSummaries(store, page.map((r) => r.id)), next: rows.length > o.limit ? page[page.length - 1].id : null };
}

/** GET /api/groups/:id. @throws ApiError 404 */
export async function getGroup(store: Store, id: number): Promise<GroupDetail> {
  const g = await groupDetail(store, id);
  if (!g) throw notFound(`group ${id} not found`);
  return g;
}

/** POST /api/groups/:id/cancel: every live job of it. @throws ApiError 404, 403 */
export async function cancelGroupJobs(store: Store, id: number, actor?: Actor): Promise<CancelResult> {
  try {
    const r = await cancelGroup(store, id, actor);
    await record(store, actor ?? null, 'group.cancel', `group:${id}`, { jobs: r.cancelled.length + r.cancelling.length });
    return r;
  } catch (err) {
    throw problemOf(err);
  }
}

/** POST /api/groups/:id/rerun-failed: a new job in each slot that ended without succeeding. @throws ApiError 404, 403, 400, 429 */
export async function rerunFailed(store: Store, id: number, origin: SubmitOrigin, actor?: Actor): Promise<{ rerun: Array<{ index: number; from: number; jobId: number }> }> {
  try {
    const rerun = await rerunFailedInGroup(store, id, origin, actor);
    await record(store, actor ?? null, 'group.rerun', `group:${id}`, { jobs: rerun.length, ids: rerun.map((r) => r.jobId).slice(0, 100) });
    return { rerun };
  } catch (err) {
    throw problemOf(err);
  }
}

/** DELETE /api/groups/:id: the group and all its jobs, once none is live. @throws ApiError 404, 403, 409 */
export async function removeGroup(store: Store, id: number, opts: DeleteOptions, actor?: Actor): Promise<{ deleted: number[] }> {
  try {
    const deleted = await deleteGroup(store, id, opts, actor);
    await record(store, actor ?? null, 'group.delete', `group:${id}`, { jobs: deleted.length });
    return { deleted };
  } catch (err) {
    throw problemOf(err);
  }
}
