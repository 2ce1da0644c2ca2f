/**
 * Which errors are temporary database failures (docs/design.md §5 rule 6, from Ray's fix: "retry
 * temporary metadata-read failures on the next monitor iteration"). Such an error is retried with
 * backoff and is never the reason a job becomes FAILED or FAILED_CONTROLLER.
 */

/** Prisma error codes that mean "the database is (for now) unreachable or busy". */
const TRANSIENT_PRISMA_CODES = new Set([
  'P1001', // can't reach database server
  'P1002', // database server reached but timed out
  'P1008', // operations timed out
  'P1017', // server has closed the connection
  'P2024', // timed out fetching a new connection from the pool
  'P2028', // transaction API error (e.g. unable to start a transaction in the given time)
  'P2034', // transaction failed due to a write conflict or a deadlock
]);

/** Driver-adapter error kinds (Prisma 7 `meta.driverAdapterError.cause.kind`) that are temporary. */
const TRANSIENT_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TransactionWriteConflict']);

/** Node.js socket error codes. */
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** PostgreSQL SQLSTATEs: connection exceptions (08xxx), admin/crash shutdown, serialization, deadlock. */
const TRANSIENT_SQLSTATES = /^(08...|57P01|57P02|57P03|40001|40P01|53300)$/;

const TRANSIENT_MESSAGE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|Connection terminated|connection (?:is )?closed|Can't reach database|timed out|timeout exceeded|too many clients|the database system is (?:starting up|shutting down)/i;

/** Thrown by the monitor's fault seam (tests) to stand for a temporary database failure. */
export class TransientDatabaseError extends Error {
  readonly code = 'P1001';
  constructor(message = "Can't reach database server (injected)") {
    super(message);
    this.name = 'TransientDatabaseError';
  }
}

/**
 * True when `err` (or anything in its `cause` chain) is a temporary database failure: an
 * unreachable server, a closed connection, a timeout, a pool exhaustion, a serialization or
 * deadlock abort. False for everything else (bugs, constraint violations, executor errors).
 */
export function isTransientDbError(err: unknown): boolean {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    if (e instanceof TransientDatabaseError) return true;
    const o = e as { code?: unknown; kind?: unknown; originalCode?: unknown; message?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: string; originalCode?: string } } }; cause?: unknown; name?: unknown };
    if (typeof o.code === 'string') {
      if (TRANSIENT_PRISMA_CODES.has(o.code) || TRANSIENT_NODE_CODES.has(o.code) || TRANSIENT_SQLSTATES.test(o.code)) return true;
    }
    if (typeof o.kind === 'string' && TRANSIENT_ADAPTER_KINDS.has(o.kind)) return true;
    if (typeof o.originalCode === 'string' && (TRANSIENT_SQLSTATES.test(o.originalCode) || TRANSIENT_NODE_CODES.has(o.originalCode))) return true;
    const cause = o.meta?.driverAdapterError?.cause;
    if (cause?.kind && TRANSIENT_ADAPTER_KINDS.has(cause.kind)) return true;
    if (cause?.originalCode && TRANSIENT_SQLSTATES.test(cause.originalCode)) return true;
    if (o.name === 'PrismaClientInitializationError') return true;
    if (typeof o.message === 'string' && TRANSIENT_MESSAGE.test(o.message)) return true;
    e = o.cause ?? (o.meta?.driverAdapterError as unknown);
  }
  return false;
}

/**
 * True when an executor says its backend is only temporarily unavailable: the error (or its
 * cause chain) carries `transient: true` (lib/executors/types.ts contract; e.g. the Slurm
 * controller does not answer `scontrol ping`). Like a database outage, it is retried and never
 * turns a healthy job into a lost attempt or FAILED_CONTROLLER.
 */
export function isTransientExecutorError(err: unknown): boolean {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    if ((e as { transient?: unknown }).transient === true) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * True when a launch error says the task's own spec makes the launch impossible (`precheck:
 * true`, lib/executors LaunchPrecheckError): the task ends FAILED_PRECHECKS, no recovery.
 */
export function isPrecheckError(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { precheck?: unknown }).precheck === true;
}

/** A temporary failure of either the database or an executor's backend. */
export function isTransientError(err: unknown): boolean {
  return isTransientDbError(err) || isTransientExecutorError(err);
}
