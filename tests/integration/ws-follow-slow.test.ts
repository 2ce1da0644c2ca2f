import { describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { ByteLedger, story, StreamClient } from './ws-fixtures';

/**
 * A job that prints one line every 20 s keeps the follow open until the job ends (no idle
 * timeout, no early `end`). Real server process, real job; both database kinds run side by
 * side (each ~25 s).
 */
describe('a quiet job keeps the follow open', () => {
  const databases = { pglite: useServerDatabase('pglite', 'ws-follow-slow'), postgresql: useServerDatabase('postgresql', 'ws-follow-slow') };

  it.concurrent.each(DB_KINDS)('until the job ends (%s)', async (kind) => {
    const srv: ServerProcess = await databases[kind].start();
    const res = await srv.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'name: quiet\nrun: |\n  echo "line one"\n  sleep 20\n  echo "line two"\n' });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: number };

    const c = await StreamClient.connect(`${srv.url.replace(/^http/, 'ws')}/ws/jobs/${id}`, new ByteLedger(true), { authorization: `Bearer ${srv.token}` });
    await c.until(() => c.ledger.text(0, 1).includes('line one'), 120_000, 'the first line');
    const firstAt = Date.now();
    await c.until(() => c.ledger.text(0, 1).includes('line two'), 120_000, 'the second line');
    const secondAt = Date.now();
    // Nothing ended the stream during the 20 s of silence.
    expect(secondAt - firstAt).toBeGreaterThan(15_000);
    expect(c.messages.some((m) => m.type === 'end' || m.type === 'error')).toBe(false);
    expect(await c.done(30_000)).toMatchObject({ code: 1000 });
    expect(c.ledger.text(0, 1)).toBe('line one\nline two\n');
    expect(story(c.items).slice(-4)).toEqual(['attempt 0/1 end SUCCEEDED exit=0', 'task 0 SUCCEEDED', 'job SUCCEEDED', 'end SUCCEEDED']);
  });
});
