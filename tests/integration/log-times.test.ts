/**
 * Line times and the whole-job log download, end to end: a real server process (its monitor
 * writes each running attempt's time index), a real job whose task prints three lines a second
 * apart, read over the job stream (`times` messages; a resume from an offset gets the index from
 * there) and through `jobdeck logs --timestamps`, live and replayed; across a kill -9 of the server
 * the index goes on; an attempt without an index
 * shows no times and no error. Then `GET /api/jobs/:id/logs/all` of a two-task pipeline with a
 * restart: every section in order under its header, each holding its attempt's file exactly,
 * and `jobdeck logs ID --all` printing the same.
 * PGlite and PostgreSQL.
 *
 * Needs a built app: `npx next build`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EXIT } from '../../lib/cli/exit-codes';
import { timesPath } from '../../lib/jobs/paths';
import { decodeLogChunk, timeAt, type TimeEntry } from '../../lib/logs/protocol';
import type { StreamMessage } from '../../lib/api/types';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { runCli, show, startCli, submittedId, waitTerminal } from './cli-run';

/**
 * Three lines at least a second apart. Each waits for a gate file the test writes once the stream
 * has brought the time of the line before: the monitor looks at the log every 500 ms, and on a
 * busy machine a late look would otherwise see two lines at once and give them one time.
 */
function threeLines(gates: string): string {
  const wait = (n: number) => `until [ -f ${gates}/${n} ]; do sleep 0.05; done; sleep 1`;
  return `echo one; ${wait(1)}; echo two; ${wait(2)}; echo three`;
}

/** What one job stream connection received: log bytes of task 0 attempt 1, times, messages in order. */
interface Received {
  bytes: Buffer;
  times: TimeEntry[];
  order: string[];
}

/** Follows one job stream to its close; `onTimes` sees the times received so far at each `times` message. */
function stream(server: ServerProcess, id: number, query: string, onTimes?: (times: TimeEntry[]) => void): Promise<Received> {
  const url = `${server.url.replace(/^http/, 'ws')}/ws/jobs/${id}?${query}`;
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${server.token}` } });
  const got: Received = { bytes: Buffer.alloc(0), times: [], order: [] };
  return new Promise((resolve, reject) => {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        const c = decodeLogChunk(data);
        if (c.task === 0 && c.attempt === 1) got.bytes = Buffer.concat([got.bytes, c.data]);
        got.order.push('log');
        return;
      }
      const m = JSON.parse(data.toString()) as StreamMessage;
      got.order.push(m.type === 'attempt' ? `attempt-${m.phase}` : m.type);
      if (m.type === 'times' && m.task === 0 && m.attempt === 1) {
        got.times.push(...m.entries);
        onTimes?.(got.times);
      }
    });
    ws.on('close', () => resolve(got));
    ws.on('error', reject);
  });
}

/** Each line's start offset (from `base`) and text. */
function lines(bytes: Buffer, base = 0): { at: number; text: string }[] {
  const out: { at: number; text: string }[] = [];
  let start = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, start)) {
    out.push({ at: base + start, text: bytes.subarray(start, i).toString() });
    start = i + 1;
  }
  return out;
}

function expectSecondApart(ms: number[]): void {
  expect(ms).toHaveLength(3);
  for (let i = 1; i < ms.length; i++) expect(ms[i] - ms[i - 1]).toBeGreaterThanOrEqual(700);
}

describe.each(DB_KINDS)('line times and the whole-job download (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'log-times');

  beforeAll(async () => {
    server = await database.start();
  });

  afterAll(async () => {
    if (server) await runCli(server, ['cancel', '-a', '-y']).catch(() => undefined);
  });

  it('three lines a second apart: the stream and `logs --timestamps` tell when each was written', async () => {
    const gates = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-gates-'));
    const launched = await runCli(server, ['launch', '-d', '--cmd', threeLines(gates), '-n', 'three-lines']);
    const id = submittedId(launched.stdout);
    // Followed live from the start: the CLI and the stream see the lines as they come. A line's
    // time in the stream opens the gate of the next line.
    const live = startCli(server, ['logs', String(id), '-t']);
    const s = await stream(server, id, 'follow=1', (times) => {
      for (let n = 1; n <= Math.min(times.length, 2); n++) writeFileSync(path.join(gates, String(n)), '');
    });
    rmSync(gates, { recursive: true, force: true });
    const r = await live.done;
    expect(r.code, show(r)).toBe(EXIT.OK);

    const ls = lines(s.bytes);
    expect(ls.map((l) => l.text)).toEqual(['one', 'two', 'three']);
    const ms = ls.map((l) => timeAt(s.times, l.at));
    expect(ms.every((t) => t !== null && t > 0), JSON.stringify(s.times)).toBe(true);
    expectSecondApart(ms as number[]);
    // Every time arrived before the attempt's end message.
    expect(s.order.lastIndexOf('times')).toBeLessThan(s.order.indexOf('attempt-end'));

    const printed = r.stdout.trimEnd().split('\n');
    expect(printed.map((l) => l.slice(25))).toEqual(['one', 'two', 'three']);
    const cliMs = printed.map((l) => Date.parse(l.slice(0, 24)));
    expect(printed[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z one$/);
    expect(cliMs).toEqual(ms);

    // Replayed after the end, the same times; a resume from line 2 gets the index from there.
    const again = await runCli(server, ['logs', String(id), '--timestamps', '--no-follow']);
    expect(again.stdout).toBe(r.stdout);
    const from = ls[1].at;
    const resumed = await stream(server, id, `task=0&attempt=1&offset=${from}&follow=0`);
    expect(resumed.times[0][0]).toBeGreaterThan(from);
    expect(lines(resumed.bytes, from).map((l) => timeAt(resumed.times, l.at))).toEqual(ms.slice(1));
  });

  it('a server killed mid-attempt and started again continues the index: the line written while it was down has its own time', async () => {
    const launched = await runCli(server, ['launch', '-d', '--cmd', 'echo before; sleep 3; echo after', '-n', 'across-restart']);
    const id = submittedId(launched.stdout);
    const follow = startCli(server, ['logs', String(id)]);
    await follow.waitFor(/before\n/);
    follow.proc.kill('SIGINT');
    await follow.done;
    const port = Number(new URL(server.url).port);
    await server.kill9();
    server = await database.start({ home: server.home, token: server.token, port });
    expect((await waitTerminal(server, id)).status).toBe('SUCCEEDED');
    const s = await stream(server, id, 'follow=0');
    const ls = lines(s.bytes);
    expect(ls.map((l) => l.text)).toEqual(['before', 'after']);
    const [before, after] = ls.map((l) => timeAt(s.times, l.at));
    expect(before, JSON.stringify(s.times)).toBeGreaterThan(0);
    // Written 3 s after the first line, whether the new server was up yet or not (the file's mtime).
    expect(after! - before!).toBeGreaterThanOrEqual(2500);
  });

  it('an attempt without a time index (from before indexes) streams as before; its lines show a dash', async () => {
    const launched = await runCli(server, ['launch', '--cmd', 'echo old; echo lines', '-n', 'no-index']);
    const id = submittedId(launched.stderr + launched.stdout);
    const job = (await (await server.api(`/api/jobs/${id}`)).json()) as { tasks: { attemptList: { logPath?: string }[] }[] };
    const attemptDir = path.join(server.home, 'jobs', String(id), 'task-0', 'attempt-1');
    expect(job.tasks[0].attemptList).toHaveLength(1);
    await rm(timesPath(path.join(attemptDir, 'run.log')));
    const s = await stream(server, id, 'follow=0');
    expect(s.bytes.toString()).toBe('old\nlines\n');
    expect(s.times).toEqual([]);
    const r = await runCli(server, ['logs', String(id), '-t']);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe(`${'-'.padEnd(24)} old\n${'-'.padEnd(24)} lines\n`);
  });

  it('downloads the whole job: every task and attempt in order under its header, each byte as in the attempt files', async () => {
    const yaml = [
      'name: two-step',
      '---',
      'name: train',
      'job_recovery:',
      '  max_restarts_on_errors: 1',
      'run: |',
      '  echo "train attempt $JOBDECK_ATTEMPT"',
      '  if [ "$JOBDECK_ATTEMPT" = 1 ]; then echo "no luck" >&2; exit 1; fi',
      '  printf "tail without newline"',
      '---',
      'name: eval',
      'run: seq 1 2000',
      '',
    ].join('\n');
    const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: number };
    const end = await waitTerminal(server, id);
    expect(end.status).toBe('SUCCEEDED');

    const all = await server.api(`/api/jobs/${id}/logs/all`);
    expect(all.status).toBe(200);
    expect(all.headers.get('content-disposition')).toBe(`attachment; filename="job-${id}-two-step.log"`);
    const text = await all.text();
    const file = async (task: number, attempt: number) => {
      const r = await server.api(`/api/jobs/${id}/logs/download?task=${task}&attempt=${attempt}`);
      expect(r.headers.get('content-disposition')).toContain(`job-${id}-task-${task}-attempt-${attempt}.log`);
      return r.text();
    };
    const a1 = await file(0, 1);
    const a2 = await file(0, 2);
    const e1 = await file(1, 1);
    expect(a1).toBe('train attempt 1\nno luck\n');
    expect(a2).toBe('train attempt 2\ntail without newline');
    // The header after a log left without its newline starts on a line of its own.
    expect(text).toBe(`==> task 0 train · attempt 1 (exit 1) <==\n${a1}==> task 0 train · attempt 2 (exit 0) <==\n${a2}\n==> task 1 eval · attempt 1 (exit 0) <==\n${e1}`);
    expect(e1.split('\n')).toHaveLength(2001);
    // The CLI prints the same file.
    const cli = await runCli(server, ['logs', String(id), '--all']);
    expect(cli.code, show(cli)).toBe(EXIT.OK);
    expect(cli.stdout).toBe(text);

    expect((await server.api('/api/jobs/999999/logs/all')).status).toBe(404);
    expect((await server.api('/api/jobs/abc/logs/all')).status).toBe(400);
    expect((await fetch(`${server.url}/api/jobs/${id}/logs/all`)).status).toBe(401);
  });
});
