'use client';
/**
 * The operator queues (GET /api/queues, kept fresh every 2 s): each with its limits — jobs
 * running at once, CPUs — its default priority and what it holds now (running, waiting, CPUs),
 * linking to the jobs list filtered by that queue (`/?queue=gpu`). Whoever is logged in (the
 * admin token's holder) creates a queue, changes its settings (a PUT replaces them: a limit left
 * empty is none) or deletes it — the server refuses a delete while an unfinished job is in it,
 * and says how many. The `default` queue has no settings of its own.
 */
import Link from 'next/link';
import { useState } from 'react';
import type { QueueView } from '@/lib/api/types';
import type { QueueSettingsInput } from '@/lib/ui/api';
import { useDeleteQueue, usePutQueue, useQueues } from '@/lib/ui/hooks';
import { ConfirmButton } from '../ConfirmButton';

const DEFAULT_QUEUE = 'default';
/** The queue name rule (lib/jobs/spec QUEUE_NAME), checked before sending; the server checks again. */
const NAME_RULE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const show = (v: number | null) => (v === null ? '–' : String(v));

/** The form's text fields, as typed. */
interface Draft {
  name: string;
  maxRunning: string;
  maxCpus: string;
  defaultPriority: string;
}

const EMPTY: Draft = { name: '', maxRunning: '', maxCpus: '', defaultPriority: '' };

/** A field's value: null when empty, the number when it is one, else a problem. */
function numberOf(text: string, what: string, check: (n: number) => boolean, expected: string): number | null | { problem: string } {
  const t = text.trim();
  if (t === '') return null;
  const n = Number(t);
  return Number.isFinite(n) && check(n) ? n : { problem: `${what}: ${expected}` };
}

/** The settings a draft asks for, or the first problem with it (the server's rules, said early). */
function settingsOf(d: Draft): { settings: QueueSettingsInput } | { problem: string } {
  if (!NAME_RULE.test(d.name)) return { problem: 'Name: 1–63 characters, a–z, 0–9, - and _, starting with a letter or digit' };
  if (d.name === DEFAULT_QUEUE) return { problem: 'The default queue has no settings of its own: choose another name' };
  const maxRunning = numberOf(d.maxRunning, 'Max running', (n) => Number.isInteger(n) && n >= 1 && n <= 100_000, 'an integer from 1 to 100000, or empty for no limit');
  const maxCpus = numberOf(d.maxCpus, 'Max CPUs', (n) => n > 0 && n <= 1_000_000, 'a CPU count above 0, or empty for no limit');
  const defaultPriority = numberOf(d.defaultPriority, 'Default priority', (n) => Number.isInteger(n) && n >= 0 && n <= 1000, 'an integer from 0 to 1000, or empty');
  for (const v of [maxRunning, maxCpus, defaultPriority]) if (v !== null && typeof v === 'object') return v;
  return { settings: { maxRunning: maxRunning as number | null, maxCpus: maxCpus as number | null, defaultPriority: defaultPriority as number | null } };
}

const draftOf = (q: QueueView): Draft => ({
  name: q.name,
  maxRunning: q.maxRunning === null ? '' : String(q.maxRunning),
  maxCpus: q.maxCpus === null ? '' : String(q.maxCpus),
  defaultPriority: q.defaultPriority === null ? '' : String(q.defaultPriority),
});

/** One queue's row: its settings, what it holds, a link to its jobs, edit and delete. */
function QueueRow({ q, deleting, onEdit, onDelete }: { q: QueueView; deleting: boolean; onEdit: () => void; onDelete: () => void }) {
  return (
    <tr data-queue={q.name}>
      <td>
        <Link href={`/?queue=${encodeURIComponent(q.name)}`} data-testid="queue-jobs" title={`The jobs of queue ${q.name}`}>
          {q.name}
        </Link>
      </td>
      <td data-testid="queue-owner">{q.owner ?? '–'}</td>
      <td data-testid="queue-max-running">{show(q.maxRunning)}</td>
      <td data-testid="queue-max-cpus">{show(q.maxCpus)}</td>
      <td data-testid="queue-default-priority">{show(q.defaultPriority)}</td>
      <td data-testid="queue-running">{q.running}</td>
      <td data-testid="queue-pending">{q.pending}</td>
      <td data-testid="queue-cpus">{q.cpus}</td>
      <td className="queue-actions">
        {q.name === DEFAULT_QUEUE ? (
          <span className="muted">no limits</span>
        ) : (
          <>
            <button type="button" className="btn btn-sm" onClick={onEdit} aria-label={`Edit queue ${q.name}`}>
              Edit
            </button>{' '}
            <ConfirmButton className="btn btn-sm btn-danger" confirmLabel="Confirm delete?" onConfirm={onDelete} disabled={deleting} ariaLabel={`Delete queue ${q.name}`}>
              Delete
            </ConfirmButton>
          </>
        )}
      </td>
    </tr>
  );
}

export function QueuesPage() {
  const queues = useQueues();
  const put = usePutQueue();
  const del = useDeleteQueue();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  /** The queue being edited (its name is then fixed), or null when creating one. */
  const [editing, setEditing] = useState<string | null>(null);
  const [message, setMessage] = useState<{ tone: 'error' | 'info'; text: string } | null>(null);

  const save = (e: React.FormEvent) => {
    e.preventDefault();
    const s = settingsOf(draft);
    if ('problem' in s) return setMessage({ tone: 'error', text: s.problem });
    put.mutate(
      { name: draft.name, settings: s.settings },
      {
        onSuccess: () => {
          setMessage({ tone: 'info', text: `Queue ${draft.name} ${editing ? 'changed' : 'saved'}.` });
          setDraft(EMPTY);
          setEditing(null);
        },
        onError: (err) => setMessage({ tone: 'error', text: `Queue ${draft.name} not saved: ${err.message}` }),
      },
    );
  };
  const remove = (name: string) =>
    del.mutate(name, {
      onSuccess: () => setMessage({ tone: 'info', text: `Queue ${name} deleted.` }),
      onError: (err) => setMessage({ tone: 'error', text: `Queue ${name} not deleted: ${err.message}` }),
    });
  const field = (key: keyof Draft, label: string, extra: React.InputHTMLAttributes<HTMLInputElement> = {}) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input className="input" value={draft[key]} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} data-testid={`queue-${key}`} {...extra} />
    </label>
  );

  return (
    <>
      <div className="page-head">
        <h1>Queues</h1>
      </div>
      <div role="status" aria-live="polite" data-testid="queue-notice">
        {message && <div className={`alert alert-${message.tone}`}>{message.text}</div>}
      </div>
      {queues.isError && <div className="alert alert-error">Could not load the queues: {queues.error.message}</div>}
      <div className="card">
        <table className="table queues-table" data-testid="queues-table">
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" title="Who created it">Owner</th>
              <th scope="col">Max running</th>
              <th scope="col">Max CPUs</th>
              <th scope="col">Default priority</th>
              <th scope="col">Running</th>
              <th scope="col">Pending</th>
              <th scope="col">CPUs in use</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(queues.data?.queues ?? []).map((q) => (
              <QueueRow
                key={q.name}
                q={q}
                deleting={del.isPending}
                onDelete={() => remove(q.name)}
                onEdit={() => {
                  setEditing(q.name);
                  setDraft(draftOf(q));
                  setMessage(null);
                }}
              />
            ))}
          </tbody>
        </table>
      </div>

      <form className="card queue-form" onSubmit={save} aria-label={editing ? `Edit queue ${editing}` : 'New queue'} data-testid="queue-form">
        <h2>{editing ? `Edit queue ${editing}` : 'New queue'}</h2>
        <p className="muted">A limit left empty is no limit; saving replaces every setting of the queue.</p>
        <div className="queue-fields">
          {field('name', 'Name', { readOnly: editing !== null, placeholder: 'gpu', maxLength: 63, autoComplete: 'off' })}
          {field('maxRunning', 'Max running', { inputMode: 'numeric', placeholder: 'no limit' })}
          {field('maxCpus', 'Max CPUs', { inputMode: 'decimal', placeholder: 'no limit' })}
          {field('defaultPriority', 'Default priority', { inputMode: 'numeric', placeholder: '500' })}
        </div>
        <button type="submit" className="btn btn-primary" disabled={put.isPending} data-testid="queue-save">
          {editing ? 'Save changes' : 'Create queue'}
        </button>
        {editing && (
          <button
            type="button"
            className="btn btn-ghost"
            onClick={() => {
              setEditing(null);
              setDraft(EMPTY);
            }}
          >
            Cancel
          </button>
        )}
      </form>
    </>
  );
}
