/**
 * Tells a database that cannot be reached for the moment (PostgreSQL restarting, failing over,
 * the network between them cut, its connection slots full) from every other failure, so that the
 * API answers 503 with Retry-After — a client retries, and a submit that carries a submission id
 * may safely be sent again — instead of 500, which says the server is broken (docs/design.md §9).
 *
 * What it recognises, anywhere in the error's `cause` / `meta` chain: Prisma's connection error
 * codes (P1001 can't reach, P1002 timed out, P1008 operation timed out, P1017 server closed the
 * connection, P2024 no connection from the pool in time, P2037 too many connections), the pg driver
 * adapter's kinds (DatabaseNotReachable, ConnectionClosed, SocketTimeout, TooManyConnections),
 * PostgreSQL's SQLSTATEs of class 08 (connection exception), 57P01–57P03 (shutting down, crashed,
 * starting up) and 53300 (too many connections), socket error codes, and the pg client's own
 * "Connection terminated" messages.
 */

const PRISMA_CODES: Record<string, string> = {
  P1001: 'the database server cannot be reached',
  P1002: 'the database server timed out',
  P1008: 'the database operation timed out',
  P1017: 'the database server closed the connection',
  P2024: 'no database connection was free in time',
  P2037: 'the database has too many connections',
};
const ADAPTER_KINDS: Record<string, string> = {
  DatabaseNotReachable: 'the database server cannot be reached',
  ConnectionClosed: 'the database connection closed',
  SocketTimeout: 'the database connection timed out',
  TooManyConnections: 'the database has too many connections',
};
const SQLSTATES: Record<string, string> = {
  '57P01': 'the database server is shutting down',
  '57P02': 'the database server crashed',
  '57P03': 'the database server is starting up',
  '53300': 'the database has too many connections',
};
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const MESSAGES: Array<[RegExp, string]> = [
  [/Connection terminated/i, 'the database connection closed'],
  [/timeout exceeded when trying to connect/i, 'the database server did not answer in time'],
  [/Client has encountered a connection error/i, 'the database connection failed'],
  [/the database system is (starting up|shutting down|in recovery mode)/i, 'the database server is restarting'],
];

function reasonOf(e: Record<string, unknown>): string | null {
  const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : undefined;
  if (code && PRISMA_CODES[code]) return PRISMA_CODES[code];
  if (code && SQLSTATES[code]) return SQLSTATES[code];
  if (code && /^08[0-9A-Z]{3}$/.test(code)) return 'the database connection failed';
  if (code && SOCKET_CODES.has(code)) return `the database connection failed (${code})`;
  if (typeof e.kind === 'string' && ADAPTER_KINDS[e.kind]) return ADAPTER_KINDS[e.kind];
  const message = typeof e.message === 'string' ? e.message : '';
  for (const [re, why] of MESSAGES) if (re.test(message)) return why;
  return null;
}

/**
 * Why `err` means the database is unreachable for now (a short phrase for the answer, without
 * host names or the database's own text), or null for any other error.
 */
export function databaseUnavailable(err: unknown): string | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length && seen.size < 32) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const o = e as Record<string, unknown>;
    const why = reasonOf(o);
    if (why) return why;
    queue.push(o.cause, o.meta, o.driverAdapterError, ...(Array.isArray(o.errors) ? o.errors : []));
  }
  return null;
}
