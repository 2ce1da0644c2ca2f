// jobdeck's embedded database thread: PGlite and its Prisma driver adapter (pglite-prisma-adapter)
// in a worker_threads Worker, so that PGlite's WebAssembly runs off the server's event loop.
// lib/db/pglite-worker.ts is the server side: it starts this file, documents the protocol and
// turns the answers back into driver-adapter results and errors.
//
// Why: PGlite executes every query synchronously in WebAssembly. In the server's thread that
// blocked the one event loop for each query (bench/README.md: PGlite + wasm ~53 % of the main
// thread while 1,000 jobs start), delaying every WebSocket message and launch behind it.
//
// Plain JavaScript importing only Node, the two packages and the extension list beside it
// (pglite-extensions.mjs): it never loads the server's code.
// Every message is `{id, op, a, tx}` (a: the operation's argument, tx: a transaction id) and gets
// exactly one answer `{id, ok: true, v}` or `{id, ok: false, e}`, e = {driver: <DriverAdapterError
// cause>} | {name, message, stack, props}; answers travel as arrays of one or more (see flush()).
// Unprompted: `{log: 'warn'|'error', msg, err}`.
import { parentPort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { pgliteExtensions } from './pglite-extensions.mjs';

if (!parentPort) throw new Error('pglite-worker-main.mjs runs as a worker thread (lib/db/pglite-worker.ts)');
const port = parentPort;

/** @type {PGlite | null} */
let pglite = null;
/** The adapter (PrismaPGliteAdapter) that Prisma's queries go through; null until `open`. */
let adapter = null;
/** Open interactive transactions (PGliteTransaction) by id. */
const txs = new Map();
let txSeq = 0;

// ColumnTypeEnum.Bytes / BytesArray (@prisma/driver-adapter-utils): columns whose values are Uint8Arrays.
const BYTES = 13;
const BYTES_ARRAY = 77;

/** The buffers of the Uint8Arrays in a result's byte columns (moved to the server, not copied). */
function byteBuffers(result) {
  const cols = [];
  result.columnTypes.forEach((t, i) => (t === BYTES || t === BYTES_ARRAY) && cols.push(i));
  if (!cols.length) return undefined;
  const out = new Set();
  const add = (v) => {
    if (v instanceof Uint8Array && v.byteLength && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) out.add(v.buffer);
    else if (Array.isArray(v)) v.forEach(add);
  };
  for (const row of result.rows) for (const i of cols) add(row[i]);
  return out.size ? [...out] : undefined;
}

function txOf(id) {
  const tx = txs.get(id);
  if (!tx) throw new Error(`PGlite worker: no open transaction ${id}`);
  return tx;
}

function opened() {
  if (!pglite || !adapter) throw new Error('PGlite worker: database not open');
  return adapter;
}

/** Runs one operation; returns `[value, transferList?]`. */
async function run(m) {
  switch (m.op) {
    case 'queryRaw': {
      const r = await (m.tx ? txOf(m.tx) : opened()).queryRaw(m.a);
      return [r, byteBuffers(r)];
    }
    case 'executeRaw':
      return [await (m.tx ? txOf(m.tx) : opened()).executeRaw(m.a)];
    case 'executeScript': {
      const a = opened();
      // Awaited here: the adapter's own executeScript() does not await pglite.exec(), so its
      // errors would be unhandled rejections instead of the caller's error.
      try {
        await pglite.exec(m.a);
      } catch (err) {
        a.onError(err);
      }
      return [undefined];
    }
    case 'startTransaction': {
      const tx = await opened().startTransaction(m.a ?? undefined);
      const id = ++txSeq;
      txs.set(id, tx);
      return [{ tx: id, options: tx.options }];
    }
    case 'commit':
    case 'rollback': {
      const tx = txOf(m.tx);
      txs.delete(m.tx);
      await (m.op === 'commit' ? tx.commit() : tx.rollback());
      return [undefined];
    }
    case 'dispose':
      await opened().dispose();
      return [undefined];
    case 'exec':
      opened();
      await pglite.exec(m.a);
      return [undefined];
    case 'query':
      opened();
      return [(await pglite.query(m.a.sql, m.a.params ?? [])).rows];
    case 'defaults':
      return [PGlite.defaultStartParams];
    case 'open': {
      if (pglite) throw new Error('PGlite worker: already open');
      const db = await PGlite.create(m.a.dataDir ?? undefined, { startParams: m.a.startParams, extensions: await pgliteExtensions() });
      const factory = new PrismaPGlite(db);
      pglite = db;
      adapter = await factory.connect();
      return [{ adapterName: factory.adapterName, connectionInfo: adapter.getConnectionInfo() }];
    }
    case 'close':
      if (pglite && !pglite.closed) await pglite.close();
      return [undefined];
    default:
      throw new Error(`PGlite worker: unknown operation ${JSON.stringify(m.op)}`);
  }
}

/** An error as the server side rebuilds it: a DriverAdapterError by its cause, else name, message and plain fields. */
function encodeError(err) {
  // isDriverAdapterError() of @prisma/driver-adapter-utils: the adapter bundles its own copy of the class.
  if (err && err.name === 'DriverAdapterError' && err.cause && typeof err.cause === 'object') return { driver: err.cause };
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), stack: undefined, props: {} };
  const props = {};
  for (const [k, v] of Object.entries(err)) {
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') props[k] = v;
  }
  return { name: err.name, message: err.message, stack: err.stack, props };
}

// Answers go out in batches: every answer ready by the end of this thread's current turn of its
// event loop (setImmediate), or sooner once the oldest has waited MAX_HOLD_MS. The server thread
// settles a batch in one tick, so the callers' next queries are issued together and Prisma's
// batching (findUnique calls of one tick → one query) works as it did with PGlite in the server's
// thread, where queued queries all finished within one turn. Measured while 1,000 jobs started
// (bench concurrent): the monitor's job reads (job, tasks, attempts) went out as ~3,900 queries
// each when answers were sent one by one, ~1,800 with a 5 ms hold, ~1,400 with 20 ms, ~200 with
// PGlite in the server's thread; 50 ms gave no further gain in time or CPU.
const MAX_HOLD_MS = 20;
let outbox = [];
let outboxTransfer = [];
let oldest = 0;
let flushQueued = false;

function flush() {
  flushQueued = false;
  if (!outbox.length) return;
  const batch = outbox;
  const transfer = outboxTransfer;
  outbox = [];
  outboxTransfer = [];
  try {
    port.postMessage(batch, transfer);
  } catch {
    // A value structured clone cannot copy: send the others, and that one's reason rather than never.
    for (const msg of batch) {
      try {
        port.postMessage([msg]);
      } catch (err) {
        port.postMessage([{ id: msg.id, ok: false, e: encodeError(err) }]);
      }
    }
  }
}

function answer(msg, transfer) {
  const now = performance.now();
  if (!outbox.length) oldest = now;
  outbox.push(msg);
  if (transfer) outboxTransfer.push(...transfer);
  if (now - oldest >= MAX_HOLD_MS) flush();
  else if (!flushQueued) {
    flushQueued = true;
    setImmediate(flush);
  }
}

port.on('message', (m) => {
  run(m).then(
    ([v, transfer]) => answer({ id: m.id, ok: true, v }, transfer),
    (err) => answer({ id: m.id, ok: false, e: encodeError(err) }),
  );
});

// A stray rejection (e.g. from inside PGlite) would end this thread and with it the database:
// report it to the server's log instead.
process.on('unhandledRejection', (err) => {
  port.postMessage({ log: 'error', msg: 'PGlite worker: unhandled rejection', err: encodeError(err) });
});
