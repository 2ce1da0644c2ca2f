'use client';
/**
 * The /webhooks page (docs/design.md §10 "Webhooks"): the subscriptions, a form that creates one
 * (its signing secret is shown once, right after), per subscription enable / disable, send a test
 * event, rotate the secret (shown once), delete, and its delivery log with redeliver.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { DeliveryView, WebhookView } from '@/lib/api/types';
import { webhookApi } from '@/lib/ui/api';

const EVENTS = ['job.failed', 'job.succeeded', 'job.cancelled', 'job.started', 'task.restarted', 'task.recovered', '*'] as const;
const LIST_KEY = ['webhooks'] as const;

function SecretOnce({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  return (
    <div className="card webhook-secret" role="alert">
      <h3>Signing secret of {name}</h3>
      <p>Copy it now: it is shown only this once. Receivers verify each request&apos;s webhook-signature with it.</p>
      <code data-testid="webhook-secret">{secret}</code>
      <button type="button" className="btn btn-sm" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

function CreateForm({ onCreated }: { onCreated: (name: string, secret: string) => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['job.failed']);
  const [format, setFormat] = useState('json');
  const [glob, setGlob] = useState('');
  const create = useMutation({
    mutationFn: () => webhookApi.create({ name, url, events, format, ...(glob ? { jobNameGlob: glob } : {}) }),
    onSuccess: (r) => {
      void qc.invalidateQueries({ queryKey: LIST_KEY });
      onCreated(r.webhook.name, r.secret);
      setName('');
      setUrl('');
    },
  });
  const toggle = (e: string) => setEvents((xs) => (xs.includes(e) ? xs.filter((x) => x !== e) : [...xs, e]));
  return (
    <form
      className="card webhook-form"
      aria-label="New webhook"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <h2>New webhook</h2>
      <label>
        Name <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={63} placeholder="ops-alerts" />
      </label>
      <label>
        URL <input value={url} onChange={(e) => setUrl(e.target.value)} required maxLength={2048} placeholder="https://hooks.example.com/jobdeck" />
      </label>
      <fieldset>
        <legend>Events</legend>
        {EVENTS.map((e) => (
          <label key={e} className="webhook-event">
            <input type="checkbox" checked={events.includes(e)} onChange={() => toggle(e)} /> {e}
          </label>
        ))}
      </fieldset>
      <label>
        Format{' '}
        <select value={format} onChange={(e) => setFormat(e.target.value)}>
          <option value="json">json</option>
          <option value="slack">slack</option>
        </select>
      </label>
      <label>
        Job name glob <input value={glob} onChange={(e) => setGlob(e.target.value)} maxLength={200} placeholder="(every job)" />
      </label>
      <button type="submit" className="btn btn-primary" disabled={create.isPending || events.length === 0}>
        Create
      </button>
      {create.isError && (
        <p className="error" role="alert">
          {create.error.message}
        </p>
      )}
    </form>
  );
}

function Deliveries({ name }: { name: string }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['webhooks', name, 'deliveries'], queryFn: ({ signal }) => webhookApi.deliveries(name, signal), refetchInterval: 3000 });
  const again = useMutation({ mutationFn: (id: string) => webhookApi.redeliver(name, id), onSuccess: () => void qc.invalidateQueries({ queryKey: ['webhooks', name, 'deliveries'] }) });
  if (!q.data) return <p className="muted">Loading deliveries…</p>;
  if (q.data.deliveries.length === 0) return <p className="muted">No deliveries yet.</p>;
  return (
    <table className="webhook-log" aria-label={`Deliveries of ${name}`}>
      <thead>
        <tr>
          <th>Event</th>
          <th>Job</th>
          <th>Status</th>
          <th>Tries</th>
          <th>Code</th>
          <th>Latency</th>
          <th>Next try</th>
          <th>Answer / error</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {q.data.deliveries.map((d: DeliveryView) => (
          <tr key={d.id} title={d.id}>
            <td>{d.eventType}</td>
            <td>{d.jobId === null ? '–' : <a href={`/jobs/${d.jobId}`}>#{d.jobId}</a>}</td>
            <td>{d.status}</td>
            <td>{d.attempts}</td>
            <td>{d.lastStatusCode ?? '–'}</td>
            <td>{d.lastLatencyMs === null ? '–' : `${d.lastLatencyMs} ms`}</td>
            <td>{d.nextAttemptAt ? new Date(d.nextAttemptAt).toLocaleTimeString() : '–'}</td>
            <td className="webhook-head">{d.lastError ?? d.responseHead ?? ''}</td>
            <td>
              <button type="button" className="btn btn-sm" onClick={() => again.mutate(d.id)} disabled={again.isPending}>
                Redeliver
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Row({ w, open, onOpen, onSecret }: { w: WebhookView; open: boolean; onOpen: () => void; onSecret: (name: string, s: string) => void }) {
  const qc = useQueryClient();
  const done = () => void qc.invalidateQueries({ queryKey: LIST_KEY });
  const enable = useMutation({ mutationFn: () => webhookApi.setEnabled(w.name, !w.enabled), onSuccess: done });
  const test = useMutation({ mutationFn: () => webhookApi.test(w.name), onSuccess: () => void qc.invalidateQueries({ queryKey: ['webhooks', w.name, 'deliveries'] }) });
  const rotate = useMutation({ mutationFn: () => webhookApi.rotate(w.name), onSuccess: (r) => onSecret(r.webhook.name, r.secret) });
  const remove = useMutation({ mutationFn: () => webhookApi.remove(w.name), onSuccess: done });
  return (
    <li className="card webhook-row">
      <div className="webhook-title">
        <button type="button" className="btn-ghost" aria-expanded={open} onClick={onOpen}>
          <strong>{w.name}</strong>
        </button>
        <span className={w.enabled ? 'badge' : 'badge muted'}>{w.enabled ? 'enabled' : 'disabled'}</span>
        <span className="muted">{w.format}</span>
        <span>{w.events.join(', ')}</span>
        <code className="webhook-url">{w.url}</code>
        {w.owner && (
          <span className="muted" data-testid="webhook-owner" title="Who created it">
            by {w.owner}
          </span>
        )}
      </div>
      {!w.enabled && w.disabledReason && <p className="muted">{w.disabledReason}</p>}
      <div className="webhook-actions">
        <button type="button" className="btn btn-sm" onClick={() => enable.mutate()}>
          {w.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="btn btn-sm" onClick={() => test.mutate()}>
          Send test event
        </button>
        <button type="button" className="btn btn-sm" onClick={() => rotate.mutate()}>
          Rotate secret
        </button>
        <button type="button" className="btn btn-sm btn-danger" onClick={() => remove.mutate()}>
          Delete
        </button>
      </div>
      {open && <Deliveries name={w.name} />}
    </li>
  );
}

/** The page (see the module comment). */
export function WebhooksPage() {
  const list = useQuery({ queryKey: LIST_KEY, queryFn: ({ signal }) => webhookApi.list(signal) });
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const onSecret = (name: string, s: string) => setSecret({ name, secret: s });
  return (
    <div className="webhooks-page">
      <h1>Webhooks</h1>
      <p className="muted">Job events POSTed to your URL, signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature).</p>
      {secret && <SecretOnce name={secret.name} secret={secret.secret} onDone={() => setSecret(null)} />}
      <CreateForm onCreated={onSecret} />
      {list.isError && <p className="error">{list.error.message}</p>}
      <ul className="webhook-list" aria-label="Webhooks">
        {list.data?.webhooks.map((w) => (
          <Row key={w.id} w={w} open={open === w.name} onOpen={() => setOpen(open === w.name ? null : w.name)} onSecret={onSecret} />
        ))}
      </ul>
      {list.data?.webhooks.length === 0 && <p className="muted">No webhooks yet.</p>}
    </div>
  );
}
