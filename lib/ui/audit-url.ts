/**
 * The Audit page, pure. Its filters in the page URL, so a filtered page of the log can be shared and
 * survives a reload: `?action=user.create&user=3&since=…&until=…&before=120&before=70`. `action`
 * is one audited action, `user` the id of the user who acted, `since`/`until` ISO times (the
 * API's half-open range [since, until)), and each `before` one "Older →" step from the newest
 * page (the API's `next` values, in order, so "← Newer" can step back) — like lib/ui/list-url.ts
 * for the jobs list. And a row's detail in a line. Browser-safe.
 */

/** The audited actions GET /api/audit filters by (one list: lib/jobs/audit-actions.ts). */
export { AUDIT_ACTIONS } from '../jobs/audit-actions';
import { AUDIT_ACTIONS } from '../jobs/audit-actions';

/** Rows per page of the Audit page (the API allows 1–500). */
export const AUDIT_PAGE_SIZE = 50;

/** What the Audit page shows. */
export interface AuditUrlState {
  /** One of AUDIT_ACTIONS, or '' for every action. */
  action: string;
  /** The acting user's id, or null for everyone. */
  userId: number | null;
  /** ISO time: rows at or after it ('' for no bound). */
  since: string;
  /** ISO time: rows before it ('' for no bound). */
  until: string;
  /** The `before` ids of the "Older →" steps taken from the newest page; empty on the first page. */
  befores: number[];
}

/** Most paging steps kept from a URL. */
const MAX_STEPS = 100;
const MAX_ID = 2_147_483_647;

/** A positive 32-bit id from text, else null. */
function idOf(raw: string | null): number | null {
  if (!raw || !/^[1-9][0-9]{0,9}$/.test(raw)) return null;
  const n = Number(raw);
  return n <= MAX_ID ? n : null;
}

/** An ISO time the API takes (an offset or Z), normalised to UTC; '' when absent or malformed. */
function isoOf(raw: string | null): string {
  if (!raw || raw.length > 40 || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(raw)) return '';
  const t = Date.parse(raw);
  return Number.isFinite(t) ? new Date(t).toISOString() : '';
}

/** Reads the state from a query string (unknown or malformed values fall back to no filter). */
export function parseAuditUrl(search: string | URLSearchParams): AuditUrlState {
  const p = typeof search === 'string' ? new URLSearchParams(search) : search;
  const rawAction = p.get('action') ?? '';
  const action = (AUDIT_ACTIONS as readonly string[]).includes(rawAction) ? rawAction : '';
  const befores = p
    .getAll('before')
    .map(idOf)
    .filter((n): n is number => n !== null)
    .slice(0, MAX_STEPS);
  return { action, userId: idOf(p.get('user')), since: isoOf(p.get('since')), until: isoOf(p.get('until')), befores };
}

/** The page's query string for a state (`?…`, or '' for the unfiltered newest page). */
export function auditUrlQuery(s: AuditUrlState): string {
  const p = new URLSearchParams();
  if (s.action) p.set('action', s.action);
  if (s.userId !== null) p.set('user', String(s.userId));
  if (s.since) p.set('since', s.since);
  if (s.until) p.set('until', s.until);
  for (const b of s.befores) p.append('before', String(b));
  const out = p.toString();
  return out ? `?${out}` : '';
}

/** The query string of GET /api/audit for a state: its filters, the last step's `before`, the page size. */
export function auditApiQuery(s: AuditUrlState, limit = AUDIT_PAGE_SIZE): string {
  const p = new URLSearchParams();
  if (s.action) p.set('action', s.action);
  if (s.userId !== null) p.set('userId', String(s.userId));
  if (s.since) p.set('since', s.since);
  if (s.until) p.set('until', s.until);
  if (s.befores.length) p.set('before', String(s.befores[s.befores.length - 1]));
  p.set('limit', String(limit));
  return p.toString();
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO time as a `<input type="datetime-local">` value in the browser's zone (`2025-01-31T14:03`); '' for ''. */
export function toLocalInput(iso: string): string {
  const t = Date.parse(iso);
  if (!iso || !Number.isFinite(t)) return '';
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `<input type="datetime-local">` value (the browser's zone) as an ISO time in UTC; '' when empty or invalid. */
export function fromLocalInput(local: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(local)) return '';
  const t = new Date(local).getTime();
  return Number.isFinite(t) ? new Date(t).toISOString() : '';
}

/** Longest detail text a row shows (the whole detail is its tooltip). */
const DETAIL_MAX = 160;

/**
 * An audit row's `detail` in a line: `key=value` pairs of an object (strings bare, others as
 * JSON), else the JSON; '' for none; cut at DETAIL_MAX characters with "…".
 */
export function auditDetailText(detail: unknown): string {
  if (detail === null || detail === undefined) return '';
  const text =
    typeof detail === 'object' && !Array.isArray(detail)
      ? Object.entries(detail as Record<string, unknown>)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')
      : JSON.stringify(detail);
  return text.length > DETAIL_MAX ? `${text.slice(0, DETAIL_MAX - 1)}…` : text;
}
