'use client';
/**
 * The operator queues (GET /api/queues, kept fresh every 2 s): each with its limits — jobs
 * running at once, CPUs — its default priority and what it holds now (running, waiting, CPUs),
 * linking to the jobs list filtered by that queue (`/?queue=gpu`). A viewer whose role may change
 * queues (an admin: lib/auth/rules.ts, through lib/ui/permissions.ts) creates a queue, changes its
 * settings (a PUT replaces them: a limit left empty is none) or deletes it — the server refuses a
 * delete while an unfinished job is in it, and says how many; anyone else sees the table alone.
 * The `default` queue has no settings of its own.
 */
import Link from 'next/link';
import { useState } from 'react';
import type { QueueView } from '@/lib/api/types';
import type { QueueSettingsInput } from '@/lib/ui/api';
import { useDeleteQueue, usePutQueue, useQueues } from '@/lib/ui/hooks';
import { may } from '@/lib/ui/permissions';
import { useViewer } from '@/lib/ui/team-hooks';
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
  maxGpus: string;
  /** Minutes. */
  startTimeout: string;
  defaultPriority: string;
  memberMaxPriority: string;
}

const EMPTY: Draft = { name: '', maxRunning: '', maxCpus: '', maxGpus: '', startTimeout: '', defaultPriority: '', memberMaxPriority: '' };

/** A start timeout in ms as the table shows it: `90 min`, `–` for the server's. */
const minutes = (ms: number | null | undefined) => (ms === null || ms === undefined ? '–' : `${Math.round((ms / 60_000) * 100) / 100} min`);

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
  const maxGpus = numberOf(d.maxGpus, 'Max GPUs', (n) => n > 0 && n <= 100_000, 'a GPU count above 0, or empty for no limit');
  const timeout = numberOf(d.startTimeout, 'Start timeout', (n) => n >= 0 && n <= 527_040, 'minutes from 0 to 527040, or empty for the server’s');
  const defaultPriority = numberOf(d.defaultPriority, 'Default priority', (n) => Number.isInteger(n) && n >= 0 && n <= 1000, 'an integer from 0 to 1000, or empty');
  const memberMaxPriority = numberOf(d.memberMaxPriority, 'Member max priority', (n) => Number.isInteger(n) && n >= 0 && n <= 1000, "an integer from 0 to 1000, or empty for the role's cap only");
  for (const v of [maxRunning, maxCpus, maxGpus, timeout, defaultPriority, memberMaxPriority]) if (v !== null && typeof v === 'object') return v;
  const startTimeoutMs = timeout === null ? null : Math.round((timeout as number) * 60_000);
  return {
    settings: { maxRunning: maxRunning as number | null, maxCpus: maxCpus as number | null, maxGpus: maxGpus as number | null, startTimeoutMs, defaultPriority: defaultPriority as number | null, memberMaxPriority: memberMaxPriority as number | null },
  };
}

const draftOf = (q: QueueView): Draft => ({
  name: q.name,
  maxRunning: q.maxRunning === null ? '' : String(q.maxRunning),
  maxCpus: q.maxCpus === null ? '' : String(q.maxCpus),
  maxGpus: q.maxGpus == null ? '' : String(q.maxGpus),
  startTimeout: q.startTimeoutMs == null ? '' : String(Math.round((q.startTimeoutMs / 60_000) * 100) / 100),
  defaultPriority: q.defaultPriority === null ? '' : String(q.defaultPriority),
  memberMaxPriority: q.memberMaxPriority === null || q.memberMaxPriority === undefined ? '' : String(q.memberMaxPriority),
});

/** One queue's row: its settings, what it holds, a link to its jobs, edit and delete (`onEdit` / `onDelete` null: the viewer may not). */
function QueueRow({ q, deleting, onEdit, onDelete }: { q: QueueView; deleting: boolean; onEdit: (() => void) | null; onDelete: (() => void) | null }) {
  return (
    <tr data-queue={q.name}>
      <td>
        <Link prefetch={false} href={`/?queue=${encodeURIComponent(q.name)}`} data-testid="queue-jobs" title={`The jobs of queue ${q.name}`}>
          {q.name}
        </Link>
      </td>
      <td data-testid="queue-owner">{q.owner ?? '–'}</td>
      <td data-testid="queue-max-running">{show(q.maxRunning)}</td>
      <td data-testid="queue-max-cpus">{show(q.maxCpus)}</td>
      <td data-testid="queue-max-gpus">{show(q.maxGpus ?? null)}</td>
      <td data-testid="queue-start-timeout">{minutes(q.startTimeoutMs)}</td>
      <td data-testid="queue-default-priority">{show(q.defaultPriority)}</td>
      <td data-testid="queue-member-max-priority">{show(q.memberMaxPriority ?? null)}</td>
      <td data-testid="queue-running">{q.running}</td>
      <td data-testid="queue-pending">{q.pending}</td>
      <td data-testid="queue-cpus">{q.cpus}</td>
      <td data-testid="queue-gpus">{q.gpus ?? 0}</td>
      {(onEdit || onDelete) && (
        <td className="queue-actions">
          {q.name === DEFAULT_QUEUE ? (
            <span className="muted">no limits</span>
          ) : (
            <>
              {onEdit && (
                <button type="button" className="btn btn-sm" onClick={onEdit} aria-label={`Edit queue ${q.name}`}>
                  Edit
                </button>
              )}{' '}
              {onDelete && (
                <ConfirmButton className="btn btn-sm btn-danger" confirmLabel="Confirm delete?" onConfirm={onDelete} disabled={deleting} ariaLabel={`Delete queue ${q.name}`}>
                  Delete
                </ConfirmButton>
              )}
            </>
          )}
        </td>
      )}
    </tr>
  );
}

/** The form that creates a queue, or changes the one being edited (`editing`). */
function QueueForm({ draft, setDraft, editing, onStop, onSave, saving }: { draft: Draft; setDraft: (d: Draft) => void; editing: string | null; onStop: () => void; onSave: (e: React.FormEvent) => void; saving: boolean }) {
  const field = (key: keyof Draft, label: string, extra: React.InputHTMLAttributes<HTMLInputElement> = {}) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input className="input" value={draft[key]} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} data-testid={`queue-${key}`} {...extra} />
    </label>
  );
  return (
    <form className="card queue-form" onSubmit={onSave} aria-label={editing ? `Edit queue ${editing}` : 'New queue'} data-testid="queue-form">
      <h2>{editing ? `Edit queue ${editing}` : 'New queue'}</h2>
      <p className="muted">A limit left empty is no limit; saving replaces every setting of the queue.</p>
      <div className="queue-fields">
        {field('name', 'Name', { readOnly: editing !== null, placeholder: 'gpu', maxLength: 63, autoComplete: 'off' })}
        {field('maxRunning', 'Max running', { inputMode: 'numeric', placeholder: 'no limit' })}
        {field('maxCpus', 'Max CPUs', { inputMode: 'decimal', placeholder: 'no limit' })}
        {field('maxGpus', 'Max GPUs', { inputMode: 'decimal', placeholder: 'no limit' })}
        {field('startTimeout', 'Start timeout (min)', { inputMode: 'decimal', placeholder: 'the server’s' })}
        {field('defaultPriority', 'Default priority', { inputMode: 'numeric', placeholder: '500' })}
        {field('memberMaxPriority', 'Member max priority', { inputMode: 'numeric', placeholder: "the role's cap" })}
      </div>
      <button type="submit" className="btn btn-primary" disabled={saving} data-testid="queue-save">
        {editing ? 'Save changes' : 'Create queue'}
      </button>
      {editing && (
        <button type="button" className="btn btn-ghost" onClick={onStop}>
          Cancel
        </button>
      )}
    </form>
  );
}

export function QueuesPage() {
  const viewer = useViewer();
  const mayPut = may(viewer, 'PUT /api/queues/[name]');
  const mayDelete = may(viewer, 'DELETE /api/queues/[name]');
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

  return (
    <>
      <div className="page-head">
        <h1>Queues</h1>
      </div>
      {viewer?.role !== 'admin' && viewer?.maxPriority != null && (
        <p className="muted" data-testid="priority-cap">
          Your role may give a job priority up to {viewer.maxPriority}; a queue&apos;s member max priority may lower that for its jobs.
        </p>
      )}
      <div role="status" aria-live="polite" data-testid="queue-notice">
        {message && <div className={`alert alert-${message.tone}`}>{message.text}</div>}
      </div>
      {queues.isError && <div className="alert alert-error">Could not load the queues: {queues.error.message}</div>}
      <div className="card table-wrap">
        <table className="table queues-table" data-testid="queues-table">
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" title="Who created it">Owner</th>
              <th scope="col">Max running</th>
              <th scope="col">Max CPUs</th>
              <th scope="col">Max GPUs</th>
              <th scope="col" title="A job of the queue that cannot start within this ends; – : the server's (none by default)">Start timeout</th>
              <th scope="col">Default priority</th>
              <th scope="col" title="The highest priority a member may give a job of the queue (admins are not capped)">
                Member max priority
              </th>
              <th scope="col">Running</th>
              <th scope="col">Pending</th>
              <th scope="col">CPUs in use</th>
              <th scope="col">GPUs in use</th>
              {(mayPut || mayDelete) && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {(queues.data?.queues ?? []).map((q) => (
              <QueueRow
                key={q.name}
                q={q}
                deleting={del.isPending}
                onDelete={mayDelete ? () => remove(q.name) : null}
                onEdit={
                  mayPut
                    ? () => {
                        setEditing(q.name);
                        setDraft(draftOf(q));
                        setMessage(null);
                      }
                    : null
                }
              />
            ))}
          </tbody>
        </table>
      </div>

      {mayPut && <QueueForm draft={draft} setDraft={setDraft} editing={editing} onStop={() => {
            setEditing(null);
            setDraft(EMPTY);
          }} onSave={save} saving={put.isPending} />}
    </>
  );
}
