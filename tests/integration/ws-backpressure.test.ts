import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_CHUNK_BYTES } from '../../lib/logs/protocol';
import type { StreamMessage } from '../../lib/api/types';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { ByteLedger, JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

/**
 * A SUCCEEDED one-task job whose attempt 1 left a log of `mib` MiB of random bytes, through the
 * real store; with the log's sha256.
 */
async function finishedJobWithLog(prisma: PrismaClient, logDir: string, mib: number): Promise<{ d: JobDriver; sha256: string }> {
  const d = await JobDriver.create(prisma, logDir);
  const a = await d.startAttempt(0, 1);
  const file = d.logPath(0, 1);
  mkdirSync(path.dirname(file), { recursive: true });
  const hash = createHash('sha256');
  const fd = openSync(file, 'w');
  for (let n = 0; n < mib; n++) {
    const piece = randomBytes(1024 * 1024);
    hash.update(piece);
    writeSync(fd, piece);
  }
  closeSync(fd);
  await d.endAttempt(a, 'SUCCEEDED', 0);
  await d.endTask(0, 'SUCCEEDED', 0);
  await d.endJob('SUCCEEDED');
  return { d, sha256: hash.digest('hex') };
}

/**
 * Backpressure: a client that stops reading makes the server stop reading the log (bounded
 * buffer, bounded memory), is cut off after the stall timeout with a resume position, and
 * resumes from it to get the rest exactly once.
 */
describe.each(DB_KINDS)('slow job-stream client (%s)', (kind) => {
  const tdb = useDatabase(kind, `ws-backpressure-${kind}`);
  let srv: WsServer;
  let logDir: string;
  const HIGH_WATER = 1024 * 1024;
  const STALL_MS = 1500;

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-ws-bp-'));
    srv = await startWsServer(tdb.db, { highWater: HIGH_WATER, stallMs: STALL_MS, closeGraceMs: 30_000 });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('concurrent replays share the hub\'s frame buffers, and every byte arrives', async () => {
    const total = 8 * 1024 * 1024;
    const { d } = await finishedJobWithLog(tdb.db.prisma, logDir, total / (1024 * 1024));
    const ledgers = Array.from({ length: 12 }, () => new ByteLedger());
    const clients = await Promise.all(ledgers.map((l) => StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}`, l)));
    for (const c of clients) expect(await c.done(30_000)).toMatchObject({ code: 1000 });
    for (const l of ledgers) expect(l.next.get('0/1')).toBe(total);
    // Per-stream pools would leave the hub's empty. Bounded by twice the frames in flight that
    // the send budget allows (16 MiB of 256 KiB frames by default).
    expect(srv.hub.spareFrames()).toBeGreaterThan(0);
    expect(srv.hub.spareFrames()).toBeLessThanOrEqual(2 * Math.ceil(srv.hub.limits.totalHighWater / srv.hub.limits.chunkBytes));
  });

  it('is cut off past the cap with a resume position, the server buffers a bounded amount, and resuming gets every byte once', async () => {
    const total = 96 * 1024 * 1024;
    const { d, sha256 } = await finishedJobWithLog(tdb.db.prisma, logDir, total / (1024 * 1024));

    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const ledger = new ByteLedger();
    const slow = await StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}`, ledger);
    const sock = (slow.ws as unknown as { _socket: Socket })._socket;
    sock.pause(); // never reads: kernel buffers fill, then the server's socket buffer
    let maxBuffered = 0;
    let maxRss = 0;
    const t0 = Date.now();
    while (srv.hub.streamsOf(d.jobId) > 0 && Date.now() - t0 < 20_000) {
      maxBuffered = Math.max(maxBuffered, srv.hub.bufferedBytes());
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      await new Promise((r) => setTimeout(r, 20));
    }
    const cutAfter = Date.now() - t0;
    expect(srv.hub.streamsOf(d.jobId), 'the stream was cut off').toBe(0);
    expect(cutAfter).toBeGreaterThanOrEqual(STALL_MS - 100);
    // Never more than the high-water mark plus one chunk (and the small control messages).
    expect(maxBuffered).toBeLessThanOrEqual(HIGH_WATER + LOG_CHUNK_BYTES + 64 * 1024);
    expect(maxRss - rssBefore).toBeLessThan(40 * 1024 * 1024);

    // The client reads again: everything queued before the cut, then the error, then 4408.
    sock.resume();
    expect(await slow.done(30_000)).toMatchObject({ code: 4408 });
    const err = slow.messages.at(-1) as Extract<StreamMessage, { type: 'error' }>;
    expect(err).toMatchObject({ type: 'error', code: 'slow_consumer' });
    const got = ledger.next.get('0/1') ?? 0;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(total);
    expect(err.resume).toMatchObject({ task: 0, attempt: 1, offset: got });
    expect(err.resume?.since).toBeGreaterThan(0);

    const r = err.resume!;
    const rest = await StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}?task=${r.task}&attempt=${r.attempt}&offset=${r.offset}&since=${r.since}`, ledger);
    expect(await rest.done(60_000)).toMatchObject({ code: 1000 });
    expect(ledger.next.get('0/1')).toBe(total);
    expect(ledger.sha256(0, 1)).toBe(sha256);
    // With `since`, the resumed stream repeats no status message.
    expect(rest.messages.map((m) => m.type)).toEqual(['hello', 'attempt', 'attempt', 'task', 'job', 'end']);
  });
});

/**
 * Many slow clients at once share one unsent-bytes budget (JOBDECK_WS_TOTAL_HIGH_WATER): each
 * stops at budget ÷ clients (never below one frame) instead of its own high-water mark, so the
 * server's buffered log bytes stay near the budget whatever the number of clients. The rule is the
 * hub's, not the database's: PGlite only.
 */
describe('slow job-stream clients share the unsent-bytes budget (pglite)', () => {
  const tdb = useDatabase('pglite', 'ws-budget');
  let srv: WsServer;
  let logDir: string;
  const HIGH_WATER = 1024 * 1024;
  const BUDGET = 2 * 1024 * 1024;
  const CLIENTS = 12;

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-ws-budget-'));
    srv = await startWsServer(tdb.db, { highWater: HIGH_WATER, totalHighWater: BUDGET, stallMs: 1500, closeGraceMs: 30_000 });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it(`${CLIENTS} clients that stop reading hold about the budget, not ${CLIENTS} high-water marks`, async () => {
    const { d } = await finishedJobWithLog(tdb.db.prisma, logDir, 48);

    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}`, new ByteLedger())));
    for (const c of clients) (c.ws as unknown as { _socket: Socket })._socket.pause();
    let maxBuffered = 0;
    const t0 = Date.now();
    while (srv.hub.streamsOf(d.jobId) > 0 && Date.now() - t0 < 30_000) {
      maxBuffered = Math.max(maxBuffered, srv.hub.bufferedBytes());
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(srv.hub.streamsOf(d.jobId), 'every stalled client was cut off').toBe(0);
    // Each held at most its share (here one frame: 2 MiB / 12 < 256 KiB) plus the frame sent on
    // top of it and small control messages — against HIGH_WATER + a frame each without the budget.
    const perClient = Math.max(LOG_CHUNK_BYTES, BUDGET / CLIENTS) + LOG_CHUNK_BYTES + 64 * 1024;
    expect(maxBuffered).toBeLessThanOrEqual(CLIENTS * perClient);
    expect(maxBuffered).toBeLessThan(CLIENTS * HIGH_WATER);
    for (const c of clients) (c.ws as unknown as { _socket: Socket })._socket.resume();
    await Promise.all(clients.map((c) => c.done(30_000)));
  });
});
