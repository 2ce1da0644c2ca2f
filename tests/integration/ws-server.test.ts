import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail, LogRange, StreamMessage } from '../../lib/api/types';
import { attemptLogPath } from '../../lib/jobs/paths';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { ByteLedger, story, StreamClient } from './ws-fixtures';

/**
 * The log endpoints against a real server process running real jobs (monitor + local executor),
 * on both database kinds: live follow and replay of a 2-task pipeline, a 50 MB log followed
 * through drops, follow=0 on a task not started, the range and download routes over HTTP.
 */
describe.each(DB_KINDS)('log streams of real jobs (%s)', (kind) => {
  const database = useServerDatabase(kind, 'ws-server');
  let srv: ServerProcess;
  const auth = () => ({ authorization: `Bearer ${srv.token}` });
  const ws = (p: string) => srv.url.replace(/^http/, 'ws') + p;
  const connect = (p: string, ledger = new ByteLedger(true)) => StreamClient.connect(ws(p), ledger, auth());

  async function submit(yaml: string): Promise<number> {
    const res = await srv.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: yaml });
    const body = (await res.json()) as { id: number };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return body.id;
  }
  async function detail(id: number): Promise<JobDetail> {
    return (await (await srv.api(`/api/jobs/${id}`)).json()) as JobDetail;
  }
  const sha256File = (p: string) =>
    new Promise<string>((resolve, reject) => {
      const h = createHash('sha256');
      createReadStream(p)
        .on('data', (d) => h.update(d))
        .on('end', () => resolve(h.digest('hex')))
        .on('error', reject);
    });
  /** The story without status messages whose place relative to live log chunks is timing. */
  const skeleton = (s: string[]) => s.filter((x) => /^(attempt|log|end|task \d (SUCCEEDED|FAILED|CANCELLED)|job (SUCCEEDED|FAILED|CANCELLED))/.test(x));

  beforeAll(async () => {
    srv = await database.start();
  });

  it('follows a 2-task pipeline live, then replays it in the same order', async () => {
    const id = await submit(
      [
        'name: two-steps',
        'job_recovery:',
        '  max_restarts_on_errors: 1',
        'run: |',
        '  echo "step one, attempt $JOBDECK_ATTEMPT"',
        '  if [ "$JOBDECK_ATTEMPT" = 1 ]; then exit 3; fi',
        '---',
        'run: echo "step two ✓"',
        '',
      ].join('\n'),
    );
    const live = await connect(`/ws/jobs/${id}`);
    expect(await live.done(60_000)).toMatchObject({ code: 1000 });
    const expected = [
      'attempt 0/1 start first',
      'log 0/1',
      'attempt 0/1 end FAILED exit=3',
      'attempt 0/2 start restart restart 1/1',
      'log 0/2',
      'attempt 0/2 end SUCCEEDED exit=0',
      'task 0 SUCCEEDED',
      'attempt 1/1 start first',
      'log 1/1',
      'attempt 1/1 end SUCCEEDED exit=0',
      'task 1 SUCCEEDED',
      'job SUCCEEDED',
      'end SUCCEEDED',
    ];
    expect(skeleton(story(live.items))).toEqual(expected);
    expect(live.ledger.text(0, 1)).toContain('step one, attempt 1\n');
    expect(live.ledger.text(0, 2)).toContain('step one, attempt 2\n');
    expect(live.ledger.text(1, 1)).toContain('step two ✓\n');

    const replay = await connect(`/ws/jobs/${id}?follow=0`);
    expect(await replay.done(30_000)).toMatchObject({ code: 1000 });
    expect(skeleton(story(replay.items))).toEqual(expected);
    for (const [t, a] of [[0, 1], [0, 2], [1, 1]]) expect(replay.ledger.text(t, a)).toBe(live.ledger.text(t, a));

    // The range endpoint tells the same bytes; bad input gets the right status and a clear message.
    const r = (await (await srv.api(`/api/jobs/${id}/logs?task=0&attempt=2`)).json()) as LogRange;
    expect(r).toMatchObject({ task: 0, attempt: 2, offset: 0, complete: true, data: live.ledger.text(0, 2) });
    const past = await srv.api(`/api/jobs/${id}/logs?task=1&offset=${r.size + 1000}`);
    expect(past.status).toBe(416);
    expect(past.headers.get('content-type')).toMatch(/problem\+json/);
    expect(((await past.json()) as { detail: string }).detail).toMatch(/past the end .* its size is \d+ bytes/);
    expect((await srv.api(`/api/jobs/${id}/logs?limit=0`)).status).toBe(400);
    expect((await srv.api(`/api/jobs/${id}/logs?task=7`)).status).toBe(404);
    expect((await srv.api(`/api/jobs/999999/logs`)).status).toBe(404);
  });

  it('a client dropped mid-stream and resumed gets every byte of a 50 MB log written by a job, exactly once', async () => {
    const id = await submit('name: fifty\nrun: |\n  for i in $(seq 1 50); do head -c 1048576 /dev/urandom; sleep 0.03; done\n');
    const ledger = new ByteLedger();
    let c = await connect(`/ws/jobs/${id}`, ledger);
    for (let drop = 0; drop < 4; drop++) {
      const dropAfter = (4 + Math.floor(Math.random() * 6)) * 1024 * 1024;
      await c.until(() => c.logBytes >= dropAfter || c.messages.some((m) => m.type === 'end'), 120_000, 'bytes before the drop');
      if (c.messages.some((m) => m.type === 'end')) break;
      c.ws.terminate();
      await c.closed;
      c = await connect(`/ws/jobs/${id}?task=0&attempt=1&offset=${ledger.next.get('0/1') ?? 0}`, ledger);
    }
    expect(await c.done(120_000)).toMatchObject({ code: 1000 });
    expect(c.messages.at(-1)).toMatchObject({ type: 'end', status: 'SUCCEEDED' });
    const file = attemptLogPath(id, 0, 1, srv.home);
    expect(ledger.next.get('0/1')).toBe(50 * 1024 * 1024);
    expect(ledger.sha256(0, 1)).toBe(await sha256File(file));

    // The download route streams the same file.
    const res = await srv.api(`/api/jobs/${id}/logs/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="job-${id}-task-0-attempt-1.log"`);
    const h = createHash('sha256');
    let n = 0;
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      h.update(value);
      n += value.length;
    }
    expect(n).toBe(50 * 1024 * 1024);
    expect(h.digest('hex')).toBe(await sha256File(file));
  });

  it('follow=0 on a task that has not started returns at once; unknown job 4404', async () => {
    const id = await submit('run: sleep 300\n---\nrun: echo never\n');
    const first = await connect(`/ws/jobs/${id}`);
    await first.until(() => first.messages.some((m) => m.type === 'attempt'), 120_000, 'the first attempt');
    const c = await connect(`/ws/jobs/${id}?task=1&follow=0`);
    expect(await c.done()).toMatchObject({ code: 1000 });
    // It ended while task 0 still sleeps (300 s, cancelled below): it did not wait for task 1.
    const status = (c.messages[0] as Extract<StreamMessage, { type: 'hello' }>).job.status;
    expect(['STARTING', 'RUNNING']).toContain(status);
    expect(story(c.items)).toEqual([`hello ${status}`, expect.stringMatching(/^end (STARTING|RUNNING)$/)]);
    const cancel = await srv.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBeLessThan(300);
    expect(await first.done(60_000)).toMatchObject({ code: 1000 });
    expect(first.messages.at(-1)).toMatchObject({ type: 'end', status: 'CANCELLED' });
    expect((await detail(id)).status).toBe('CANCELLED');

    const unknown = await connect('/ws/jobs/999999');
    expect(await unknown.done()).toMatchObject({ code: 4404 });
  });

  it('on SIGTERM, followers are told where to resume and closed with 1001', async () => {
    const id = await submit('run: |\n  echo started\n  sleep 4\n');
    const c = await connect(`/ws/jobs/${id}`);
    await c.until(() => c.ledger.text(0, 1).includes('started'), 120_000, 'the first line');
    await srv.stop();
    expect(await c.done(10_000)).toMatchObject({ code: 1001 });
    expect(c.messages.at(-1)).toMatchObject({ type: 'error', code: 'going_away', resume: { task: 0, attempt: 1, offset: 8 } });
  });
});
