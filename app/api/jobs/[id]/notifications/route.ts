import { parseJobId } from '@/lib/api/request';
import { jobNotificationList } from '@/lib/api/webhooks';
import { parseDeliveryLimit } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/jobs/:id/notifications?limit= — WebhookDeliveryList: the notifications the job's events caused, oldest first. */
export const GET = route<{ id: string }>(async (req, { id }) => {
  const jobId = parseJobId(id);
  return Response.json(await jobNotificationList(services().store, jobId, parseDeliveryLimit(new URL(req.url))), { headers: { 'cache-control': 'no-store' } });
});
