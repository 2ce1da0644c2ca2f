'use client';
/**
 * The /tokens page (docs/design.md §15): the caller's personal API tokens (an admin can show
 * everyone's), a form that creates one — the token is shown once, right after — and revoke.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { teamApi } from '@/lib/ui/api';
import { useMe } from '@/lib/ui/team-hooks';

const KEY = ['tokens'] as const;

export function TokensPage() {
  const qc = useQueryClient();
  const [all, setAll] = useState(false);
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [shown, setShown] = useState<string | null>(null);
  const me = useMe();
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
    <div className="webhooks-page">
      <h1>API tokens</h1>
      {me.data ? (
        <p data-testid="whoami">
          Signed in as <strong>{me.data.name}</strong> ({me.data.role})
        </p>
      ) : null}
      {shown ? (
        <div className="card" role="alert">
          <p>Copy the token now: it is shown only this once.</p>
          <code data-testid="new-token">{shown}</code>{' '}
          <button type="button" className="btn btn-sm" onClick={() => setShown(null)}>
            I have copied it
          </button>
        </div>
      ) : null}
      <form
        className="card"
        aria-label="New token"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <label>
          Name <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={63} placeholder="laptop" data-testid="token-name" />
        </label>{' '}
        <label>
          Expires in days <input value={days} onChange={(e) => setDays(e.target.value.replace(/\D/g, ''))} inputMode="numeric" maxLength={4} placeholder="never" />
        </label>{' '}
        <button type="submit" className="btn btn-primary" disabled={create.isPending}>
          Create
        </button>
        {create.error ? <p role="alert">{create.error.message}</p> : null}
      </form>
      {me.data?.role === 'admin' ? (
        <label>
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Everyone&apos;s
        </label>
      ) : null}
      <table className="table" data-testid="tokens">
        <thead>
          <tr>
            <th>User</th>
            <th>Name</th>
            <th>Prefix</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Expires</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(list.data?.tokens ?? []).map((t) => (
            <tr key={t.id}>
              <td>{t.userName ?? t.userId}</td>
              <td>{t.name}</td>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>{t.createdAt}</td>
              <td>{t.lastUsedAt ?? '-'}</td>
              <td>{t.expiresAt ?? 'never'}</td>
              <td>
                {t.revokedAt ? (
                  'revoked'
                ) : (
                  <button type="button" className="btn btn-sm" onClick={() => revoke.mutate(t.id)} disabled={revoke.isPending}>
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
