import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { startServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

describe('server start-up and /api/health', () => {
  const pglite = useServerDatabase('pglite', 'server-health');
  const postgresql = useServerDatabase('postgresql', 'server-health');

  it('serves health on the embedded database and keeps its data across a restart', async () => {
    const first = await pglite.start();
    const res = await fetch(`${first.url}/api/health`); // public: no token
    expect(res.status).toBe(200);
    const h = await res.json();
    expect(h).toMatchObject({ ok: true, database: 'pglite', version: expect.any(String) });
    expect(h.migrations.length).toBeGreaterThan(0);
    const submitted = await first.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'name: persist-me\nrun: "true"\n' });
    expect(submitted.status).toBe(201);
    const { id } = await submitted.json();
    await first.stop();
    expect(first.proc.exitCode).toBe(0);

    const second = await pglite.start({ home: first.home, token: first.token });
    const job = await second.api(`/api/jobs/${id}`);
    expect(job.status).toBe(200);
    expect(await job.json()).toMatchObject({ id, name: 'persist-me' });
    // One line per state change, with the job id, in the server log.
    await second.stop();
    const lines = (first.output() + second.output()).split('\n').filter((l) => l.includes(`"jobId":${id}`));
    expect(lines.some((l) => l.includes('submitted'))).toBe(true);
  });

  it('reports postgresql when DATABASE_URL is set', async () => {
    const srv = await postgresql.start();
    const h = await (await fetch(`${srv.url}/api/health`)).json();
    expect(h).toMatchObject({ ok: true, database: 'postgresql' });
    await srv.stop();
  });

  it('stops on SIGTERM even while a client keeps reconnecting its WebSocket (new upgrades refused with 503)', async () => {
    const srv = await pglite.start();
    const wsUrl = srv.url.replace('http', 'ws') + '/ws/jobs';
    const statuses: number[] = [];
    let stopping = false;
    let opened = 0;
    const connect = () => {
      const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${srv.token}` } });
      ws.on('open', () => opened++);
      ws.on('unexpected-response', (_req, res) => {
        statuses.push(res.statusCode ?? 0);
        res.resume();
      });
      ws.on('error', () => undefined);
      ws.on('close', () => {
        if (stopping) setTimeout(connect, 5); // a client that reconnects at once, as the CLI does
      });
    };
    connect();
    await expect.poll(() => opened, { timeout: 120_000 }).toBe(1);
    stopping = true;
    // A stop that kept accepting the reconnecting client would hang here (the test's timeout).
    await srv.stop();
    stopping = false;
    expect(srv.proc.exitCode).toBe(0);
    if (statuses.length) expect(new Set(statuses)).toEqual(new Set([503]));
  });

  it('refuses to start on a malformed DATABASE_URL with a message that says so', async () => {
    await expect(startServerProcess({ env: { DATABASE_URL: 'mysql://nope' } })).rejects.toThrow(/DATABASE_URL: expected postgresql/);
  });
});
