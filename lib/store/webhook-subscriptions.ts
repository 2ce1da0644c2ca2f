/**
 * The webhook subscriptions' statements (docs/design.md §10 "Webhooks"): create, read, change,
 * delete. The outbox rows themselves are written by the guarded write (outbox.ts); their sends
 * by webhook-deliveries.ts. The secret is stored as the caller encrypted it (`secretEnc`).
 */
import { Prisma, type WebhookSubscription } from '../generated/prisma/client';
import type { StoreScope } from './handle';

/** A new subscription, validated by the caller (lib/api/webhooks.ts). */
export interface NewSubscription {
  name: string;
  url: string;
  events: string[];
  jobNameGlob?: string | null;
  metadataFilter?: Prisma.InputJsonValue | null;
  format: 'json' | 'slack';
  secretEnc: string;
  /** Only jobs whose spec names it (`notify:`). */
  namedOnly?: boolean;
  enabled?: boolean;
  /** The job whose spec asked for it (`notify:`). */
  jobId?: number | null;
  /** Who created it (User.id). */
  userId?: number | null;
}

/** Fields of a subscription a change may set. */
export type SubscriptionPatch = Partial<Pick<NewSubscription, 'url' | 'events' | 'jobNameGlob' | 'format' | 'secretEnc' | 'enabled' | 'namedOnly'>> & {
  metadataFilter?: Prisma.InputJsonValue | null;
  disabledReason?: string | null;
};

/** How long anySubscription() answers from its copy (ms): another server's new subscription is heard within this. */
export const WEBHOOK_CACHE_MS = 1000;

/**
 * Whether any enabled subscription exists — the guarded write leaves its outbox out when none
 * does (outbox.ts), so jobdeck without webhooks pays nothing for them. Answered from the store's
 * copy (WEBHOOK_CACHE_MS, dropped by every change made through this store); inside a caller's
 * transaction there is no copy and the answer is true.
 */
export async function anySubscription(store: StoreScope, nowMs = Date.now()): Promise<boolean> {
  if (!('webhookCache' in store)) return true;
  const c = store.webhookCache;
  if (c && nowMs >= c.atMs && nowMs - c.atMs < WEBHOOK_CACHE_MS) return c.any;
  // Callers while a read is under way share it: on a busy embedded database a read can take longer
  // than WEBHOOK_CACHE_MS, and every launch of a burst then read it again (one per guarded write).
  const r = reading.get(store);
  if (r && nowMs >= r.atMs && nowMs - r.atMs < WEBHOOK_CACHE_MS) return r.any;
  const entry = { atMs: nowMs, any: store.prisma.webhookSubscription.count({ where: { enabled: true }, take: 1 }).then((n) => n > 0) };
  reading.set(store, entry);
  try {
    const any = await entry.any;
    // Not when a change dropped the copy meanwhile: this read may predate it.
    if (reading.get(store) === entry) store.webhookCache = { any, atMs: nowMs };
    return any;
  } finally {
    if (reading.get(store) === entry) reading.delete(store);
  }
}

/** anySubscription()'s read under way per store, and when it began (ms). */
const reading = new WeakMap<StoreScope, { atMs: number; any: Promise<boolean> }>();

/** Drops the store's copy and any read under way (a change made through it). */
function changed(store: StoreScope): void {
  if ('webhookCache' in store) store.webhookCache = null;
  reading.delete(store);
}

/** How a subscription is named in a path: its numeric id or its name. */
function where(ref: number | string): Prisma.WebhookSubscriptionWhereUniqueInput {
  return typeof ref === 'number' ? { id: ref } : { name: ref };
}

/**
 * Creates a subscription.
 * @throws Prisma P2002 when the name is taken.
 */
export async function createSubscription(store: StoreScope, s: NewSubscription): Promise<WebhookSubscription> {
  const row = await store.prisma.webhookSubscription.create({
    data: { ...s, metadataFilter: s.metadataFilter ?? undefined, jobNameGlob: s.jobNameGlob ?? null, jobId: s.jobId ?? null },
  });
  changed(store);
  return row;
}

/** Operator subscriptions (not the per-job ones of `notify:`), by name. */
export function listSubscriptions(store: StoreScope): Promise<WebhookSubscription[]> {
  return store.prisma.webhookSubscription.findMany({ where: { jobId: null }, orderBy: { name: 'asc' } });
}

/** Operator subscriptions (the limit on how many may exist counts these). */
export function countSubscriptions(store: StoreScope): Promise<number> {
  return store.prisma.webhookSubscription.count({ where: { jobId: null } });
}

/** One subscription by id or name; null when there is none. */
export function subscriptionRow(store: StoreScope, ref: number | string): Promise<WebhookSubscription | null> {
  return store.prisma.webhookSubscription.findUnique({ where: where(ref) });
}

/** Subscriptions by id (the dispatcher's read for the rows it claimed). */
export function subscriptionsById(store: StoreScope, ids: number[]): Promise<WebhookSubscription[]> {
  return store.prisma.webhookSubscription.findMany({ where: { id: { in: ids } } });
}

/** Changes a subscription; null when there is none. Enabling clears the disabled reason. */
export async function updateSubscription(store: StoreScope, ref: number | string, patch: SubscriptionPatch): Promise<WebhookSubscription | null> {
  const data: Prisma.WebhookSubscriptionUpdateManyMutationInput = { ...patch, metadataFilter: patch.metadataFilter === null ? Prisma.DbNull : patch.metadataFilter };
  if (patch.enabled === true) data.disabledReason = null;
  const r = await store.prisma.webhookSubscription.updateMany({ where: typeof ref === 'number' ? { id: ref } : { name: ref }, data });
  changed(store);
  return r.count ? subscriptionRow(store, ref) : null;
}

/** Deletes a subscription and its deliveries (cascade); false when there was none. */
export async function deleteSubscription(store: StoreScope, ref: number | string): Promise<boolean> {
  const r = await store.prisma.webhookSubscription.deleteMany({ where: typeof ref === 'number' ? { id: ref } : { name: ref } });
  changed(store);
  return r.count > 0;
}
