import { rotateWebhook } from '@/lib/api/webhooks';
import { parseWebhookName } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/webhooks/:name/rotate — {webhook, secret}: a new secret, shown only here; the old one stops signing. */
export const POST = route<{ name: string }>(async (_req, { name }, { actor }) => {
  const s = services();
  return Response.json(await rotateWebhook({ store: s.store, home: s.config.home }, parseWebhookName(name), actor), { headers: { 'cache-control': 'no-store' } });
});
