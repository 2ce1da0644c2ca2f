/**
 * The cancel verb (Ray's stop_job): a batch of ids, answered per id, written only through the
 * store's guarded writes. Cancel and delete (delete.ts) are different verbs, as in Ray's job API.
 *
 * The monitor needs no call from here: the store's bus announces every status write, and the
 * monitor kicks a job whose event goes to CANCELLING (a PENDING job's cancel ends it at once).
 */
import { logger } from '../log';
import { JOB_STATUSES, type JobStatus } from '../jobs/status';
import type { Actor } from '../jobs/roles';
import { jobStatuses, recordCancelRequest, transitionJobsWhere, type Store } from '../store';
import { splitByOwnership } from './ownership';

/** What requestCancel() did, per id (each id appears in exactly one list, ids ascending). */
export interface CancelOutcome {
  /** Were PENDING: now CANCELLED with all their tasks (never started). */
  cancelled: number[];
  /** Were running: now CANCELLING; the monitor stops the process group, then CANCELLED. */
  cancelling: number[];
  /** Already terminal: nothing written (the API answers an error that says so). */
  alreadyTerminal: { id: number; status: string }[];
  notFound: number[];
  /** Another user's jobs the actor may not cancel (nothing written); present only when some were named. */
  forbidden?: number[];
}

/**
 * What a cancel does to a job in each status: `now` — CANCELLED at once (nothing ever started);
 * `request` — CANCELLING, the monitor stops it; `underway` — already CANCELLING, nothing
 * written; `ended` — terminal, nothing written. A Record over JobStatus: tsc names it for a new status.
 */
const CANCEL_OF: { readonly [S in JobStatus]: 'now' | 'request' | 'underway' | 'ended' } = {
  PENDING: 'now',
  STARTING: 'request',
  RUNNING: 'request',
  RECOVERING: 'request',
  CANCELLING: 'underway',
  SUCCEEDED: 'ended',
  CANCELLED: 'ended',
  FAILED: 'ended',
  FAILED_SETUP: 'ended',
  FAILED_PRECHECKS: 'ended',
  FAILED_NO_RESOURCE: 'ended',
  FAILED_CONTROLLER: 'ended',
};

/** The statuses a cancel moves to CANCELLING (one guarded set write per status). */
const RUNNING_STATES: readonly JobStatus[] = JOB_STATUSES.filter((s) => CANCEL_OF[s] === 'request');

/** Rounds of read-then-write before a job that keeps changing status gets a durable request only. */
const CANCEL_ROUNDS = 5;

/** Sorts each list of a CancelOutcome (ids ascending). */
function sorted(out: CancelOutcome): CancelOutcome {
  out.cancelled.sort((a, b) => a - b);
  out.cancelling.sort((a, b) => a - b);
  out.alreadyTerminal.sort((a, b) => a.id - b.id);
  out.notFound.sort((a, b) => a - b);
  return out;
}

/**
 * Cancels jobs, in one batch:
 * - PENDING → CANCELLED at once, the job and all its tasks in one guarded set write per chunk
 *   (no process was ever started);
 * - STARTING / RUNNING / RECOVERING → CANCELLING with cancelRequestedAt set (guarded set write per
 *   status); the monitor hears the write on the store's bus, sends SIGTERM to the process group
 *   and SIGKILL after JOBDECK_CANCEL_GRACE_MS, then writes CANCELLED. The request is durable: a
 *   monitor started after a crash honours it;
 * - CANCELLING already → reported as `cancelling` (idempotent, nothing written);
 * - terminal → `alreadyTerminal` with its status; unknown id → `notFound`.
 * A job whose status changed between the read and the write (lost race) is read again and
 * handled by its fresh status (a few rounds). Cost: two reads plus one write per status group and
 * chunk of 1000 ids — hundreds of ids in well under a second.
 * With an `actor`, jobs it may not change (lib/control/ownership.ts) go to `forbidden` untouched.
 */
export async function requestCancel(store: Store, ids: number[], actor?: Actor): Promise<CancelOutcome> {
  const out: CancelOutcome = { cancelled: [], cancelling: [], alreadyTerminal: [], notFound: [] };
  const valid = [...new Set(ids)].filter((id) => Number.isInteger(id) && id > 0);
  out.notFound.push(...[...new Set(ids)].filter((id) => !(Number.isInteger(id) && id > 0)));
  const split = await splitByOwnership(store, actor, valid);
  if (split.forbidden.length) out.forbidden = split.forbidden.sort((a, b) => a - b);
  let remaining = split.allowed;
  for (let round = 0; round < CANCEL_ROUNDS && remaining.length > 0; round++) {
    const found = await jobStatuses(store, remaining);
    const byStatus = new Map<JobStatus, number[]>();
    for (const id of remaining) {
      const status = found.get(id);
      if (status === undefined) out.notFound.push(id);
      else if (CANCEL_OF[status] === 'ended') out.alreadyTerminal.push({ id, status });
      else if (CANCEL_OF[status] === 'underway') out.cancelling.push(id);
      else byStatus.set(status, [...(byStatus.get(status) ?? []), id]);
    }
    const now = new Date();
    const retry: number[] = [];
    const pending = byStatus.get('PENDING') ?? [];
    if (pending.length > 0) {
      const r = await transitionJobsWhere(store, {
        ids: pending,
        from: 'PENDING',
        to: 'CANCELLED',
        reason: 'cancelled by request before it started',
        data: { cancelRequestedAt: now, endedAt: now },
        tasks: { from: 'PENDING', to: 'CANCELLED', reason: 'job cancelled before it started' },
      });
      out.cancelled.push(...r.applied);
      const applied = new Set(r.applied);
      retry.push(...pending.filter((id) => !applied.has(id)));
    }
    for (const from of RUNNING_STATES) {
      const group = byStatus.get(from) ?? [];
      if (group.length === 0) continue;
      const r = await transitionJobsWhere(store, { ids: group, from, to: 'CANCELLING', reason: 'cancel requested', data: { cancelRequestedAt: now } });
      out.cancelling.push(...r.applied);
      const applied = new Set(r.applied);
      retry.push(...group.filter((id) => !applied.has(id)));
    }
    remaining = retry;
  }
  if (remaining.length > 0) {
    // Still racing after several rounds (a job changing status constantly, so its monitor is
    // stepping it): record the request durably without a status write; the monitor honours
    // cancelRequestedAt on the job's next step.
    await recordCancelRequest(store, remaining);
    out.cancelling.push(...remaining);
  }
  if (out.cancelled.length + out.cancelling.length > 0) {
    logger().info({ cancelled: out.cancelled.length, cancelling: out.cancelling.length }, `cancel: ${out.cancelled.length} cancelled, ${out.cancelling.length} cancelling`);
  }
  return sorted(out);
}
