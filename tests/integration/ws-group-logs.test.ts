/**
 * A job group's logs side by side (docs/spec.md "Job groups"): while two tasks of one job run at
 * once, a stream started at each task (`/ws/jobs/:id?task=N`, what `jobdeck logs JOB TASK`
 * follows) gets that task's log live, whatever the other task does. Real database (both kinds),
 * real log files; the job's rows are written through the store as the monitor writes them.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { ByteLedger, JobDriver, startWsServer, StreamClient, type WsServer } from './ws-fixtures';

describe.each(DB_KINDS)('a job group followed per task (%s)', (kind) => {
  const tdb = useDatabase(kind, `ws-group-logs-${kind}`);
  let srv: WsServer;
  let logDir: string;

  beforeAll(async () => {
    logDir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-ws-group-'));
    srv = await startWsServer(tdb.db);
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('two running tasks: each task stream gets its own log live, and each ends with its task', async () => {
    const d = await JobDriver.create(tdb.db.prisma, logDir, { tasks: 2 });
    const write = (task: number, text: string, append = false) => {
      const p = d.logPath(task, 1);
      mkdirSync(path.dirname(p), { recursive: true });
      (append ? appendFileSync : writeFileSync)(p, text);
    };
    write(0, 'server: listening\n');
    write(1, 'client: connecting\n');
    const a0 = await d.startAttempt(0, 1);
    const a1 = await d.startAttempt(1, 1);
    const ledgers = [new ByteLedger(true), new ByteLedger(true)];
    const clients = await Promise.all([0, 1].map((t) => StreamClient.connect(`${srv.url}/ws/jobs/${d.jobId}?task=${t}`, ledgers[t])));
    await clients[0].until(() => ledgers[0].text(0, 1).includes('listening'), 60_000, 'task 0 log');
    await clients[1].until(() => ledgers[1].text(1, 1).includes('connecting'), 60_000, 'task 1 log');
    // Both attempts still run: new lines of each reach its own stream.
    write(0, 'server: got hello\n', true);
    write(1, 'client: sent hello\n', true);
    await clients[0].until(() => ledgers[0].text(0, 1).includes('got hello'), 60_000, 'task 0 live line');
    await clients[1].until(() => ledgers[1].text(1, 1).includes('sent hello'), 60_000, 'task 1 live line');
    expect(ledgers[0].text(1, 1)).toBe('');
    expect(ledgers[1].text(0, 1)).toBe('');
    // The group ends: the client (primary) first, then the server is stopped.
    await d.endAttempt(a1, 'SUCCEEDED', 0);
    await d.endTask(1, 'SUCCEEDED', 0);
    await d.endAttempt(a0, 'CANCELLED', 143);
    await d.endTask(0, 'CANCELLED', 143);
    await d.endJob('SUCCEEDED');
    await Promise.all(clients.map((c) => c.done()));
    expect(ledgers[0].text(0, 1)).toBe('server: listening\nserver: got hello\n');
    expect(ledgers[1].text(1, 1)).toBe('client: connecting\nclient: sent hello\n');
  });
});
