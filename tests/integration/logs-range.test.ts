import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api/errors';
import { storeOf } from '../helpers/store';
import { getLogRange, logDownloadResponse, parseLogDownloadQuery, parseLogRangeQuery, LOG_RANGE_MAX_LIMIT } from '../../lib/api/logs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { JobDriver } from './ws-fixtures';

/** The REST side of logs (lib/api/logs.ts) over a real database (both kinds) and real files. */
describe.each(DB_KINDS)('log ranges and downloads (%s)', (kind) => {
  const tdb = useDatabase(kind, `logs-range-${kind}`);
  let logDir: string;
  const write = (d: JobDriver, task: number, attempt: number, content: string | Buffer) => {
    const p = d.logPath(task, attempt);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, content);
  };
  const apiError = async (p: Promise<unknown>): Promise<ApiError> => {
    try {
      await p;
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    throw new Error('expected an ApiError');
  };

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-logs-range-'));
  });
  afterAll(async () => {
    rmSync(logDir, { recursive: true, force: true });
  });

  it('reads bounded ranges with the next offset, defaults to the current task and latest attempt', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { tasks: 2, maxRestarts: 1 });
    const a1 = await d.startAttempt(0, 1);
    write(d, 0, 1, 'first attempt\n');
    await d.endAttempt(a1, 'FAILED', 1);
    const a2 = await d.startAttempt(0, 2, 'restart');
    write(d, 0, 2, '0123456789');
    const prisma = tdb.db.prisma;

    const r = await getLogRange(storeOf(prisma), d.jobId, { offset: 0, limit: 4 });
    expect(r).toEqual({ task: 0, attempt: 2, offset: 0, nextOffset: 4, size: 10, complete: false, data: '0123' });
    expect(await getLogRange(storeOf(prisma), d.jobId, { offset: 8, limit: 100 })).toMatchObject({ offset: 8, nextOffset: 10, data: '89', complete: false });
    // At the end: an empty range (poll again); complete once the attempt has ended.
    expect(await getLogRange(storeOf(prisma), d.jobId, { offset: 10, limit: 100 })).toMatchObject({ nextOffset: 10, data: '', complete: false });
    await d.endAttempt(a2, 'SUCCEEDED', 0);
    expect(await getLogRange(storeOf(prisma), d.jobId, { offset: 10, limit: 100 })).toMatchObject({ nextOffset: 10, complete: true });
    expect(await getLogRange(storeOf(prisma), d.jobId, { task: 0, attempt: 1, offset: 0, limit: 100 })).toMatchObject({ attempt: 1, data: 'first attempt\n', complete: true });
  });

  it('answers 416 with the size for an offset past the end, 404 naming what is missing', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { tasks: 2 });
    const prisma = tdb.db.prisma;
    const none = await apiError(getLogRange(storeOf(prisma), d.jobId, { offset: 0, limit: 10 }));
    expect(none.status).toBe(404);
    expect(none.detail).toMatch(/task 0 has not started/);
    const a = await d.startAttempt(0, 1);
    write(d, 0, 1, 'hello\n');
    const past = await apiError(getLogRange(storeOf(prisma), d.jobId, { offset: 7, limit: 10 }));
    expect(past.status).toBe(416);
    expect(past.detail).toMatch(/offset 7 is past the end .* task 0 attempt 1: its size is 6 bytes/);
    expect(past.extra).toEqual({ size: 6 });
    expect((await apiError(getLogRange(storeOf(prisma), 999_999, { offset: 0, limit: 10 }))).detail).toBe('job 999999 does not exist');
    expect((await apiError(getLogRange(storeOf(prisma), d.jobId, { task: 2, offset: 0, limit: 10 }))).detail).toMatch(/has 2 tasks \(0–1\): no task 2/);
    expect((await apiError(getLogRange(storeOf(prisma), d.jobId, { task: 0, attempt: 3, offset: 0, limit: 10 }))).detail).toMatch(/task 0 has 1 attempt \(1–1\): no attempt 3/);
    expect((await apiError(getLogRange(storeOf(prisma), d.jobId, { task: 1, attempt: 1, offset: 0, limit: 10 }))).detail).toMatch(/task 1 has no attempt yet: no attempt 1/);
    await d.endAttempt(a, 'SUCCEEDED', 0);
  });

  it('never splits a UTF-8 character, whatever the limit', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir);
    const a = await d.startAttempt(0, 1);
    const text = 'ünïcödé → 😀 ✓\n'.repeat(8);
    write(d, 0, 1, text);
    await d.endAttempt(a, 'SUCCEEDED', 0);
    for (const limit of [1, 3, 5, 17]) {
      let offset = 0;
      let out = '';
      for (;;) {
        const r = await getLogRange(storeOf(tdb.db.prisma), d.jobId, { offset, limit });
        expect(r.data).not.toContain('\uFFFD');
        out += r.data;
        if (r.complete) break;
        offset = r.nextOffset;
      }
      expect(out).toBe(text);
    }
  });

  it('validates query numbers with a message naming the parameter', () => {
    const q = (s: string) => new URL(`http://x/api/jobs/1/logs?${s}`);
    expect(parseLogRangeQuery(q(''))).toEqual({ task: undefined, attempt: undefined, offset: 0, limit: 256 * 1024 });
    expect(parseLogRangeQuery(q('task=1&attempt=2&offset=30&limit=5'))).toEqual({ task: 1, attempt: 2, offset: 30, limit: 5 });
    for (const [s, re] of [
      ['offset=-1', /offset/],
      ['offset=abc', /offset: expected an integer ≥ 0, got "abc"/],
      ['attempt=0', /attempt must be between 1/],
      ['limit=0', /limit/],
      [`limit=${LOG_RANGE_MAX_LIMIT + 1}`, /limit must be between 1 and 1048576/],
      ['task=1.5', /task/],
    ] as const) {
      let err: unknown;
      try {
        parseLogRangeQuery(q(s));
      } catch (e) {
        err = e;
      }
      expect(err, s).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(400);
      expect((err as ApiError).detail, s).toMatch(re);
    }
    expect(parseLogDownloadQuery(q('task=0&attempt=1&offset=5'))).toEqual({ task: 0, attempt: 1 });
  });

  it('downloads a 50 MB log as a stream with the right checksum, name and length', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir);
    const a = await d.startAttempt(0, 1);
    const p = d.logPath(0, 1);
    mkdirSync(path.dirname(p), { recursive: true });
    const hash = createHash('sha256');
    const fd = openSync(p, 'w');
    const total = 50 * 1024 * 1024;
    for (let n = 0; n < total; n += 1024 * 1024) {
      const piece = randomBytes(1024 * 1024);
      hash.update(piece);
      writeSync(fd, piece);
    }
    closeSync(fd);
    await d.endAttempt(a, 'SUCCEEDED', 0);
    const res = await logDownloadResponse(storeOf(tdb.db.prisma), d.jobId, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="job-${d.jobId}-task-0-attempt-1.log"`);
    expect(res.headers.get('content-length')).toBe(String(total));
    const got = createHash('sha256');
    let n = 0;
    let biggest = 0;
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      got.update(value);
      n += value.length;
      biggest = Math.max(biggest, value.length);
    }
    expect(n).toBe(total);
    expect(got.digest('hex')).toBe(hash.digest('hex'));
    // Streamed in pieces, never as one buffer.
    expect(biggest).toBeLessThanOrEqual(1024 * 1024);
  });
});
