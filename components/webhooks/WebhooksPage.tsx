'use client';
/**
 * The /webhooks page (docs/design.md §10 "Webhooks"; admins — the navigation and the page frame
 * show it to no one else): the subscriptions, a form that creates one (its signing secret is shown
 * once, right after), per subscription enable / disable, send a test event, rotate the secret
 * (shown once), delete, and its delivery log with redeliver (Deliveries).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { WebhookView } from '@/lib/api/types';
import { webhookApi } from '@/lib/ui/api';
import { ConfirmButton } from '../ConfirmButton';
import { Deliveries } from './Deliveries';
import { WEBHOOKS_KEY, WebhookForm } from './WebhookForm';

function SecretOnce({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  return (
    <div className="card webhook-secret" role="alert">
      <h2>Signing secret of {name}</h2>
      <p>Copy it now: it is shown only this once. Receivers verify each request&apos;s webhook-signature with it.</p>
      <code data-testid="webhook-secret">{secret}</code>
      <button type="button" className="btn btn-sm" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

function Row({ w, open, onOpen, onSecret }: { w: WebhookView; open: boolean; onOpen: () => void; onSecret: (name: string, s: string) => void }) {
  const qc = useQueryClient();
  const done = () => void qc.invalidateQueries({ queryKey: WEBHOOKS_KEY });
  const [error, setError] = useState<string | null>(null);
  const fail = (what: string) => (e: Error) => setError(`${what}: ${e.message}`);
  const enable = useMutation({ mutationFn: () => webhookApi.setEnabled(w.name, !w.enabled), onSuccess: done, onError: fail('Not changed') });
  const test = useMutation({ mutationFn: () => webhookApi.test(w.name), onSuccess: () => void qc.invalidateQueries({ queryKey: ['webhooks', w.name, 'deliveries'] }), onError: fail('Test event not queued') });
  const rotate = useMutation({ mutationFn: () => webhookApi.rotate(w.name), onSuccess: (r) => onSecret(r.webhook.name, r.secret), onError: fail('Secret not rotated') });
  const remove = useMutation({ mutationFn: () => webhookApi.remove(w.name), onSuccess: done, onError: fail('Not deleted') });
  return (
    <li className="card webhook-row" data-webhook={w.name}>
      <div className="webhook-title">
        <button type="button" className="webhook-name" aria-expanded={open} onClick={onOpen} title={open ? 'Hide the delivery log' : 'Show the delivery log'}>
          <span aria-hidden="true">{open ? '▾' : '▸'}</span> <strong>{w.name}</strong>
        </button>
        <span className={`badge tone-${w.enabled ? 'success' : 'neutral'}`}>{w.enabled ? 'enabled' : 'disabled'}</span>
        <span className="muted">{w.format}</span>
        {w.owner && (
          <span className="muted" data-testid="webhook-owner" title="Who created it">
            by {w.owner}
          </span>
        )}
        <span className="grow" />
        <div className="webhook-actions">
          <button type="button" className="btn btn-sm" onClick={() => enable.mutate()} disabled={enable.isPending}>
            {w.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" className="btn btn-sm" onClick={() => test.mutate()} disabled={test.isPending}>
            Send test event
          </button>
          <button type="button" className="btn btn-sm" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
            Rotate secret
          </button>
          <ConfirmButton className="btn btn-sm btn-danger" confirmLabel="Confirm delete" ariaLabel={`Delete webhook ${w.name}`} onConfirm={() => remove.mutate()} disabled={remove.isPending}>
            Delete
          </ConfirmButton>
        </div>
      </div>
      <dl className="webhook-facts">
        <div>
          <dt>URL</dt>
          <dd>
            <code className="webhook-url">{w.url}</code>
          </dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd>{w.events.join(', ')}</dd>
        </div>
        <div>
          <dt>Jobs</dt>
          <dd>{w.namedOnly ? 'those whose spec names it' : w.jobNameGlob ? <code>{w.jobNameGlob}</code> : 'every job'}</dd>
        </div>
      </dl>
      {!w.enabled && w.disabledReason && <p className="muted webhook-note">{w.disabledReason}</p>}
      {error && (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      )}
      {open && <Deliveries name={w.name} />}
    </li>
  );
}

/** The page (see the module comment). */
export function WebhooksPage() {
  const list = useQuery({ queryKey: WEBHOOKS_KEY, queryFn: ({ signal }) => webhookApi.list(signal) });
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const onSecret = (name: string, s: string) => setSecret({ name, secret: s });
  return (
    <div className="webhooks-page">
      <div className="page-head">
        <h1>Webhooks</h1>
      </div>
      <p className="muted webhooks-lead">Job events POSTed to your URL, signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature).</p>
      {secret && <SecretOnce name={secret.name} secret={secret.secret} onDone={() => setSecret(null)} />}
      {list.isError && <div className="alert alert-error">Could not load the webhooks: {list.error.message}</div>}
      <ul className="webhook-list" aria-label="Webhooks">
        {list.data?.webhooks.map((w) => (
          <Row key={w.id} w={w} open={open === w.name} onOpen={() => setOpen(open === w.name ? null : w.name)} onSecret={onSecret} />
        ))}
      </ul>
      {list.data?.webhooks.length === 0 && <div className="card empty webhook-empty">No webhooks yet. Create one below to be told when jobs fail.</div>}
      <WebhookForm onCreated={onSecret} />
    </div>
  );
}
