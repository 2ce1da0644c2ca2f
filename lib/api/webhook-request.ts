/**
 * Parsing of the webhook API's paths, queries and bodies (lib/api/webhook-schemas.ts), every
 * problem a 400 that names the field.
 */
import { readJson, validate } from './request';
import { CreateWebhookSchema, DeliveryIdSchema, DeliveryQuerySchema, PatchWebhookSchema, WebhookNameSchema } from './webhook-schemas';

/** The subscription name of a path. @throws ApiError 400. */
export function parseWebhookName(raw: string | undefined): string {
  return validate(WebhookNameSchema, raw ?? '', 'name');
}

/** The delivery id of a path. @throws ApiError 400. */
export function parseDeliveryId(raw: string | undefined): string {
  return validate(DeliveryIdSchema, raw ?? '', 'delivery');
}

/** `?limit=` of a delivery list (default 50). @throws ApiError 400. */
export function parseDeliveryLimit(url: URL): number {
  return validate(DeliveryQuerySchema, Object.fromEntries(url.searchParams), 'query').limit ?? 50;
}

/** POST /api/webhooks. @throws ApiError 415, 413, 400. */
export async function parseCreateWebhook(req: Request) {
  return validate(CreateWebhookSchema, await readJson(req), 'request body');
}

/** PATCH /api/webhooks/{name}. @throws ApiError 415, 413, 400. */
export async function parsePatchWebhook(req: Request) {
  return validate(PatchWebhookSchema, await readJson(req), 'request body');
}
