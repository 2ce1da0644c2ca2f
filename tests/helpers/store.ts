import type { PrismaClient } from '../../lib/generated/prisma/client';
import { createStore, type Store } from '../../lib/store';

const stores = new WeakMap<PrismaClient, Store>();

/**
 * The one store of a test database's client, built on first use: everything a test runs on one
 * client (submits, the monitor, the WebSocket hub, the test's own writes) shares its bus, as the
 * server's parts share the server's store.
 */
export function storeOf(prisma: PrismaClient): Store {
  let s = stores.get(prisma);
  if (!s) stores.set(prisma, (s = createStore(prisma)));
  return s;
}
