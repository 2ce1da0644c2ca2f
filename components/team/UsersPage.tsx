'use client';
/**
 * The /users page (admins; docs/design.md §15): every user — role, enabled or disabled, how it
 * logs in (password, single sign-on, or a token only), the OS account its jobs run as, its quotas, when it was created — with a
 * form that creates a user or changes one's role, quotas or password, and disable / enable per
 * row. Everything goes through the users API (GET/POST /api/users, PATCH /api/users/{id}); what
 * the API refuses shows next to the field it names. A member or viewer is told the page is an
 * admin's. The first admin (user 1) keeps its role and cannot be disabled (the admin token is it).
 */
import { useState } from 'react';
import type { QuotaView, UserView } from '@/lib/api/types';
import { ApiRequestError } from '@/lib/ui/api';
import { useNow } from '@/lib/ui/hooks';
import { useMe, useSaveUser, useUsers } from '@/lib/ui/team-hooks';
import { draftOfUser, EMPTY_USER, fieldErrorsOf, loginMethods, userBody, type FieldErrors, type UserDraft } from '@/lib/ui/user-form';
import { ConfirmButton } from '../ConfirmButton';
import { RelativeTime } from '../Time';
import { UserForm } from './UserForm';

/** The first admin: the admin token authenticates as it. */
const FIRST_ADMIN_ID = 1;

/** A quota cell: the quota that applies — the user's own, or its role's default (marked) — or a dash. */
function Quota({ quota }: { quota: QuotaView | undefined }) {
  if (!quota || quota.value === null || quota.source === null) {
    return (
      <span className="faint" title="No quota">
        —
      </span>
    );
  }
  return quota.source === 'role' ? (
    <span title="The role's default (JOBDECK_QUOTA_*); empty in the form keeps it">
      {quota.value} <span className="muted">(role)</span>
    </span>
  ) : (
    <>{quota.value}</>
  );
}

/** One user's row: what it is, Edit, and Disable (asks once more) or Enable. */
function UserRow({ u, self, now, busy, onEdit, onDisabled }: { u: UserView; self: boolean; now: number; busy: boolean; onEdit: () => void; onDisabled: (disabled: boolean) => void }) {
  return (
    <tr data-user={u.name}>
      <td className="team-name">
        <strong>{u.name}</strong>
        {self && <span className="muted"> (you)</span>}
      </td>
      <td data-label="Role" data-testid="user-row-role">{u.role}</td>
      <td data-label="Status" data-testid="user-row-status">
        <span className={`badge ${u.disabled ? 'tone-error' : 'tone-success'}`}>{u.disabled ? 'disabled' : 'enabled'}</span>
      </td>
      <td data-label="Logs in with" data-testid="user-row-login">{loginMethods(u)}</td>
      <td className="mono" data-label="OS account" data-testid="user-row-os-user">
        {u.osUser ?? (
          <span className="faint" title="Its jobs run as the run account (when isolation is on)">
            —
          </span>
        )}
      </td>
      <td className="col-num" data-label="Max pending jobs" data-testid="user-row-max-pending">
        <Quota quota={u.quotas?.maxPendingJobs} />
      </td>
      <td className="col-num" data-label="Max running CPUs" data-testid="user-row-max-cpus">
        <Quota quota={u.quotas?.maxRunningCpus} />
      </td>
      <td className="col-num" data-label="Max running GPUs" data-testid="user-row-max-gpus">
        <Quota quota={u.quotas?.maxRunningGpus} />
      </td>
      <td data-label="Created">
        <RelativeTime iso={u.createdAt ?? null} now={now} />
      </td>
      <td className="team-actions">
        <button type="button" className="btn btn-sm" onClick={onEdit} aria-label={`Edit user ${u.name}`}>
          Edit
        </button>{' '}
        {u.id === FIRST_ADMIN_ID ? (
          <span className="muted" title="The admin token authenticates as the first admin">
            first admin
          </span>
        ) : u.disabled ? (
          <button type="button" className="btn btn-sm" onClick={() => onDisabled(false)} disabled={busy} aria-label={`Enable user ${u.name}`}>
            Enable
          </button>
        ) : (
          <ConfirmButton className="btn btn-sm btn-danger" confirmLabel="Confirm disable?" onConfirm={() => onDisabled(true)} disabled={busy} ariaLabel={`Disable user ${u.name}`}>
            Disable
          </ConfirmButton>
        )}
      </td>
    </tr>
  );
}

/** The users table. */
function UsersTable({ users, meId, busy, onEdit, onDisabled }: { users: UserView[]; meId: number | undefined; busy: boolean; onEdit: (u: UserView) => void; onDisabled: (u: UserView, disabled: boolean) => void }) {
  const now = useNow(30_000);
  return (
    <div className="card table-wrap">
      <table className="table team-table" data-testid="users-table">
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Logs in with</th>
            <th scope="col">OS account</th>
            <th scope="col" className="col-num">
              Max pending jobs
            </th>
            <th scope="col" className="col-num">
              Max running CPUs
            </th>
            <th scope="col" className="col-num">
              Max running GPUs
            </th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <UserRow key={u.id} u={u} self={u.id === meId} now={now} busy={busy} onEdit={() => onEdit(u)} onDisabled={(d) => onDisabled(u, d)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function UsersPage() {
  const me = useMe();
  const users = useUsers();
  const save = useSaveUser();
  const toggle = useSaveUser();
  const [draft, setDraft] = useState<UserDraft>(EMPTY_USER);
  /** The user being edited, or null when creating one. */
  const [editing, setEditing] = useState<UserView | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [message, setMessage] = useState<{ tone: 'error' | 'info'; text: string } | null>(null);
  const denied = users.error instanceof ApiRequestError && users.error.status === 403;

  const reset = () => {
    setEditing(null);
    setDraft(EMPTY_USER);
    setErrors({});
  };
  const submit = () => {
    const r = userBody(draft, editing ?? undefined);
    if ('errors' in r) return setErrors(r.errors);
    if (editing && Object.keys(r.body).length === 0) return setErrors({ general: 'Nothing to change.' });
    const name = editing?.name ?? draft.name.trim();
    save.mutate(
      { id: editing?.id ?? null, body: r.body },
      {
        onSuccess: () => {
          setMessage({ tone: 'info', text: `User ${name} ${editing ? 'changed' : 'created'}.` });
          reset();
        },
        onError: (err) => setErrors(fieldErrorsOf(err)),
      },
    );
  };
  const setDisabled = (u: UserView, disabled: boolean) =>
    toggle.mutate(
      { id: u.id, body: { disabled } },
      {
        onSuccess: () => setMessage({ tone: 'info', text: disabled ? `User ${u.name} disabled: nothing authenticates as it any more.` : `User ${u.name} enabled.` }),
        onError: (err) => setMessage({ tone: 'error', text: `User ${u.name} not ${disabled ? 'disabled' : 'enabled'}: ${err.message}` }),
      },
    );

  return (
    <div className="team-page">
      <div className="page-head">
        <h1>Users</h1>
      </div>
      {denied ? (
        <p className="alert alert-warning" role="alert">
          Only admins can manage users.
        </p>
      ) : (
        <>
          <div role="status" aria-live="polite" data-testid="user-notice">
            {message && <div className={`alert alert-${message.tone}`}>{message.text}</div>}
          </div>
          {users.isError && <div className="alert alert-error">Could not load the users: {users.error.message}</div>}
          <UsersTable
            users={users.data?.users ?? []}
            meId={me.data?.id}
            busy={toggle.isPending}
            onDisabled={setDisabled}
            onEdit={(u) => {
              setEditing(u);
              setDraft(draftOfUser(u));
              setErrors({});
              setMessage(null);
            }}
          />
          <UserForm draft={draft} onChange={setDraft} editing={editing?.name ?? null} roleLocked={editing?.id === FIRST_ADMIN_ID} errors={errors} saving={save.isPending} onSubmit={submit} onCancel={reset} />
        </>
      )}
    </div>
  );
}
