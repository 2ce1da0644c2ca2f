import { webhookDeliveries } from '@/lib/api/webhooks';
import { parseDeliveryLimit, parseWebhookName } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/webhooks/:name/deliveries?limit= — WebhookDeliveryList, newest first. */
export const GET = route<{ name: string }>(async (req, { name }) => {
  const n = parseWebhookName(name);
  const limit = parseDeliveryLimit(new URL(req.url));
  return Response.json(await webhookDeliveries(services().store, n, limit), { headers: { 'cache-control': 'no-store' } });
});
