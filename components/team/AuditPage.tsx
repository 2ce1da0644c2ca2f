'use client';
/** The /audit page (admins; docs/design.md §15): the audit log, newest first, filtered by action. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiRequestError, teamApi } from '@/lib/ui/api';

const ACTIONS = ['job.submit', 'job.cancel', 'job.delete', 'job.rerun', 'job.priority', 'token.create', 'token.revoke', 'user.create', 'user.update', 'login', 'login.failed'];

export function AuditPage() {
  const [action, setAction] = useState('');
  const q = new URLSearchParams({ limit: '200', ...(action ? { action } : {}) }).toString();
  const rows = useQuery({ queryKey: ['audit', q], queryFn: ({ signal }) => teamApi.audit(q, signal), retry: false });
  const denied = rows.error instanceof ApiRequestError && rows.error.status === 403;
  return (
    <div className="webhooks-page">
      <h1>Audit log</h1>
      {denied ? (
        <p role="alert">Only admins can read the audit log.</p>
      ) : (
        <>
          <label>
            Action{' '}
            <select value={action} onChange={(e) => setAction(e.target.value)} data-testid="audit-action">
              <option value="">every action</option>
              {ACTIONS.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </label>
          <table className="table" data-testid="audit">
            <thead>
              <tr>
                <th>Time</th>
                <th>Action</th>
                <th>User</th>
                <th>Token</th>
                <th>IP</th>
                <th>Target</th>
              </tr>
            </thead>
            <tbody>
              {(rows.data?.events ?? []).map((r) => (
                <tr key={r.id}>
                  <td>{r.at}</td>
                  <td>{r.action}</td>
                  <td>{r.userName ?? '-'}</td>
                  <td>{r.tokenPrefix ? <code>{r.tokenPrefix}…</code> : '-'}</td>
                  <td>{r.ip ?? '-'}</td>
                  <td>{r.target ?? '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
