import { redeliverWebhook } from '@/lib/api/webhooks';
import { parseDeliveryId, parseWebhookName } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/webhooks/:name/deliveries/:delivery/redeliver — 202 WebhookDelivery: sent again under the same id. */
export const POST = route<{ name: string; delivery: string }>(async (_req, { name, delivery }, { actor }) => {
  const n = parseWebhookName(name);
  return Response.json(await redeliverWebhook(services().store, n, parseDeliveryId(delivery), actor), { status: 202 });
});
