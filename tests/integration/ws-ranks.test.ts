import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rankLogPath } from '../../lib/jobs/paths';
import type { StreamMessage } from '../../lib/api/types';
import { useDatabase } from '../helpers/use-database';
import { ByteLedger, JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

/**
 * The job stream of a multi-node attempt (lib/logs/protocol.ts): every rank's log on the same
 * socket, each rank's bytes contiguous and exactly once, rank 0's as the frames they always were;
 * one rank with `rank=`; a resume per rank with `offsets=`; the resume position a stopping server
 * hands out names every rank. Real database, real log files, no Slurm (tests/integration/
 * slurm-multinode.test.ts runs real gangs).
 */
describe('job stream of a multi-node attempt', () => {
  const tdb = useDatabase('pglite', 'ws-ranks');
  let srv: WsServer;
  let logDir: string;
  const url = (s: WsServer, jobId: number, q: string) => `${s.url}/ws/jobs/${jobId}?${q}`;
  const logOf = (d: JobDriver, rank: number) => rankLogPath(d.logPath(0, 1), rank);
  const write = (d: JobDriver, rank: number, text: string) => {
    mkdirSync(path.dirname(logOf(d, rank)), { recursive: true });
    appendFileSync(logOf(d, rank), text);
  };
  const bytesByRank = (c: StreamClient) => {
    const n = new Map<number, number>();
    for (const i of c.items) if (i.kind === 'log') n.set(i.rank ?? 0, (n.get(i.rank ?? 0) ?? 0) + i.length);
    return n;
  };
  const attemptMsgs = (c: StreamClient) => c.messages.filter((m): m is Extract<StreamMessage, { type: 'attempt' }> => m.type === 'attempt');

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-ws-ranks-'));
    srv = await startWsServer(tdb.db);
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  /** A finished 3-node attempt whose ranks wrote `texts`. */
  async function finished(texts: string[]): Promise<JobDriver> {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { nodes: texts.length });
    const a = await d.startAttempt(0, 1);
    texts.forEach((t, k) => write(d, k, t));
    await d.endAttempt(a, 'SUCCEEDED', 0);
    await d.endTask(0, 'SUCCEEDED', 0);
    await d.endJob('SUCCEEDED');
    return d;
  }

  it('replays every rank, each exactly, the start and end naming the nodes; rank=K sends one rank', async () => {
    const big = 'r2 '.repeat(200_000) + '\n'; // more than one frame
    const texts = ['rank 0 line\n', 'rank 1 ✓ line\n', big];
    const d = await finished(texts);
    for (const follow of ['1', '0']) {
      const ledger = new ByteLedger(true);
      const c = await StreamClient.connect(url(srv, d.jobId, `follow=${follow}`), ledger);
      await c.done();
      texts.forEach((t, k) => expect(ledger.text(0, 1, k)).toBe(t));
      const [s, e] = attemptMsgs(c);
      expect(s).toMatchObject({ phase: 'start', nodes: 3 });
      expect(e).toMatchObject({ phase: 'end', status: 'SUCCEEDED', nodes: 3 });
      // Every log frame comes after the start and before the end.
      const first = c.items.findIndex((i) => i.kind === 'log');
      const last = c.items.map((i) => i.kind).lastIndexOf('log');
      expect(c.items.indexOf(c.items.find((i) => i.kind === 'json' && i.msg === s)!)).toBeLessThan(first);
      expect(c.items.indexOf(c.items.find((i) => i.kind === 'json' && i.msg === e)!)).toBeGreaterThan(last);
      // Rank 0 travels in frames without a rank.
      expect(c.items.some((i) => i.kind === 'log' && i.rank === 0)).toBe(false);
    }
    const one = new ByteLedger(true);
    one.next.set('0/1/r1', 5);
    const c = await StreamClient.connect(url(srv, d.jobId, 'follow=0&rank=1&offset=5'), one);
    await c.done();
    expect([...bytesByRank(c).keys()]).toEqual([1]);
    expect(one.next.get('0/1/r1')).toBe(Buffer.byteLength(texts[1]));
    expect(c.items.find((i) => i.kind === 'log')).toMatchObject({ rank: 1, offset: 5 });
  });

  it('resumes each rank from its own offset; a start offset past a rank\'s end is refused naming the rank', async () => {
    const texts = ['0123456789\n', 'abcdefghij\n', 'ABCDEFGHIJ\n'];
    const d = await finished(texts);
    const ledger = new ByteLedger(true);
    ledger.next.set('0/1', 3);
    ledger.next.set('0/1/r1', 7);
    const c = await StreamClient.connect(url(srv, d.jobId, 'follow=0&task=0&attempt=1&offsets=3,7,0'), ledger);
    await c.done();
    expect(c.items.filter((i) => i.kind === 'log').map((i) => (i.kind === 'log' ? [i.rank ?? 0, i.offset, i.length] : []))).toEqual([
      [0, 3, 8],
      [1, 7, 4],
      [2, 0, 11],
    ]);
    expect([0, 1, 2].map((k) => ledger.text(0, 1, k))).toEqual(['3456789\n', 'hij\n', 'ABCDEFGHIJ\n']);
    const bad = await StreamClient.connect(url(srv, d.jobId, 'follow=0&attempt=1&offsets=0,0,99'));
    await bad.done();
    expect(bad.messages.find((m) => m.type === 'error')).toMatchObject({ code: 'bad_request', message: expect.stringContaining('rank 2 (size 11 bytes)') });
  });

  it('a follower dropped mid-attempt resumes with the position per rank and gets every byte once; a stopping server names every rank\'s offset', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { nodes: 3 });
    const a = await d.startAttempt(0, 1);
    for (let k = 0; k < 3; k++) write(d, k, `rank ${k} first\n`);
    const ledger = new ByteLedger(true);
    const first = await StreamClient.connect(url(srv, d.jobId, ''), ledger);
    await first.until(() => [0, 1, 2].every((k) => (bytesByRank(first).get(k) ?? 0) > 0), 120_000, 'a chunk of every rank');
    first.ws.terminate();
    await first.closed;
    for (let k = 0; k < 3; k++) write(d, k, `rank ${k} second\n`);
    const offsets = [0, 1, 2].map((k) => ledger.next.get(`0/1${k > 0 ? `/r${k}` : ''}`) ?? 0);

    // Resumed on a second server (its own hub), which is then stopped: it says where to resume.
    const other = await startWsServer(tdb.db);
    const second = await StreamClient.connect(url(other, d.jobId, `task=0&attempt=1&offsets=${offsets.join(',')}`), ledger);
    await second.until(() => [0, 1, 2].every((k) => ledger.text(0, 1, k).includes('second')), 120_000, 'the second lines');
    await other.close();
    const gone = second.messages.find((m) => m.type === 'error') as Extract<StreamMessage, { type: 'error' }> | undefined;
    expect(gone).toMatchObject({ code: 'going_away', resume: { task: 0, attempt: 1 } });
    expect(gone!.resume!.offsets).toEqual([0, 1, 2].map((k) => Buffer.byteLength(`rank ${k} first\nrank ${k} second\n`)));

    for (let k = 0; k < 3; k++) write(d, k, `rank ${k} last\n`);
    await d.endAttempt(a, 'SUCCEEDED', 0);
    await d.endTask(0, 'SUCCEEDED', 0);
    await d.endJob('SUCCEEDED');
    const third = await StreamClient.connect(url(srv, d.jobId, `task=0&attempt=1&offsets=${gone!.resume!.offsets!.join(',')}`), ledger);
    await third.done();
    for (let k = 0; k < 3; k++) expect(ledger.text(0, 1, k)).toBe(`rank ${k} first\nrank ${k} second\nrank ${k} last\n`);
  });
});

