/**
 * Compressed finished logs against a real server process on both databases (docs/design.md §8
 * "Compressed logs"): with `JOBDECK_COMPRESS_LOGS_AFTER=0` a job runs, ends, and its log is
 * replaced by `run.log.gz`; then the range route, the download with and without
 * `Accept-Encoding: gzip` (raw HTTP, so the bytes on the wire are checked), the whole-job
 * download, `/ws/jobs/:id` replayed from an offset and `GET /api/logs/grep` all answer the log's
 * bytes exactly (sha256) or find its line.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail, LogRange } from '../../lib/api/types';
import { attemptLogPath, timesPath } from '../../lib/jobs/paths';
import { readLogRange } from '../../lib/logs/reader';
import { gzPathOf } from '../../lib/logs/source';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { ByteLedger, StreamClient } from './ws-fixtures';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const NEEDLE = 'NEEDLE-srv-compressed';
/** What the job below writes: `seq 1 400000`, the needle, two bytes that are not UTF-8, an open last line. */
const EXPECTED = Buffer.concat([Buffer.from(Array.from({ length: 400_000 }, (_, i) => `${i + 1}\n`).join('')), Buffer.from(`${NEEDLE}\n`), Buffer.from([0xff, 0xfe]), Buffer.from(' tail without newline')]);

/** A raw GET (no decoding of the body whatever its Content-Encoding). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? -1, headers: res.headers, body: Buffer.concat(parts) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

describe.each(DB_KINDS)('compressed logs through a server (%s)', (kind) => {
  const database = useServerDatabase(kind, 'logs-compressed-server');
  let srv: ServerProcess;
  let tmp: string;
  const auth = () => ({ authorization: `Bearer ${srv.token}` });
  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-compressed-srv-'));
    srv = await database.start({ env: { JOBDECK_COMPRESS_LOGS_AFTER: '0', JOBDECK_COMPRESS_INTERVAL_MS: '200' } });
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('serves a finished, compressed log byte-exact through every route', async () => {
    const res = await srv.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: `name: compressed\nrun: seq 1 400000; printf '${NEEDLE}\\n\\377\\376 tail without newline'\n` });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: number }).id;
    const file = attemptLogPath(id, 0, 1, srv.home);
    const deadline = Date.now() + 60_000;
    let job: JobDetail;
    let monitor: { compression: { afterMs: number; files: number; bytesIn: number } };
    // The swap's unlink lands a moment before the compressor counts the file, so the wait is on
    // both: the files on disk and the monitor's count.
    for (;;) {
      job = (await (await srv.api(`/api/jobs/${id}`)).json()) as JobDetail;
      monitor = (await (await srv.api('/api/monitor')).json()) as typeof monitor;
      if (job.status === 'SUCCEEDED' && !existsSync(file) && existsSync(gzPathOf(file)) && monitor.compression.files > 0) break;
      if (Date.now() > deadline) throw new Error(`job ${id} is ${job.status}; plain log ${existsSync(file)}, compressed ${existsSync(gzPathOf(file))}, counted ${monitor.compression.files}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(monitor.compression).toMatchObject({ afterMs: 0, files: 1, bytesIn: EXPECTED.length });
    const gz = await rawGet(`${srv.url}/api/jobs/${id}/logs/download`, { ...auth(), 'accept-encoding': 'gzip, deflate, br' });
    // The job's disk usage: the compressed log and its time index (read after the swap: a detail
    // read during it also counts the compression's temp).
    job = (await (await srv.api(`/api/jobs/${id}`)).json()) as JobDetail;
    expect(job.logBytesTotal).toBe(gz.body.length + (existsSync(timesPath(file)) ? statSync(timesPath(file)).size : 0));

    // Ranges, against the same read of the original bytes.
    const orig = path.join(tmp, 'orig.log');
    writeFileSync(orig, EXPECTED);
    for (const [offset, limit] of [[0, 1], [0, 1_048_576], [1_000_000, 300_000], [EXPECTED.length - 30, 1000], [EXPECTED.length, 10], [Math.floor(Math.random() * EXPECTED.length), 1 + Math.floor(Math.random() * 1_048_576)]]) {
      const r = (await (await srv.api(`/api/jobs/${id}/logs?offset=${offset}&limit=${limit}`)).json()) as LogRange;
      const o = await readLogRange(orig, offset, limit, { complete: true });
      expect({ ...r, data: sha(Buffer.from(r.data)) }).toEqual({ task: 0, attempt: 1, offset: o.offset, nextOffset: o.nextOffset, size: EXPECTED.length, complete: o.nextOffset === EXPECTED.length, data: sha(Buffer.from(o.data.toString('utf8'))) });
    }

    // The download: gzip as it is on disk when accepted, the plain bytes otherwise.
    expect([gz.status, gz.headers['content-encoding'], gz.headers['content-length'], gz.headers.vary]).toEqual([200, 'gzip', String(gz.body.length), 'Accept-Encoding']);
    expect(sha(zlib.gunzipSync(gz.body))).toBe(sha(EXPECTED));
    for (const accept of [undefined, 'identity', 'gzip;q=0, br']) {
      const plain = await rawGet(`${srv.url}/api/jobs/${id}/logs/download`, { ...auth(), ...(accept ? { 'accept-encoding': accept } : {}) });
      expect([plain.status, plain.headers['content-encoding'], plain.headers['content-length']], String(accept)).toEqual([200, undefined, String(EXPECTED.length)]);
      expect(sha(plain.body)).toBe(sha(EXPECTED));
    }

    // The whole job: one header line, then the log's bytes.
    const all = await rawGet(`${srv.url}/api/jobs/${id}/logs/all`, { ...auth(), 'accept-encoding': 'gzip' });
    const nl = all.body.indexOf(0x0a);
    expect(all.body.subarray(0, nl).toString()).toMatch(/^==> task 0.* · attempt 1 \(exit 0\) <==$/);
    expect(sha(all.body.subarray(nl + 1))).toBe(sha(EXPECTED));

    // The job stream replayed from an offset.
    const from = 777_777;
    const ledger = new ByteLedger();
    ledger.next.set('0/1', from);
    const c = await StreamClient.connect(`${srv.url.replace(/^http/, 'ws')}/ws/jobs/${id}?task=0&attempt=1&offset=${from}&follow=0`, ledger, auth());
    await c.done();
    expect(ledger.sha256(0, 1)).toBe(sha(EXPECTED.subarray(from)));

    // The search finds the line in the compressed log.
    const grep = await srv.api(`/api/logs/grep?pattern=${NEEDLE}`);
    const lines = (await grep.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      { type: 'match', jobId: id, task: 0, attempt: 1, line: 400_001, text: NEEDLE, cut: false },
      expect.objectContaining({ type: 'end', matches: 1, files: 1, reason: 'done' }),
    ]);
  });
});
