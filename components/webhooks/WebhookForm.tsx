'use client';
/**
 * The form that creates a webhook subscription (POST /api/webhooks): name, URL, the events
 * wanted, the format and an optional job name glob. Its signing secret is answered once; the page
 * shows it (SecretOnce). Refusals show under the form, as the server words them.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { webhookApi } from '@/lib/ui/api';

/** The events a subscription may want (lib/api/webhook-schemas.ts), `*` for every one. */
export const WEBHOOK_EVENTS = ['job.failed', 'job.succeeded', 'job.cancelled', 'job.started', 'task.restarted', 'task.recovered', '*'] as const;

/** Query key of the subscriptions' list. */
export const WEBHOOKS_KEY = ['webhooks'] as const;

export function WebhookForm({ onCreated }: { onCreated: (name: string, secret: string) => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['job.failed']);
  const [format, setFormat] = useState('json');
  const [glob, setGlob] = useState('');
  const create = useMutation({
    mutationFn: () => webhookApi.create({ name, url, events, format, ...(glob ? { jobNameGlob: glob } : {}) }),
    onSuccess: (r) => {
      void qc.invalidateQueries({ queryKey: WEBHOOKS_KEY });
      onCreated(r.webhook.name, r.secret);
      setName('');
      setUrl('');
      setGlob('');
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
      <div className="webhook-fields">
        <label className="field">
          <span className="field-label">Name</span>
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} required maxLength={63} placeholder="ops-alerts" autoComplete="off" />
        </label>
        <label className="field webhook-field-url">
          <span className="field-label">URL</span>
          <input className="input" type="url" value={url} onChange={(e) => setUrl(e.target.value)} required maxLength={2048} placeholder="https://hooks.example.com/jobdeck" />
        </label>
        <label className="field">
          <span className="field-label">Format</span>
          <select className="select" value={format} onChange={(e) => setFormat(e.target.value)}>
            <option value="json">json (Standard Webhooks)</option>
            <option value="slack">slack (incoming webhook)</option>
          </select>
        </label>
        <label className="field">
          <span className="field-label">Job name glob</span>
          <input className="input" value={glob} onChange={(e) => setGlob(e.target.value)} maxLength={200} placeholder="every job" />
        </label>
      </div>
      <fieldset className="webhook-events">
        <legend className="field-label">Events</legend>
        {WEBHOOK_EVENTS.map((e) => (
          <label key={e} className="webhook-event">
            <input type="checkbox" checked={events.includes(e)} onChange={() => toggle(e)} /> <code>{e}</code>
          </label>
        ))}
      </fieldset>
      <div className="webhook-form-foot">
        <button type="submit" className="btn btn-primary" disabled={create.isPending || events.length === 0}>
          Create
        </button>
        {events.length === 0 && <span className="muted">Pick at least one event.</span>}
      </div>
      {create.isError && (
        <div className="alert alert-error" role="alert">
          Not created: {create.error.message}
        </div>
      )}
    </form>
  );
}
