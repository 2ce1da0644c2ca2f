/**
 * The highest priority a member may give a job (docs/design.md §15 "Quotas"): with strict
 * priority admission (§6) a member who may pick 1000 goes ahead of everyone, so in a team the
 * operator caps it — for every queue (`JOBDECK_QUOTA_MEMBER_MAX_PRIORITY`, read with the role
 * quotas: lib/jobs/quotas.ts) and per queue (Queue.memberMaxPriority). The lower of the two
 * applies. Admins are not capped (they may lift a job above the cap); viewers submit nothing.
 * Enforced on what a member asks for — a submit's `priority` (the spec's or the request's), a
 * re-run's, a change of a waiting job's — not on a queue's default priority, which is the
 * operator's. Pure.
 */
import type { Role } from './roles';

/** The variable of the members' cap over every queue. */
export const MEMBER_MAX_PRIORITY_VARIABLE = 'JOBDECK_QUOTA_MEMBER_MAX_PRIORITY' as const;

/** A cap that applies: its value and what set it (the role's, or the queue's when it is the lower). */
export interface PriorityCap {
  value: number;
  /** `role`: the server's cap for members; `queue`: the queue's own, lower. */
  source: 'role' | 'queue';
  /** The queue whose cap it is (source `queue`). */
  queue?: string;
}

/**
 * The cap on the priority `role` may give a job of queue `queue`: the lower of `roleCap` (the
 * server's cap for the role; null: none) and the queue's `memberMaxPriority` (null: none); null
 * when neither applies — always for admins.
 */
export function priorityCap(role: Role, roleCap: number | null, queue: { name: string; memberMaxPriority: number | null } | null): PriorityCap | null {
  if (role === 'admin') return null;
  const q = queue?.memberMaxPriority ?? null;
  if (q !== null && (roleCap === null || q < roleCap)) return { value: q, source: 'queue', queue: queue!.name };
  return roleCap === null ? null : { value: roleCap, source: 'role' };
}

/**
 * Why `priority` may not be given under `cap` ("priority 1000 is above the member cap 600 (queue
 * gpu)"), or null when it may.
 */
export function priorityCapProblem(priority: number, cap: PriorityCap | null, role: Role = 'member'): string | null {
  if (!cap || priority <= cap.value) return null;
  const where = cap.source === 'queue' ? `queue ${cap.queue}` : MEMBER_MAX_PRIORITY_VARIABLE;
  return `priority ${priority} is above the ${role} cap ${cap.value} (${where}): ask an admin for more`;
}
