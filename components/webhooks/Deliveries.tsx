'use client';
/**
 * A subscription's delivery log (GET /api/webhooks/:name/deliveries, read every 3 s while open):
 * newest first, each with when its event was queued, the event and job, its status, how many
 * tries it took, the last answer's code and latency, when the next try is due (a pending one:
 * the retries back off, docs/design.md §10) and the last answer or error — and Redeliver.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import type { DeliveryView } from '@/lib/api/types';
import { webhookApi } from '@/lib/ui/api';
import { formatExact, formatRelative } from '@/lib/ui/format';
import { useNow } from '@/lib/ui/hooks';
import { RelativeTime } from '../Time';

const TONE: Record<DeliveryView['status'], string> = { delivered: 'success', failed: 'error', pending: 'pending' };

/** The status pill: delivered, failed, pending — "retrying" once a try has failed. */
function DeliveryStatus({ d }: { d: DeliveryView }) {
  const text = d.status === 'pending' && d.attempts > 0 ? 'retrying' : d.status;
  return (
    <span className={`badge tone-${TONE[d.status]}`} data-status={d.status}>
      {text}
    </span>
  );
}

/** When the next try is due: "in 12 seconds" for a pending delivery, "—" otherwise. */
function NextTry({ d, now }: { d: DeliveryView; now: number }) {
  if (d.status !== 'pending' || !d.nextAttemptAt) return <span className="faint">—</span>;
  return (
    <time dateTime={d.nextAttemptAt} title={formatExact(d.nextAttemptAt)}>
      {Date.parse(d.nextAttemptAt) <= now ? 'due now' : formatRelative(d.nextAttemptAt, now)}
    </time>
  );
}

export function Deliveries({ name }: { name: string }) {
  const qc = useQueryClient();
  const key = ['webhooks', name, 'deliveries'];
  const q = useQuery({ queryKey: key, queryFn: ({ signal }) => webhookApi.deliveries(name, signal), refetchInterval: 3000 });
  const again = useMutation({ mutationFn: (id: string) => webhookApi.redeliver(name, id), onSuccess: () => void qc.invalidateQueries({ queryKey: key }) });
  const now = useNow(1000);
  if (q.isError) return <div className="alert alert-error">Could not load the deliveries: {q.error.message}</div>;
  if (!q.data) return <p className="muted webhook-note">Loading deliveries…</p>;
  if (q.data.deliveries.length === 0) return <p className="muted webhook-note">No deliveries yet. Send a test event to try the URL.</p>;
  return (
    <div className="table-wrap webhook-log-wrap">
      <table className="table webhook-log" aria-label={`Deliveries of ${name}`}>
        <thead>
          <tr>
            <th scope="col">Queued</th>
            <th scope="col">Event</th>
            <th scope="col">Job</th>
            <th scope="col">Status</th>
            <th scope="col" className="col-num" title="Tries so far (the first and every retry)">
              Tries
            </th>
            <th scope="col" className="col-num" title="The last answer's HTTP status">
              HTTP
            </th>
            <th scope="col" className="col-num">Latency</th>
            <th scope="col">Next try</th>
            <th scope="col">Answer / error</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {q.data.deliveries.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <td className="nowrap" title={d.id}>
                <RelativeTime iso={d.createdAt} now={now} />
              </td>
              <td>
                <code>{d.eventType}</code>
              </td>
              <td>{d.jobId === null ? <span className="faint">—</span> : <Link prefetch={false} href={`/jobs/${d.jobId}`}>#{d.jobId}</Link>}</td>
              <td>
                <DeliveryStatus d={d} />
              </td>
              <td className="col-num" data-testid="delivery-tries">
                {d.attempts}
              </td>
              <td className="col-num">{d.lastStatusCode ?? <span className="faint">—</span>}</td>
              <td className="col-num nowrap">{d.lastLatencyMs === null ? <span className="faint">—</span> : `${d.lastLatencyMs} ms`}</td>
              <td className="nowrap" data-testid="delivery-next">
                <NextTry d={d} now={now} />
              </td>
              <td className="webhook-head" title={d.lastError ?? d.responseHead ?? undefined}>
                {d.lastError ?? d.responseHead ?? ''}
              </td>
              <td>
                <button type="button" className="btn btn-sm" onClick={() => again.mutate(d.id)} disabled={again.isPending}>
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
