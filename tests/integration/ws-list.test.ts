import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteTerminalJobs } from '../../lib/store';
import { storeOf } from '../helpers/store';
import type { ListMessage } from '../../lib/api/types';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

/** The list stream `/ws/jobs`: created / updated / deleted, coalesced per job. */
describe.each(DB_KINDS)('job list stream (%s)', (kind) => {
  const tdb = useDatabase(kind, `ws-list-${kind}`);
  let srv: WsServer;
  let logDir: string;

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-ws-list-'));
    srv = await startWsServer(tdb.db);
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('announces a created job, coalesces a burst of changes per job, and announces the delete', async () => {
    const c = await StreamClient.connect(`${srv.url}/ws/jobs`);
    const arrivals: Array<{ at: number; msg: ListMessage }> = [];
    c.ws.on('message', (data: Buffer) => arrivals.push({ at: Date.now(), msg: JSON.parse(data.toString()) as ListMessage }));
    const list = () => arrivals.map((a) => a.msg);

    const d = await JobDriver.create(tdb.db.prisma, logDir, { tasks: 2 });
    await c.until(() => list().some((m) => m.type === 'created' && m.job.id === d.jobId), 120_000, 'created');
    const created = list().find((m) => m.type === 'created')!;
    expect(created).toMatchObject({ type: 'created', job: { id: d.jobId, status: 'PENDING', taskCount: 2 } });

    // A burst: the whole pipeline (about 20 status changes), as fast as the machine allows.
    const events0 = await tdb.db.prisma.jobEvent.count({ where: { jobId: d.jobId } });
    const burstStart = Date.now();
    const a = await d.startAttempt(0, 1);
    await d.endAttempt(a, 'SUCCEEDED', 0);
    await d.endTask(0, 'SUCCEEDED', 0);
    const b = await d.startAttempt(1, 1);
    await d.endAttempt(b, 'SUCCEEDED', 0);
    await d.endTask(1, 'SUCCEEDED', 0);
    await d.endJob('SUCCEEDED');
    const burstMs = Date.now() - burstStart;
    const changes = (await tdb.db.prisma.jobEvent.count({ where: { jobId: d.jobId } })) - events0;
    await c.until(() => list().some((m) => m.type === 'updated' && m.job.status === 'SUCCEEDED'), 120_000, 'the final status');
    await new Promise((r) => setTimeout(r, 300));
    const updates = arrivals.filter((x) => x.msg.type === 'updated');
    expect(updates.length).toBeGreaterThan(0);
    // Coalesced: at most one message per job per listCoalesceMs (100 ms) of the burst, plus the
    // one that flushes its end — a count from the burst's own length, not the arrival times
    // (a busy client reads two messages sent 100 ms apart in one go). A burst of under ~2 s thus
    // sends fewer messages than its changes.
    expect(updates.length, `${changes} changes in ${burstMs} ms`).toBeLessThanOrEqual(Math.ceil(burstMs / 100) + 2);
    const last = updates.at(-1)!.msg as Extract<ListMessage, { type: 'updated' }>;
    expect(last.job).toMatchObject({ id: d.jobId, status: 'SUCCEEDED', tasksSucceeded: 2 });

    expect((await deleteTerminalJobs(storeOf(tdb.db.prisma), [d.jobId])).deleted).toEqual([d.jobId]);
    await c.until(() => list().some((m) => m.type === 'deleted'), 120_000, 'deleted');
    expect(list().at(-1)).toEqual({ type: 'deleted', jobId: d.jobId });
    c.ws.close();
  });

  it('answers ping and closes on anything else (4400); closes with 1001 on server stop', async () => {
    const c = await StreamClient.connect(`${srv.url}/ws/jobs`);
    c.ws.send(JSON.stringify({ type: 'ping' }));
    await c.until(() => c.messages.some((m) => m.type === 'pong'), 120_000, 'pong');
    c.ws.send('{"type":"subscribe"}');
    expect(await c.done()).toMatchObject({ code: 4400 });

    const idle = await StreamClient.connect(`${srv.url}/ws/jobs`);
    await srv.close();
    expect(await idle.done()).toMatchObject({ code: 1001 });
    srv = await startWsServer(tdb.db);
  });
});
