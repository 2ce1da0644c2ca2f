'use client';
/**
 * The Users page's form: a new user (name, role, optional password, OS account, quotas) or an
 * existing one's role, OS account, quotas and a new password. What the API refuses shows under the field it names
 * (lib/ui/user-form.ts fieldErrorsOf); a quota left empty is not set.
 */
import type { InputHTMLAttributes } from 'react';
import type { FieldErrors, UserDraft, UserField } from '@/lib/ui/user-form';
import { USER_ROLES } from '@/lib/ui/user-form';

/** The form's props: the draft and its setter, the user being edited (null: a new one), the errors. */
export interface UserFormProps {
  draft: UserDraft;
  onChange: (d: UserDraft) => void;
  /** The name of the user being edited, or null when creating one. */
  editing: string | null;
  /** Whether the role is fixed (the first admin stays an admin). */
  roleLocked: boolean;
  errors: FieldErrors;
  saving: boolean;
  onSubmit: () => void;
  onCancel: () => void;
}

/** A field's error, tied to its input by id (aria-describedby). */
function FieldError({ field, errors }: { field: UserField; errors: FieldErrors }) {
  const text = errors[field];
  return text ? (
    <span className="field-error" id={`user-${field}-error`} data-testid={`user-${field}-error`}>
      {text}
    </span>
  ) : null;
}

export function UserForm({ draft, onChange, editing, roleLocked, errors, saving, onSubmit, onCancel }: UserFormProps) {
  const input = (key: Exclude<UserField, 'role' | 'disabled'>, label: string, extra: InputHTMLAttributes<HTMLInputElement> = {}) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        className="input"
        value={draft[key]}
        onChange={(e) => onChange({ ...draft, [key]: e.target.value })}
        aria-invalid={errors[key] ? true : undefined}
        aria-describedby={errors[key] ? `user-${key}-error` : undefined}
        data-testid={`user-${key}`}
        {...extra}
      />
      <FieldError field={key} errors={errors} />
    </label>
  );
  return (
    <form
      className="card team-form"
      aria-label={editing ? `Edit user ${editing}` : 'New user'}
      data-testid="user-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <h2>{editing ? `Edit user ${editing}` : 'New user'}</h2>
      <p className="muted">A quota left empty is not set. {editing ? 'A password left empty stays as it is.' : 'Without a password the user logs in with a token (or single sign-on).'}</p>
      <div className="team-fields">
        {input('name', 'Name', { readOnly: editing !== null, placeholder: 'mia', maxLength: 63, autoComplete: 'off', required: true })}
        <label className="field">
          <span className="field-label">Role</span>
          <select
            className="select"
            value={draft.role}
            disabled={roleLocked}
            title={roleLocked ? 'The first admin stays an admin: the admin token authenticates as it' : undefined}
            onChange={(e) => onChange({ ...draft, role: e.target.value })}
            aria-invalid={errors.role ? true : undefined}
            aria-describedby={errors.role ? 'user-role-error' : undefined}
            data-testid="user-role"
          >
            {USER_ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <FieldError field="role" errors={errors} />
        </label>
        {input('password', editing ? 'New password' : 'Password', { type: 'password', autoComplete: 'new-password', placeholder: editing ? 'unchanged' : 'none' })}
        {input('osUser', 'OS account', { placeholder: 'the run account', maxLength: 32, autoComplete: 'off', spellCheck: false, title: 'The OS account this user\u2019s jobs run as when isolation is on; empty: the run account' })}
        {input('maxPendingJobs', 'Max pending jobs', { inputMode: 'numeric', placeholder: 'not set' })}
        {input('maxRunningCpus', 'Max running CPUs', { inputMode: 'decimal', placeholder: 'not set' })}
        {input('maxRunningGpus', 'Max running GPUs', { inputMode: 'decimal', placeholder: 'not set' })}
      </div>
      {errors.general && (
        <p className="alert alert-error" role="alert" data-testid="user-form-error">
          {errors.general}
        </p>
      )}
      <div className="team-form-actions">
        <button type="submit" className="btn btn-primary" disabled={saving} data-testid="user-save">
          {editing ? 'Save changes' : 'Create user'}
        </button>
        {editing && (
          <button type="button" className="btn btn-ghost" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
