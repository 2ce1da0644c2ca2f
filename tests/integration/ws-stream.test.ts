import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteTerminalJobs } from '../../lib/store';
import { storeOf } from '../helpers/store';
import type { StreamMessage } from '../../lib/api/types';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { ByteLedger, JobDriver, startWsServer, story, StreamClient, type WsServer } from './ws-fixtures';

/**
 * The job stream `/ws/jobs/:id` over a real database (both kinds) and real log files: replay of
 * a finished pipeline, follow=0, exact resume of a 50 MB log after drops, errors and close codes.
 */
describe.each(DB_KINDS)('job stream (%s)', (kind) => {
  const tdb = useDatabase(kind, `ws-stream-${kind}`);
  let srv: WsServer;
  let logDir: string;
  const url = (jobId: number | string, q = '') => `${srv.url}/ws/jobs/${jobId}${q ? `?${q}` : ''}`;
  const writeLog = (d: JobDriver, task: number, attempt: number, content: string | Buffer) => {
    const p = d.logPath(task, attempt);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, content);
  };

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-ws-stream-'));
    srv = await startWsServer(tdb.db);
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  /** A finished 2-task pipeline: task 0 fails once and succeeds on its restart; task 1 succeeds. */
  async function finishedPipeline() {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { tasks: 2, maxRestarts: 1 });
    const a1 = await d.startAttempt(0, 1);
    writeLog(d, 0, 1, 'task 0 attempt 1: héllo\nboom\n');
    await d.endAttempt(a1, 'FAILED', 1);
    const a2 = await d.startAttempt(0, 2, 'restart');
    writeLog(d, 0, 2, 'task 0 attempt 2: ok ✓\n');
    await d.endAttempt(a2, 'SUCCEEDED', 0);
    await d.endTask(0, 'SUCCEEDED', 0);
    const b1 = await d.startAttempt(1, 1);
    writeLog(d, 1, 1, 'task 1: done\n');
    await d.endAttempt(b1, 'SUCCEEDED', 0);
    await d.endTask(1, 'SUCCEEDED', 0);
    await d.endJob('SUCCEEDED');
    return d;
  }

  it('replays a finished 2-task pipeline in order, with attempt start/end and the restart', async () => {
    const d = await finishedPipeline();
    for (const follow of ['1', '0']) {
      const c = await StreamClient.connect(url(d.jobId, `follow=${follow}`), new ByteLedger(true));
      expect(await c.done()).toMatchObject({ code: 1000 });
      expect(story(c.items)).toEqual([
        'hello SUCCEEDED',
        'job PENDING',
        'job STARTING',
        'task 0 STARTING',
        'attempt 0/1 start first',
        'task 0 RUNNING',
        'job RUNNING',
        'log 0/1',
        'attempt 0/1 end FAILED exit=1',
        'task 0 STARTING',
        'attempt 0/2 start restart restart 1/1',
        'task 0 RUNNING',
        'log 0/2',
        'attempt 0/2 end SUCCEEDED exit=0',
        'task 0 SUCCEEDED',
        'task 1 STARTING',
        'attempt 1/1 start first',
        'task 1 RUNNING',
        'log 1/1',
        'attempt 1/1 end SUCCEEDED exit=0',
        'task 1 SUCCEEDED',
        'job SUCCEEDED',
        'end SUCCEEDED',
      ]);
      expect(c.ledger.text(0, 1)).toBe('task 0 attempt 1: héllo\nboom\n');
      expect(c.ledger.text(0, 2)).toBe('task 0 attempt 2: ok ✓\n');
      expect(c.ledger.text(1, 1)).toBe('task 1: done\n');
      const end = c.messages.at(-1) as Extract<StreamMessage, { type: 'end' }>;
      expect(end.follow).toBe(follow === '1');
      const hello = c.messages[0] as Extract<StreamMessage, { type: 'hello' }>;
      expect(hello.job).toMatchObject({ id: d.jobId, status: 'SUCCEEDED', taskCount: 2 });
    }
  });

  it('starts at a later task without the earlier story, and resumes status exactly with since', async () => {
    const d = await finishedPipeline();
    const c = await StreamClient.connect(url(d.jobId, 'task=1'), new ByteLedger(true));
    await c.done();
    expect(story(c.items)).toEqual([
      'hello SUCCEEDED',
      'task 1 STARTING',
      'attempt 1/1 start first',
      'task 1 RUNNING',
      'log 1/1',
      'attempt 1/1 end SUCCEEDED exit=0',
      'task 1 SUCCEEDED',
      'job SUCCEEDED',
      'end SUCCEEDED',
    ]);

    // A client that had everything up to byte 5 of task 0 attempt 2 resumes there with `since`.
    const full = await StreamClient.connect(url(d.jobId));
    await full.done();
    const startOf02 = full.messages.find((m) => m.type === 'attempt' && m.task === 0 && m.attempt === 2 && m.phase === 'start')!;
    const i = full.messages.indexOf(startOf02);
    const lastStatus = full.messages.slice(0, i + 2).filter((m) => 'eventId' in m && m.eventId !== undefined).at(-1) as { eventId: number };
    const ledger = new ByteLedger(true);
    ledger.next.set('0/2', 5);
    const r = await StreamClient.connect(url(d.jobId, `task=0&attempt=2&offset=5&since=${lastStatus.eventId}`), ledger);
    await r.done();
    expect(story(r.items)).toEqual([
      'hello SUCCEEDED',
      'attempt 0/2 start restart restart 1/1',
      'log 0/2',
      'attempt 0/2 end SUCCEEDED exit=0',
      'task 0 SUCCEEDED',
      'task 1 STARTING',
      'attempt 1/1 start first',
      'task 1 RUNNING',
      'log 1/1',
      'attempt 1/1 end SUCCEEDED exit=0',
      'task 1 SUCCEEDED',
      'job SUCCEEDED',
      'end SUCCEEDED',
    ]);
    expect(ledger.text(0, 2)).toBe('0 attempt 2: ok ✓\n'); // bytes 5.. of "task 0 attempt 2: ok ✓\n"
  });

  it('follow=0 on a task that has not started returns at once with end', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { tasks: 2 });
    // The job moves only when this test moves it: a stream that waited would never end.
    const pending = await StreamClient.connect(url(d.jobId, 'follow=0'));
    expect(await pending.done()).toMatchObject({ code: 1000 });
    expect(story(pending.items)).toEqual(['hello PENDING', 'job PENDING', 'end PENDING']);

    const a = await d.startAttempt(0, 1);
    writeLog(d, 0, 1, 'running...\n');
    const later = await StreamClient.connect(url(d.jobId, 'task=1&follow=0'));
    expect(await later.done()).toMatchObject({ code: 1000 });
    expect(story(later.items)).toEqual(['hello RUNNING', 'end RUNNING']);

    // follow=0 on the running task: what exists now, no attempt end, then end.
    const now = await StreamClient.connect(url(d.jobId, 'follow=0'), new ByteLedger(true));
    await now.done();
    expect(story(now.items)).toEqual(['hello RUNNING', 'job PENDING', 'job STARTING', 'task 0 STARTING', 'attempt 0/1 start first', 'task 0 RUNNING', 'job RUNNING', 'log 0/1', 'end RUNNING']);
    expect(now.ledger.text(0, 1)).toBe('running...\n');
    await d.endAttempt(a, 'SUCCEEDED', 0);
  });

  it('a client dropped mid-stream and resumed from its last offset gets every byte of a 50 MB log exactly once', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir);
    const a = await d.startAttempt(0, 1);
    const file = d.logPath(0, 1);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '');
    const total = 50 * 1024 * 1024;
    const written = createHash('sha256');
    // The job writes while clients follow; it ends when everything is written.
    const writer = (async () => {
      let n = 0;
      while (n < total) {
        const piece = randomBytes(Math.min(total - n, 256 * 1024 + Math.floor(Math.random() * 1024 * 1024)));
        written.update(piece);
        await appendFile(file, piece);
        n += piece.length;
        await new Promise((r) => setTimeout(r, 10));
      }
      await d.endAttempt(a, 'SUCCEEDED', 0);
      await d.endTask(0, 'SUCCEEDED', 0);
      await d.endJob('SUCCEEDED');
    })();

    const ledger = new ByteLedger();
    let connections = 0;
    let last: StreamClient | null = null;
    for (let drop = 0; drop < 5; drop++) {
      const offset = ledger.next.get('0/1') ?? 0;
      const c = await StreamClient.connect(url(d.jobId, `task=0&attempt=1&offset=${offset}`), ledger);
      connections++;
      if (drop === 4) {
        last = c;
        break;
      }
      // Drop abruptly after a random amount of this connection's bytes.
      const dropAfter = (3 + Math.floor(Math.random() * 8)) * 1024 * 1024;
      await c.until(() => c.logBytes >= dropAfter || c.messages.some((m) => m.type === 'end'), 120_000, 'bytes before the drop');
      c.ws.terminate();
      await c.closed;
    }
    await writer;
    expect(await last!.done(120_000)).toMatchObject({ code: 1000 });
    expect(connections).toBe(5);
    expect(ledger.next.get('0/1')).toBe(total);
    expect(ledger.sha256(0, 1)).toBe(written.digest('hex'));
    const s = story(last!.items);
    // The end message and the statuses after it come only after the last byte.
    expect(s.slice(-5)).toEqual(['log 0/1', 'attempt 0/1 end SUCCEEDED exit=0', 'task 0 SUCCEEDED', 'job SUCCEEDED', 'end SUCCEEDED']);
    expect(s.filter((x) => x.startsWith('attempt'))).toEqual(['attempt 0/1 start first', 'attempt 0/1 end SUCCEEDED exit=0']);
  });

  it('answers bad requests, unknown jobs and tasks with an error message and the right close code', async () => {
    const d = await finishedPipeline();
    const cases: Array<[string, number, string]> = [
      [url(999_999), 4404, 'not_found'],
      [url('abc'), 4400, 'bad_request'],
      [url(d.jobId, 'offset=x'), 4400, 'bad_request'],
      [url(d.jobId, 'attempt=0'), 4400, 'bad_request'],
      [url(d.jobId, 'follow=maybe'), 4400, 'bad_request'],
      [url(d.jobId, 'task=5'), 4404, 'not_found'],
      [url(d.jobId, 'task=1&attempt=1&offset=1000'), 4400, 'bad_request'],
    ];
    for (const [u, code, err] of cases) {
      const c = await StreamClient.connect(u);
      expect(await c.done(), u).toMatchObject({ code });
      const e = c.messages.find((m) => m.type === 'error') as Extract<StreamMessage, { type: 'error' }>;
      expect(e, u).toMatchObject({ code: err });
      expect(e.message.length).toBeGreaterThan(10);
    }
    const past = await StreamClient.connect(url(d.jobId, 'task=1&attempt=1&offset=1000'));
    await past.done();
    expect((past.messages.find((m) => m.type === 'error') as { message: string }).message).toMatch(/size 13 bytes/);
  });

  it('closes on a malformed client message (4400), answers ping, refuses big frames (1009)', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir);
    const ok = await StreamClient.connect(url(d.jobId));
    await ok.until(() => ok.messages.length > 0);
    ok.ws.send(JSON.stringify({ type: 'ping' }));
    await ok.until(() => ok.messages.some((m) => m.type === 'pong'), 120_000, 'pong');
    ok.ws.send('hello there');
    expect(await ok.done()).toMatchObject({ code: 4400 });
    expect(ok.messages.at(-1)).toMatchObject({ type: 'error', code: 'bad_request' });

    const bin = await StreamClient.connect(url(d.jobId));
    await bin.until(() => bin.messages.length > 0);
    bin.ws.send(Buffer.from([1, 2, 3]));
    expect(await bin.done()).toMatchObject({ code: 4400 });

    const big = await StreamClient.connect(url(d.jobId));
    await big.until(() => big.messages.length > 0);
    big.ws.send(JSON.stringify({ type: 'ping', pad: 'x'.repeat(10_000) }));
    expect(await big.done()).toMatchObject({ code: 1009 });
  });

  it('tells a client its job was deleted (4404)', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir);
    const a = await d.startAttempt(0, 1);
    writeLog(d, 0, 1, randomBytes(8 * 1024 * 1024));
    await d.endAttempt(a, 'SUCCEEDED', 0);
    await d.endTask(0, 'SUCCEEDED', 0);
    await d.endJob('SUCCEEDED');
    const c = await StreamClient.connect(url(d.jobId));
    // Hold the stream mid-log: the client stops reading, the server waits on backpressure.
    const sock = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
    sock.pause();
    await new Promise((r) => setTimeout(r, 300));
    expect(srv.hub.streamsOf(d.jobId)).toBe(1);
    expect((await deleteTerminalJobs(storeOf(tdb.db.prisma), [d.jobId])).deleted).toEqual([d.jobId]);
    sock.resume();
    expect(await c.done(10_000)).toMatchObject({ code: 4404 });
    expect(c.messages.at(-1)).toMatchObject({ type: 'error', code: 'deleted' });
    expect(c.messages.some((m) => m.type === 'end')).toBe(false);
  });

  it('on server stop, tells followers where to resume and closes with 1001', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir);
    await d.startAttempt(0, 1);
    writeLog(d, 0, 1, 'abc\n');
    const c = await StreamClient.connect(url(d.jobId));
    await c.until(() => c.logBytes === 4, 120_000, 'the log');
    appendFileSync(d.logPath(0, 1), 'def\n');
    await c.until(() => c.logBytes === 8, 120_000, 'more log');
    await srv.close();
    expect(await c.done()).toMatchObject({ code: 1001 });
    expect(c.messages.at(-1)).toMatchObject({ type: 'error', code: 'going_away', resume: { task: 0, attempt: 1, offset: 8 } });
    srv = await startWsServer(tdb.db);
    const again = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url(d.jobId, 'follow=0&offset=8'));
      ws.on('close', (code) => resolve(code));
    });
    expect(again).toBe(1000);
  });
});
