/**
 * The jobs list's state in the page URL, so that a filtered, searched, paged list can be shared
 * and survives a reload: `?status=failed&q=train&queue=gpu&sort=name&cursor=C1&cursor=C2`.
 * `status` is a filter group (STATUS_GROUPS), `q` the search, `queue` one operator queue's jobs, `sort` the order (LIST_SORT_OPTIONS; newest first
 * when absent), and each `cursor` one "Next →" step from the first page (the API's opaque keyset
 * cursors, in order, so "← Previous" can step back). Pure, browser-safe.
 */

import { JOB_FAILED, JOB_STATUSES, STATUS_OUTCOME, type JobStatus, type Outcome } from '../jobs/status';

/** The job statuses of one outcome (lib/jobs/status.ts STATUS_OUTCOME), in JOB_STATUSES order. */
const ofOutcome = (o: Outcome): readonly JobStatus[] => JOB_STATUSES.filter((s) => STATUS_OUTCOME[s] === o);

/**
 * The status filter chips: each maps to the statuses it shows — every status of its outcome
 * (`failed` is JOB_FAILED), so a new status joins its chip by the outcome it is given there.
 */
export const STATUS_GROUPS = [
  { id: 'all', label: 'All', statuses: [] as readonly JobStatus[] },
  { id: 'active', label: 'Active', statuses: ofOutcome('live') },
  { id: 'succeeded', label: 'Succeeded', statuses: ofOutcome('succeeded') },
  { id: 'failed', label: 'Failed', statuses: [...JOB_FAILED] },
  { id: 'cancelled', label: 'Cancelled', statuses: ofOutcome('cancelled') },
] as const;

/** The orders the list offers (GET /api/jobs `sort`); the first is the default. */
export const LIST_SORT_OPTIONS = [
  { id: 'newest', label: 'Newest first' },
  { id: 'oldest', label: 'Oldest first' },
  { id: 'name', label: 'Name (A→Z)' },
] as const;

/** A sort id. */
export type SortId = (typeof LIST_SORT_OPTIONS)[number]['id'];

/** A filter group id (`all`, `active`…). */
export type GroupId = (typeof STATUS_GROUPS)[number]['id'];

/** What the list shows. */
export interface ListUrlState {
  group: GroupId;
  q: string;
  /** Only this operator queue's jobs ('' for every queue). */
  queue: string;
  /** Whose jobs: 'me', 'all', or '' for the caller's default (a member's own, everyone's for others). */
  owner: '' | 'me' | 'all';
  sort: SortId;
  /** The cursors of the "Older →" steps taken from the newest page; empty on the first page. */
  cursors: string[];
}

/** Longest search kept from a URL (the API bounds it too). */
const MAX_Q = 200;
/** Most paging steps kept from a URL. */
const MAX_STEPS = 100;

/** Reads the state from a query string (unknown or malformed values fall back to the defaults). */
export function parseListUrl(search: string | URLSearchParams): ListUrlState {
  const p = typeof search === 'string' ? new URLSearchParams(search) : search;
  const raw = p.get('status');
  const group = (STATUS_GROUPS.find((g) => g.id === raw)?.id ?? 'all') as GroupId;
  const q = (p.get('q') ?? '').slice(0, MAX_Q);
  // The queue name rule (lib/jobs/spec QUEUE_NAME); anything else is no filter.
  const rawQueue = p.get('queue') ?? '';
  const queue = /^[a-z0-9][a-z0-9_-]{0,62}$/.test(rawQueue) ? rawQueue : '';
  const rawOwner = p.get('owner');
  const owner = rawOwner === 'me' || rawOwner === 'all' ? rawOwner : '';
  const sort = (LIST_SORT_OPTIONS.find((o) => o.id === p.get('sort'))?.id ?? 'newest') as SortId;
  const cursors = p
    .getAll('cursor')
    .filter((c) => c.length > 0 && c.length <= 500)
    .slice(0, MAX_STEPS);
  return { group, q, queue, owner, sort, cursors };
}

/** The query string for a state (`?…`, or '' for the default view), defaults left out. */
export function listUrlQuery(s: ListUrlState): string {
  const p = new URLSearchParams();
  if (s.group !== 'all') p.set('status', s.group);
  if (s.q) p.set('q', s.q);
  if (s.queue) p.set('queue', s.queue);
  if (s.owner) p.set('owner', s.owner);
  if (s.sort !== 'newest') p.set('sort', s.sort);
  for (const c of s.cursors) p.append('cursor', c);
  const out = p.toString();
  return out ? `?${out}` : '';
}

/** The statuses a group shows (empty: every status). */
export function groupStatuses(group: GroupId): JobStatus[] {
  return [...(STATUS_GROUPS.find((g) => g.id === group)?.statuses ?? [])];
}

/** A group's count from GET /api/jobs/counts (the sum of its statuses; `all` is the total). */
export function groupCount(group: GroupId, counts: { total: number; byStatus: Partial<Record<string, number>> }): number {
  if (group === 'all') return counts.total;
  return groupStatuses(group).reduce((n, s) => n + (counts.byStatus[s] ?? 0), 0);
}
