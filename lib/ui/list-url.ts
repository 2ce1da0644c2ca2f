/**
 * The jobs list's state in the page URL, so that a filtered, searched, paged list can be shared
 * and survives a reload: `?status=failed&q=train&cursor=C1&cursor=C2`. `status` is a filter
 * group (STATUS_GROUPS), `q` the search, and each `cursor` one "Older →" step from the newest
 * page (the API's opaque keyset cursors, in order, so "← Newer" can step back). Pure, browser-safe.
 */

/** The status filter chips: each maps to the statuses it shows. */
export const STATUS_GROUPS = [
  { id: 'all', label: 'All', statuses: [] as string[] },
  { id: 'active', label: 'Active', statuses: ['PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING'] },
  { id: 'succeeded', label: 'Succeeded', statuses: ['SUCCEEDED'] },
  { id: 'failed', label: 'Failed', statuses: ['FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER'] },
  { id: 'cancelled', label: 'Cancelled', statuses: ['CANCELLED'] },
] as const;

/** A filter group id (`all`, `active`…). */
export type GroupId = (typeof STATUS_GROUPS)[number]['id'];

/** What the list shows. */
export interface ListUrlState {
  group: GroupId;
  q: string;
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
  const cursors = p
    .getAll('cursor')
    .filter((c) => c.length > 0 && c.length <= 500)
    .slice(0, MAX_STEPS);
  return { group, q, cursors };
}

/** The query string for a state (`?…`, or '' for the default view), defaults left out. */
export function listUrlQuery(s: ListUrlState): string {
  const p = new URLSearchParams();
  if (s.group !== 'all') p.set('status', s.group);
  if (s.q) p.set('q', s.q);
  for (const c of s.cursors) p.append('cursor', c);
  const out = p.toString();
  return out ? `?${out}` : '';
}

/** The statuses a group shows (empty: every status). */
export function groupStatuses(group: GroupId): string[] {
  return [...(STATUS_GROUPS.find((g) => g.id === group)?.statuses ?? [])];
}
