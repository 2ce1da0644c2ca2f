import { createWebhook, listWebhooks } from '@/lib/api/webhooks';
import { parseCreateWebhook } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/webhooks — WebhookList (no secrets). */
export const GET = route(async () => Response.json(await listWebhooks(services().store), { headers: { 'cache-control': 'no-store' } }));

/** POST /api/webhooks {name, url, events, jobNameGlob?, metadataFilter?, format?} — 201 {webhook, secret}: the secret is shown only here. */
export const POST = route(async (req, _params, { actor }) => {
  const s = services();
  const out = await createWebhook({ store: s.store, home: s.config.home }, await parseCreateWebhook(req), actor);
  return Response.json(out, { status: 201, headers: { 'cache-control': 'no-store', location: `/api/webhooks/${out.webhook.name}` } });
});
