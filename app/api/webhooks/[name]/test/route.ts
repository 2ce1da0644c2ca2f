import { testWebhook } from '@/lib/api/webhooks';
import { parseWebhookName } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** POST /api/webhooks/:name/test — 202 WebhookDelivery: a signed test event, queued now. */
export const POST = route<{ name: string }>(async (_req, { name }, { actor }) => Response.json(await testWebhook(services().store, parseWebhookName(name), actor), { status: 202 }));
