/**
 * The webhook outbox's statements after its rows exist (docs/design.md §10 "Webhooks"): the
 * dispatcher's claim of runs (a lease, `FOR UPDATE SKIP LOCKED`, head-of-line per subscription),
 * extending and releasing a claim, the results it records under its claim (2xx answers many at
 * once), the delivery log, a test event and a redeliver. The rows are inserted by the guarded
 * write (outbox.ts).
 */
import type { Prisma, WebhookDelivery } from '../generated/prisma/client';
import { pgTimestamp } from './sql';
import type { Store, StoreScope } from './handle';

/** A delivery claimed for sending: the row, its claim's token. */
export type ClaimedDelivery = WebhookDelivery;

/** One try's outcome, as recorded on the row. */
export interface DeliveryResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** First ≤ 1 KiB of the response body, as text. */
  responseHead: string | null;
}

/** The delivery log's row: the delivery without its payload. */
export type DeliveryLogRow = Omit<WebhookDelivery, 'payload' | 'claimToken'>;

const LOG_SELECT = {
  id: true,
  subscriptionId: true,
  jobEventId: true,
  jobId: true,
  eventType: true,
  status: true,
  attempts: true,
  retryFrom: true,
  nextAttemptAt: true,
  claimedUntil: true,
  lastStatusCode: true,
  lastLatencyMs: true,
  lastError: true,
  responseHead: true,
  createdAt: true,
  deliveredAt: true,
} as const satisfies Prisma.WebhookDeliverySelect;

/**
 * Claims due deliveries for `leaseMs` under `token`, as runs: up to `limit` heads — each
 * subscription's earliest pending delivery by event id (head-of-line: its next event waits while
 * an earlier one is pending), when it is due (`nextAttemptAt` ≤ now), under no live claim, of an
 * enabled subscription; and test events, which have no event id and neither wait nor block —
 * each head followed by up to `run − 1` of its subscription's next pending deliveries, in event
 * order, as far as they are due and unclaimed (a run has no gaps). Answered in claim order: by
 * subscription, then event id. One statement: the heads are locked `FOR UPDATE SKIP LOCKED`, and a
 * run's other rows are claimed only with the head that a server locked, so servers sharing a
 * database never claim one row at once; a claim that expires (its server died) makes its rows
 * due again. docs/design.md §10 "Webhooks".
 */
export async function claimDeliveries(store: StoreScope, o: { limit: number; run: number; leaseMs: number; now: Date; token: string }): Promise<ClaimedDelivery[]> {
  const now = pgTimestamp(o.now);
  const until = pgTimestamp(new Date(o.now.getTime() + o.leaseMs));
  // The heads are found per subscription (its earliest pending event, one index probe each);
  // asking every due row "is an earlier one pending?" made a claim cost O(pending rows), and a
  // burst of n events O(n²) to send (bench/README.md "Webhooks"). Locking happens on the heads
  // only: a head another server holds is skipped, never the row behind it. A run stops at its
  // first row that is not due or is claimed (bool_and over event order), so it never skips one.
  const free = `(x."claimedUntil" IS NULL OR x."claimedUntil" < $1::timestamp(3))`;
  // Not prepared on PGlite (prepared.ts): the generic plan PostgreSQL settles on for it sent a
  // 1,000-delivery burst's tail in 4.2 s instead of 1.3 s (bench/README.md, fixes table).
  return store.prisma.$queryRawUnsafe<ClaimedDelivery[]>(
    `WITH heads AS (` +
      `SELECT h."id" FROM "WebhookSubscription" s CROSS JOIN LATERAL (SELECT d."id" FROM "WebhookDelivery" d` +
      ` WHERE d."subscriptionId" = s."id" AND d."status" = 'pending' AND d."jobEventId" IS NOT NULL ORDER BY d."jobEventId" LIMIT 1) h WHERE s."enabled"` +
      ` UNION ALL SELECT d."id" FROM "WebhookDelivery" d JOIN "WebhookSubscription" s ON s."id" = d."subscriptionId" AND s."enabled"` +
      ` WHERE d."status" = 'pending' AND d."jobEventId" IS NULL),` +
      ` c AS (SELECT d."id", d."subscriptionId", d."jobEventId" FROM "WebhookDelivery" d WHERE d."id" IN (SELECT "id" FROM heads) AND d."status" = 'pending'` +
      ` AND d."nextAttemptAt" <= $1::timestamp(3) AND (d."claimedUntil" IS NULL OR d."claimedUntil" < $1::timestamp(3))` +
      ` ORDER BY d."nextAttemptAt", d."jobEventId" LIMIT $2::int FOR UPDATE OF d SKIP LOCKED),` +
      ` tail AS (SELECT t."id" FROM c CROSS JOIN LATERAL (SELECT y."id", bool_and(y.ok) OVER (ORDER BY y."jobEventId") AS ok FROM` +
      ` (SELECT x."id", x."jobEventId", (x."nextAttemptAt" <= $1::timestamp(3) AND ${free}) AS ok FROM "WebhookDelivery" x` +
      ` WHERE x."subscriptionId" = c."subscriptionId" AND x."status" = 'pending' AND x."jobEventId" > c."jobEventId" ORDER BY x."jobEventId" LIMIT $5::int) y) t` +
      ` WHERE c."jobEventId" IS NOT NULL AND t.ok),` +
      ` u AS (UPDATE "WebhookDelivery" x SET "claimedUntil" = $3::timestamp(3), "claimToken" = $4::text` +
      ` WHERE x."id" IN (SELECT "id" FROM c UNION ALL SELECT "id" FROM tail) AND x."status" = 'pending' RETURNING x.*)` +
      ` SELECT * FROM u ORDER BY u."subscriptionId", u."jobEventId" NULLS FIRST, u."id"`,
    now,
    o.limit,
    until,
    o.token,
    Math.max(0, o.run - 1),
  );
}

/**
 * Makes the claim `token` of these rows last until `until` again (a run still being sent); how
 * many rows it still held — fewer means another server claimed some after the lease expired.
 */
export async function extendClaims(store: StoreScope, ids: readonly string[], token: string, until: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await store.prisma.$queryRawUnsafe<Array<{ id: string }>>(
    `UPDATE "WebhookDelivery" SET "claimedUntil" = $3::timestamp(3) WHERE "id" = ANY($1::text[]) AND "claimToken" = $2::text AND "status" = 'pending' RETURNING "id"`,
    [...ids],
    token,
    pgTimestamp(until),
  );
  return r.length;
}

/** Gives up the claim `token` of rows it did not send (the rest of a run): due again at once. */
export async function releaseClaims(store: StoreScope, ids: readonly string[], token: string): Promise<void> {
  if (ids.length === 0) return;
  await store.prisma.$executeRawUnsafe(
    `UPDATE "WebhookDelivery" SET "claimedUntil" = NULL, "claimToken" = NULL WHERE "id" = ANY($1::text[]) AND "claimToken" = $2::text AND "status" = 'pending'`,
    [...ids],
    token,
  );
}

/** When the next pending delivery of an enabled subscription is due (null: none pending). */
export async function nextDeliveryDue(store: StoreScope): Promise<Date | null> {
  const r = await store.prisma.$queryRawUnsafe<Array<{ at: Date | null }>>(
    `SELECT min(GREATEST(d."nextAttemptAt", COALESCE(d."claimedUntil", d."nextAttemptAt"))) AS at FROM "WebhookDelivery" d JOIN "WebhookSubscription" s ON s."id" = d."subscriptionId" AND s."enabled" WHERE d."status" = 'pending'`,
  );
  return r[0]?.at ?? null;
}

function resultData(r: DeliveryResult): Prisma.WebhookDeliveryUpdateManyMutationInput {
  return { lastStatusCode: r.statusCode, lastLatencyMs: r.latencyMs, lastError: r.error, responseHead: r.responseHead, claimedUntil: null, claimToken: null, attempts: { increment: 1 } };
}

/** A 2xx to record: which row, under which claim, what it answered, when. */
export interface Delivered {
  id: string;
  token: string;
  result: DeliveryResult;
  at: Date;
}

/**
 * Records 2xx answers, each under its claim, in one statement; answers the ids written (a row
 * whose claim was lost is left as it is).
 */
export async function recordDelivered(store: StoreScope, done: readonly Delivered[]): Promise<string[]> {
  if (done.length === 0) return [];
  const v = done.map((d) => ({ id: d.id, token: d.token, code: d.result.statusCode, ms: d.result.latencyMs, head: d.result.responseHead, at: pgTimestamp(d.at) }));
  const r = await store.prisma.$queryRawUnsafe<Array<{ id: string }>>(
    `UPDATE "WebhookDelivery" d SET "status" = 'delivered', "deliveredAt" = v."at"::timestamp(3), "lastStatusCode" = v."code", "lastLatencyMs" = v."ms",` +
      ` "lastError" = NULL, "responseHead" = v."head", "claimedUntil" = NULL, "claimToken" = NULL, "attempts" = d."attempts" + 1` +
      ` FROM jsonb_to_recordset($1::jsonb) AS v("id" text, "token" text, "code" int, "ms" int, "head" text, "at" text)` +
      ` WHERE d."id" = v."id" AND d."claimToken" = v."token" AND d."status" = 'pending' RETURNING d."id"`,
    JSON.stringify(v),
  );
  return r.map((x) => x.id);
}

/** Records a failed try under the claim `token`, due again at `next`; false when the claim was lost. */
export async function recordRetry(store: StoreScope, id: string, token: string, r: DeliveryResult, next: Date): Promise<boolean> {
  const u = await store.prisma.webhookDelivery.updateMany({ where: { id, claimToken: token, status: 'pending' }, data: { ...resultData(r), nextAttemptAt: next } });
  return u.count > 0;
}

/**
 * Records the last failed try of a delivery whose retry window is over: the row `failed`, and
 * its subscription disabled with `reason`, in one transaction. False when the claim was lost.
 */
export function recordGaveUp(store: Store, id: string, token: string, r: DeliveryResult, reason: string): Promise<boolean> {
  return store.prisma.$transaction(async (tx) => {
    const row = await tx.webhookDelivery.findFirst({ where: { id, claimToken: token, status: 'pending' }, select: { subscriptionId: true } });
    if (!row) return false;
    await tx.webhookDelivery.update({ where: { id }, data: { ...resultData(r), status: 'failed' } });
    await tx.webhookSubscription.update({ where: { id: row.subscriptionId }, data: { enabled: false, disabledReason: reason } });
    return true;
  });
}

/** A subscription's last `limit` deliveries, newest first. */
export function listDeliveries(store: StoreScope, subscriptionId: number, limit: number): Promise<DeliveryLogRow[]> {
  return store.prisma.webhookDelivery.findMany({ where: { subscriptionId }, orderBy: [{ createdAt: 'desc' }, { jobEventId: 'desc' }], take: limit, select: LOG_SELECT });
}

/** The notifications a job's events caused (oldest first, at most `limit`), with their subscription's name. */
export function jobNotifications(store: StoreScope, jobId: number, limit: number): Promise<Array<DeliveryLogRow & { subscription: { name: string } }>> {
  return store.prisma.webhookDelivery.findMany({
    where: { jobId },
    orderBy: [{ jobEventId: 'asc' }, { subscriptionId: 'asc' }],
    take: limit,
    select: { ...LOG_SELECT, subscription: { select: { name: true } } },
  });
}

/** Adds a test delivery (`eventType` "test", no JobEvent) for a subscription, due now. */
export function insertTestDelivery(store: StoreScope, subscriptionId: number, id: string, payload: Prisma.InputJsonValue): Promise<WebhookDelivery> {
  const now = new Date();
  return store.prisma.webhookDelivery.create({ data: { id, subscriptionId, eventType: 'test', payload, retryFrom: now, nextAttemptAt: now, createdAt: now } });
}

/**
 * Makes a delivery pending and due now again with a new retry window, under the same id (the
 * receiver de-duplicates on it). Null when there is no such delivery of the subscription.
 */
export async function redeliver(store: StoreScope, subscriptionId: number, id: string): Promise<DeliveryLogRow | null> {
  const now = new Date();
  const u = await store.prisma.webhookDelivery.updateMany({
    where: { id, subscriptionId },
    data: { status: 'pending', nextAttemptAt: now, retryFrom: now, claimedUntil: null, claimToken: null, deliveredAt: null },
  });
  return u.count ? store.prisma.webhookDelivery.findUnique({ where: { id }, select: LOG_SELECT }) : null;
}
