import { getWebhook, patchWebhook, removeWebhook } from '@/lib/api/webhooks';
import { parsePatchWebhook, parseWebhookName } from '@/lib/api/webhook-request';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/webhooks/:name — the Webhook; 404 when not defined. */
export const GET = route<{ name: string }>(async (_req, { name }) => Response.json(await getWebhook(services().store, parseWebhookName(name)), { headers: { 'cache-control': 'no-store' } }));

/** PATCH /api/webhooks/:name {url?, events?, jobNameGlob?, metadataFilter?, format?, enabled?} — the Webhook. */
export const PATCH = route<{ name: string }>(async (req, { name }, { actor }) => {
  const n = parseWebhookName(name);
  return Response.json(await patchWebhook(services().store, n, await parsePatchWebhook(req), actor));
});

/** DELETE /api/webhooks/:name — 204 (its delivery log goes with it); 404 when not defined. */
export const DELETE = route<{ name: string }>(async (_req, { name }, { actor }) => {
  await removeWebhook(services().store, parseWebhookName(name), actor);
  return new Response(null, { status: 204 });
});
