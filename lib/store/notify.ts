/**
 * The NOTIFY of the store bus across servers (docs/design.md "Replicas", "Events from any
 * server"): one statement per payload on a PostgreSQL channel. The listening side is a session
 * of its own (lib/server/relay.ts).
 */
import type { Store } from './handle';

/**
 * Sends `payload` on `channel` (`pg_notify`; PostgreSQL only). `channel` is a fixed word of the
 * caller, never input: it is part of the statement's text; the payload is a parameter.
 */
export async function notifyChannel(store: Store, channel: string, payload: string): Promise<void> {
  if (!/^[a-z_]+$/.test(channel)) throw new Error(`notifyChannel: channel ${JSON.stringify(channel)} is not a plain word`);
  // executeRaw: pg_notify() answers void, a column Prisma's raw query cannot decode.
  await store.prisma.$executeRawUnsafe(`SELECT pg_notify('${channel}', $1)`, payload);
}
