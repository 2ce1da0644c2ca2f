'use client';
/**
 * The /audit page (admins; docs/design.md §15): the audit log, newest first — when, what, who
 * (and the token prefix it came with), from which address, on what — filtered by action, by the
 * user who acted and by a time range, paged with the API's `before`; the filters and the page
 * are in the URL (lib/ui/audit-url.ts), so a view can be shared and survives a reload. A member
 * or viewer is told the log is an admin's.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { AuditRow, UserView } from '@/lib/api/types';
import { ApiRequestError, teamApi } from '@/lib/ui/api';
import { AUDIT_ACTIONS, auditApiQuery, auditDetailText, fromLocalInput, toLocalInput, type AuditUrlState } from '@/lib/ui/audit-url';
import { formatExact } from '@/lib/ui/format';
import { useUsers } from '@/lib/ui/team-hooks';
import { useAuditUrl } from './useAuditUrl';

/** The filter bar: action, user, from, until, and a reset when any is set. */
function AuditFilters({ state, users, onFilter, onClear }: { state: AuditUrlState; users: UserView[]; onFilter: (patch: Partial<Omit<AuditUrlState, 'befores'>>) => void; onClear: () => void }) {
  const filtered = state.action !== '' || state.userId !== null || state.since !== '' || state.until !== '';
  // A user id from the URL that the list does not hold (yet) stays selectable.
  const known = state.userId === null || users.some((u) => u.id === state.userId);
  return (
    <div className="team-filters" data-testid="audit-filters">
      <label className="field">
        <span className="field-label">Action</span>
        <select className="select" value={state.action} onChange={(e) => onFilter({ action: e.target.value })} data-testid="audit-action">
          <option value="">every action</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="field-label">User</span>
        <select className="select" value={state.userId === null ? '' : String(state.userId)} onChange={(e) => onFilter({ userId: e.target.value ? Number(e.target.value) : null })} data-testid="audit-user">
          <option value="">every user</option>
          {!known && <option value={String(state.userId)}>user #{state.userId}</option>}
          {users.map((u) => (
            <option key={u.id} value={String(u.id)}>
              {u.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="field-label">From</span>
        <input className="input" type="datetime-local" value={toLocalInput(state.since)} onChange={(e) => onFilter({ since: fromLocalInput(e.target.value) })} data-testid="audit-since" />
      </label>
      <label className="field">
        <span className="field-label">Until</span>
        <input className="input" type="datetime-local" value={toLocalInput(state.until)} onChange={(e) => onFilter({ until: fromLocalInput(e.target.value) })} data-testid="audit-until" />
      </label>
      {filtered && (
        <button type="button" className="btn btn-ghost" onClick={onClear} data-testid="audit-clear">
          Clear filters
        </button>
      )}
    </div>
  );
}

/** One row: when, what, who, the token prefix, from where, on what, and the detail. */
function AuditLine({ r }: { r: AuditRow }) {
  const detail = auditDetailText(r.detail);
  return (
    <tr data-audit-id={r.id} data-action={r.action}>
      <td className="team-when">
        <time dateTime={r.at} title={r.at}>
          {formatExact(r.at)}
        </time>
      </td>
      <td data-label="Action" data-testid="audit-row-action">{r.action}</td>
      <td data-label="User" data-testid="audit-row-user">
        <span>
          {r.userName ?? <span className="faint">—</span>}
          {r.userId !== null && <span className="faint"> #{r.userId}</span>}
        </span>
      </td>
      <td data-label="Token">{r.tokenPrefix ? <code>{r.tokenPrefix}…</code> : <span className="faint" title="No token: a session, or a login">—</span>}</td>
      <td data-label="From">{r.ip ?? <span className="faint">—</span>}</td>
      <td data-label="Target" data-testid="audit-row-target">{r.target ?? <span className="faint">—</span>}</td>
      <td className="team-detail" data-label="Detail" title={detail ? JSON.stringify(r.detail) : undefined}>
        {detail}
      </td>
    </tr>
  );
}

export function AuditPage() {
  const url = useAuditUrl();
  const { state } = url;
  const q = auditApiQuery(state);
  const rows = useQuery({ queryKey: ['audit', q], queryFn: ({ signal }) => teamApi.audit(q, signal), retry: false, placeholderData: keepPreviousData });
  const denied = rows.error instanceof ApiRequestError && rows.error.status === 403;
  // The user filter's names; asked for only once the log answered (an admin's page).
  const users = useUsers(rows.isSuccess);
  const events = rows.data?.events ?? [];
  const next = rows.data?.next ?? null;
  return (
    <div className="team-page">
      <div className="page-head">
        <h1>Audit log</h1>
      </div>
      {denied ? (
        <p className="alert alert-warning" role="alert">
          Only admins can read the audit log.
        </p>
      ) : (
        <>
          <AuditFilters state={state} users={users.data?.users ?? []} onFilter={url.filter} onClear={url.clear} />
          {rows.isError && <div className="alert alert-error">Could not read the audit log: {rows.error.message}</div>}
          <div className="card table-wrap">
            <table className="table team-table" data-testid="audit">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Action</th>
                  <th scope="col">User</th>
                  <th scope="col">Token</th>
                  <th scope="col">From</th>
                  <th scope="col">Target</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {events.map((r) => (
                  <AuditLine key={r.id} r={r} />
                ))}
                {rows.isSuccess && events.length === 0 && (
                  <tr>
                    <td colSpan={7} className="muted">
                      No audit rows {state.befores.length ? 'older than these' : 'match these filters'}.
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          <nav className="team-pager" aria-label="Audit pages">
            <button type="button" className="btn btn-sm" onClick={url.newer} disabled={state.befores.length === 0} data-testid="audit-newer">
              ← Newer
            </button>
            <span className="muted" data-testid="audit-page">
              page {state.befores.length + 1}
            </span>
            <button type="button" className="btn btn-sm" onClick={() => next !== null && url.older(next)} disabled={next === null || rows.isPlaceholderData} data-testid="audit-older">
              Older →
            </button>
          </nav>
        </>
      )}
    </div>
  );
}
