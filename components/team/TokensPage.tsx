'use client';
/**
 * The /tokens page (docs/design.md §15): the caller's personal API tokens (an admin — whose reach
 * on the tokens' rows is everyone's — can show everyone's), a form that creates one — the token
 * is shown once, right after — and revoke.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { TokenView } from '@/lib/api/types';
import { teamApi } from '@/lib/ui/api';
import { useNow } from '@/lib/ui/hooks';
import { reachOf } from '@/lib/ui/permissions';
import { useViewer } from '@/lib/ui/team-hooks';
import { RelativeTime } from '../Time';

const KEY = ['tokens'] as const;

/** The tokens' table: name, prefix, when created, last used and expiring, and Revoke. */
function TokensTable({ tokens, now, onRevoke, revoking }: { tokens: TokenView[] | undefined; now: number; onRevoke: (id: number) => void; revoking: boolean }) {
  return (
    <div className="card table-wrap">
      <table className="table" data-testid="tokens">
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens?.length === 0 && (
            <tr>
              <td colSpan={7} className="muted">
                No tokens yet.
              </td>
            </tr>
          )}
          {(tokens ?? []).map((t) => (
            <tr key={t.id}>
              <td>{t.userName ?? t.userId}</td>
              <td>{t.name}</td>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>
                <RelativeTime iso={t.createdAt} now={now} />
              </td>
              <td>{t.lastUsedAt ? <RelativeTime iso={t.lastUsedAt} now={now} /> : <span className="faint">never</span>}</td>
              <td>{t.expiresAt ? <RelativeTime iso={t.expiresAt} now={now} /> : <span className="faint">never</span>}</td>
              <td>
                {t.revokedAt ? (
                  <span className="badge tone-neutral">revoked</span>
                ) : (
                  <button type="button" className="btn btn-sm" onClick={() => onRevoke(t.id)} disabled={revoking}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TokensPage() {
  const qc = useQueryClient();
  const [all, setAll] = useState(false);
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [shown, setShown] = useState<string | null>(null);
  const me = useViewer();
  const now = useNow(10_000);
  const list = useQuery({ queryKey: [...KEY, all], queryFn: ({ signal }) => teamApi.tokens(all, signal) });
  const create = useMutation({
    mutationFn: () => teamApi.createToken({ name, ...(days ? { expiresInDays: Number(days) } : {}) }),
    onSuccess: (r) => {
      setShown(r.token);
      setName('');
      void qc.invalidateQueries({ queryKey: KEY });
    },
  });
  const revoke = useMutation({ mutationFn: (id: number) => teamApi.revokeToken(id), onSuccess: () => void qc.invalidateQueries({ queryKey: KEY }) });
  return (
    <div className="team-page">
      <div className="page-head">
        <h1>API tokens</h1>
        <span className="grow" />
        {me ? (
          <span className="muted" data-testid="whoami">
            Signed in as <strong>{me.name}</strong> ({me.role})
          </span>
        ) : null}
      </div>
      <p className="muted">A personal token (<code>jdp_…</code>) lets the CLI and scripts act as you: <code>JOBDECK_TOKEN=jdp_… jobdeck queue</code>.</p>
      {shown ? (
        <div className="card webhook-secret" role="alert">
          <h2>Your new token</h2>
          <p>Copy it now: it is shown only this once.</p>
          <code data-testid="new-token">{shown}</code>
          <button type="button" className="btn btn-sm" onClick={() => setShown(null)}>
            I have copied it
          </button>
        </div>
      ) : null}
      {reachOf(me, 'GET /api/tokens') === 'any' ? (
        <label className="queue-filter">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Everyone&apos;s tokens
        </label>
      ) : null}
      <TokensTable tokens={list.data?.tokens} now={now} onRevoke={(id) => revoke.mutate(id)} revoking={revoke.isPending} />
      <form
        className="card team-form"
        aria-label="New token"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <h2>New token</h2>
        <div className="team-fields">
          <label className="field">
            <span className="field-label">Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} required maxLength={63} placeholder="laptop" autoComplete="off" data-testid="token-name" />
          </label>
          <label className="field">
            <span className="field-label">Expires in days</span>
            <input className="input" value={days} onChange={(e) => setDays(e.target.value.replace(/\D/g, ''))} inputMode="numeric" maxLength={4} placeholder="never" />
          </label>
        </div>
        <button type="submit" className="btn btn-primary" disabled={create.isPending}>
          Create
        </button>
        {create.error ? (
          <div className="alert alert-error" role="alert">
            Not created: {create.error.message}
          </div>
        ) : null}
      </form>
    </div>
  );
}
