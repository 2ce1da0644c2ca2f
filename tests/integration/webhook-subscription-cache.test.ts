/**
 * The store's copy of "is any webhook subscription enabled" (lib/store/webhook-subscriptions.ts
 * anySubscription; docs/design.md §10 "Webhooks"), which every guarded write with a notification
 * asks: callers that find no fresh copy while a read is under way share that read (a burst of
 * launches on a busy embedded database read it once, not once each), and a subscription made
 * through the store is heard at once.
 */
import { describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createStore, createSubscription } from '../../lib/store';
import { anySubscription } from '../../lib/store/webhook-subscriptions';

/** `db` with its `webhookSubscription.count` calls counted (everything else passed through). */
function countingSubscriptionCounts(db: PrismaClient): { db: PrismaClient; calls: () => number } {
  let n = 0;
  const subs = new Proxy(db.webhookSubscription, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'count' || typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        n++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const wrapped = new Proxy(db, {
    get(target, prop) {
      if (prop === 'webhookSubscription') return subs;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { db: wrapped, calls: () => n };
}

describe.each(DB_KINDS)('anySubscription on %s', (kind) => {
  const t = useDatabase(kind, `webhook-cache-${kind}`);

  it('concurrent callers share one read; a subscription made through the store is heard by the next call', async () => {
    const counted = countingSubscriptionCounts(t.prisma);
    const store = createStore(counted.db);
    const answers = await Promise.all(Array.from({ length: 20 }, () => anySubscription(store)));
    expect(answers).toEqual(Array.from({ length: 20 }, () => false));
    expect(counted.calls()).toBe(1);
    // A call within the copy's life reads nothing.
    expect(await anySubscription(store)).toBe(false);
    expect(counted.calls()).toBe(1);
    await createSubscription(store, { name: 'cache-test', url: 'http://127.0.0.1:9/hook', events: ['*'], format: 'json', secretEnc: 'x' });
    expect(await anySubscription(store)).toBe(true);
    expect(counted.calls()).toBe(2);
  });
});
