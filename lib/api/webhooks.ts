/**
 * The webhook API's operations (docs/design.md §10 "Webhooks"): subscriptions (create with a
 * generated secret shown once, change, enable / disable, rotate the secret, delete), their
 * delivery log, a test event, a redeliver, and the notifications a job's events caused. A URL is
 * checked for SSRF (lib/monitor/webhooks/url.ts) when it is set; the dispatcher checks it again
 * at every send. Secrets are sealed with the data folder's key (lib/monitor/webhooks/secret.ts)
 * and never answered again.
 */
import { randomUUID } from 'node:crypto';
import type { Prisma, WebhookSubscription } from '../generated/prisma/client';
import { allowPrivateFromEnv } from '../monitor/webhooks/config';
import { newWebhookSecret, sealSecret, webhookKey } from '../monitor/webhooks/secret';
import { checkWebhookUrl, WebhookUrlError } from '../monitor/webhooks/url';
import {
  countSubscriptions,
  createSubscription,
  deleteSubscription,
  insertTestDelivery,
  jobNotifications,
  listDeliveries,
  listSubscriptions,
  redeliver,
  subscriptionRow,
  updateSubscription,
  userNames,
  type DeliveryLogRow,
  type Store,
} from '../store';
import type { Actor } from '../jobs/roles';
import { record } from './audit';
import { badRequest, conflict, notFound } from './errors';
import { MAX_WEBHOOKS, type CreateWebhookSchema, type DeliveryView, type PatchWebhookSchema, type WebhookView } from './webhook-schemas';
import type { z } from 'zod';

/** What the operations need of the server: its store and its data folder (the key). */
export interface WebhookContext {
  store: Store;
  home: string;
}

function view(s: WebhookSubscription, owner: string | null): WebhookView {
  return {
    id: s.id,
    name: s.name,
    owner,
    url: s.url,
    events: s.events,
    jobNameGlob: s.jobNameGlob,
    metadataFilter: (s.metadataFilter as Record<string, unknown> | null) ?? null,
    namedOnly: s.namedOnly,
    format: s.format,
    enabled: s.enabled,
    disabledReason: s.disabledReason,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** A delivery row as the API shows it. */
export function deliveryView(d: DeliveryLogRow, subscription: string): DeliveryView {
  return {
    id: d.id,
    subscription,
    eventType: d.eventType,
    jobId: d.jobId,
    jobEventId: d.jobEventId,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
    lastStatusCode: d.lastStatusCode,
    lastLatencyMs: d.lastLatencyMs,
    lastError: d.lastError,
    responseHead: d.responseHead,
    createdAt: d.createdAt.toISOString(),
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
  };
}

/** @throws ApiError 400 naming the url's problem (not http(s), private range, unresolvable…). */
async function checkUrl(url: string): Promise<void> {
  try {
    await checkWebhookUrl(url, allowPrivateFromEnv());
  } catch (err) {
    if (err instanceof WebhookUrlError) throw badRequest(err.message, { field: 'url' });
    throw err;
  }
}

async function rowOrThrow(store: Store, name: string): Promise<WebhookSubscription> {
  const row = await subscriptionRow(store, name);
  if (!row || row.jobId !== null) throw notFound(`webhook ${name} is not defined`);
  return row;
}

/** Subscriptions as the API shows them, each with its creator's name (`owner`). */
async function views(store: Store, rows: WebhookSubscription[]): Promise<WebhookView[]> {
  const names = await userNames(store, rows.map((r) => r.userId));
  return rows.map((r) => view(r, r.userId === null ? null : (names.get(r.userId) ?? null)));
}

const viewOf = async (store: Store, row: WebhookSubscription): Promise<WebhookView> => (await views(store, [row]))[0];

/** Every operator subscription. */
export async function listWebhooks(store: Store): Promise<{ webhooks: WebhookView[] }> {
  return { webhooks: await views(store, await listSubscriptions(store)) };
}

/** One subscription. @throws ApiError 404. */
export async function getWebhook(store: Store, name: string): Promise<WebhookView> {
  return viewOf(store, await rowOrThrow(store, name));
}

/**
 * Creates a subscription with a new secret, answered this once; `actor` (who asked: its creator,
 * and the audit row's `webhook.create`).
 * @throws ApiError 400 for a refused URL or when MAX_WEBHOOKS exist; 409 when the name is taken.
 */
export async function createWebhook(c: WebhookContext, body: z.output<typeof CreateWebhookSchema>, actor: Actor | null = null): Promise<{ webhook: WebhookView; secret: string }> {
  await checkUrl(body.url);
  if ((await countSubscriptions(c.store)) >= MAX_WEBHOOKS) throw badRequest(`at most ${MAX_WEBHOOKS} webhooks: delete one first`);
  if (await subscriptionRow(c.store, body.name)) throw conflict(`webhook ${body.name} exists`);
  const secret = newWebhookSecret();
  const row = await createSubscription(c.store, {
    name: body.name,
    url: body.url,
    events: [...new Set(body.events)],
    jobNameGlob: body.jobNameGlob ?? null,
    metadataFilter: (body.metadataFilter ?? null) as Prisma.InputJsonValue | null,
    format: body.format ?? 'json',
    namedOnly: body.namedOnly ?? false,
    enabled: body.enabled ?? true,
    secretEnc: sealSecret(webhookKey(c.home), secret),
    userId: actor?.userId ?? null,
  }).catch((err: unknown) => {
    if ((err as { code?: string }).code === 'P2002') throw conflict(`webhook ${body.name} exists`);
    throw err;
  });
  await record(c.store, actor, 'webhook.create', `webhook:${row.name}`, { url: row.url, events: row.events, format: row.format });
  return { webhook: await viewOf(c.store, row), secret };
}

/** Changes a subscription (audited: `webhook.update`, the fields changed). @throws ApiError 400 for a refused URL; 404. */
export async function patchWebhook(store: Store, name: string, body: z.output<typeof PatchWebhookSchema>, actor: Actor | null = null): Promise<WebhookView> {
  await rowOrThrow(store, name);
  if (body.url !== undefined) await checkUrl(body.url);
  const row = await updateSubscription(store, name, {
    ...body,
    events: body.events ? [...new Set(body.events)] : undefined,
    metadataFilter: body.metadataFilter as Prisma.InputJsonValue | null | undefined,
    ...(body.enabled === false ? { disabledReason: 'disabled by an operator' } : {}),
  });
  if (!row) throw notFound(`webhook ${name} is not defined`);
  const changed = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
  await record(store, actor, 'webhook.update', `webhook:${name}`, { changed, ...(body.url !== undefined ? { url: body.url } : {}), ...(body.enabled !== undefined ? { enabled: body.enabled } : {}) });
  return viewOf(store, row);
}

/** A new secret for a subscription, answered this once (the old one stops signing at once; audited: `webhook.rotate`). @throws ApiError 404. */
export async function rotateWebhook(c: WebhookContext, name: string, actor: Actor | null = null): Promise<{ webhook: WebhookView; secret: string }> {
  await rowOrThrow(c.store, name);
  const secret = newWebhookSecret();
  const row = await updateSubscription(c.store, name, { secretEnc: sealSecret(webhookKey(c.home), secret) });
  if (!row) throw notFound(`webhook ${name} is not defined`);
  await record(c.store, actor, 'webhook.rotate', `webhook:${name}`);
  return { webhook: await viewOf(c.store, row), secret };
}

/** Deletes a subscription and its delivery log (audited: `webhook.delete`). @throws ApiError 404. */
export async function removeWebhook(store: Store, name: string, actor: Actor | null = null): Promise<void> {
  const row = await rowOrThrow(store, name);
  if (!(await deleteSubscription(store, name))) throw notFound(`webhook ${name} is not defined`);
  await record(store, actor, 'webhook.delete', `webhook:${name}`, { url: row.url });
}

/** A subscription's last deliveries, newest first. @throws ApiError 404. */
export async function webhookDeliveries(store: Store, name: string, limit: number): Promise<{ deliveries: DeliveryView[] }> {
  const row = await rowOrThrow(store, name);
  return { deliveries: (await listDeliveries(store, row.id, limit)).map((d) => deliveryView(d, row.name)) };
}

/** Queues a test event for a subscription (sent like any delivery, signed; audited: `webhook.test`). @throws ApiError 404. */
export async function testWebhook(store: Store, name: string, actor: Actor | null = null): Promise<DeliveryView> {
  const row = await rowOrThrow(store, name);
  const id = `msg_${randomUUID().replaceAll('-', '')}`;
  const payload = { type: 'test', timestamp: new Date().toISOString(), data: { message: `test event of webhook ${row.name}`, webhook: row.name } };
  const d = await insertTestDelivery(store, row.id, id, payload);
  store.bus.emit({ type: 'outbox', jobId: 0 });
  await record(store, actor, 'webhook.test', `webhook:${name}`, { delivery: id });
  return deliveryView(d, row.name);
}

/** Sends a delivery again (same id), with a new retry window (audited: `webhook.redeliver`). @throws ApiError 404. */
export async function redeliverWebhook(store: Store, name: string, id: string, actor: Actor | null = null): Promise<DeliveryView> {
  const row = await rowOrThrow(store, name);
  const d = await redeliver(store, row.id, id);
  if (!d) throw notFound(`webhook ${name} has no delivery ${id}`);
  store.bus.emit({ type: 'outbox', jobId: 0 });
  await record(store, actor, 'webhook.redeliver', `webhook:${name}`, { delivery: id });
  return deliveryView(d, row.name);
}

/** The notifications a job's events caused, oldest first. */
export async function jobNotificationList(store: Store, jobId: number, limit: number): Promise<{ deliveries: DeliveryView[] }> {
  return { deliveries: (await jobNotifications(store, jobId, limit)).map((d) => deliveryView(d, d.subscription.name)) };
}
