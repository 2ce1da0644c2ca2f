'use client';
/**
 * The job page's "Notifications" section: the webhook deliveries this job's events caused
 * (GET /api/jobs/:id/notifications), each with its subscription, event and status. Hidden when
 * there are none.
 */
import { useQuery } from '@tanstack/react-query';
import { webhookApi } from '@/lib/ui/api';

export function JobNotifications({ jobId, live }: { jobId: number; live: boolean }) {
  const q = useQuery({ queryKey: ['jobs', 'notifications', jobId], queryFn: ({ signal }) => webhookApi.jobNotifications(jobId, signal), refetchInterval: live ? 3000 : 10_000 });
  const ds = q.data?.deliveries ?? [];
  if (ds.length === 0) return null;
  return (
    <section className="card job-notifications" aria-label="Notifications">
      <h3>Notifications</h3>
      <ul>
        {ds.map((d) => (
          <li key={d.id} title={d.lastError ?? d.id}>
            <a href="/webhooks">{d.subscription}</a> · {d.eventType} · <span className={`webhook-status-${d.status}`}>{d.status}</span>
            {d.lastStatusCode !== null ? ` (${d.lastStatusCode})` : ''}
            {d.attempts > 1 ? ` · ${d.attempts} tries` : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}
