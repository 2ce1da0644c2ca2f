/**
 * A PostgreSQL that is briefly unreachable (a restart, a failover, the network cut) — made so by
 * a TCP proxy between a real server and its database that refuses every connection for a while,
 * never by stopping the shared PostgreSQL server: requests answer 503 with Retry-After and a
 * message that says what to do (not 500, which a client cannot tell from a real failure), the
 * unauthenticated health check says so without the database's own text, and `jobdeck launch` —
 * which gives its submit a submission id — keeps retrying and submits its job exactly once when
 * the database is back. PostgreSQL only: the embedded PGlite is in the server's own process and
 * cannot become unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { startProxy, type Proxy } from './cli-proxy';
import { show, startCli, submittedId } from './cli-run';

describe('a PostgreSQL that is briefly unreachable', () => {
  const database = useServerDatabase('postgresql', 'db-outage');
  let proxy: Proxy;
  let server: ServerProcess;
  beforeAll(async () => {
    const direct = new URL(database.env.DATABASE_URL!);
    proxy = await startProxy(direct.toString());
    const viaProxy = new URL(direct);
    viaProxy.port = new URL(proxy.url).port;
    server = await database.start({ env: { DATABASE_URL: viaProxy.toString() } });
  });
  afterAll(async () => {
    proxy?.refuse(false);
    await server?.stop();
    await proxy?.close();
  });

  const submit = (name: string) => server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'true', name }) });

  it('answers 503 with Retry-After while it is down, and a launch with its submission id goes through once it is back', async () => {
    expect((await submit('before')).status).toBe(201);
    proxy.refuse(true);
    for (const res of [await submit('during'), await server.api('/api/jobs'), await server.api('/api/jobs/1')]) {
      const body = (await res.json()) as { detail: string };
      expect([res.status, res.headers.get('retry-after')], body.detail).toEqual([503, '2']);
      expect(body.detail).toMatch(/^the database cannot be reached right now \(.+\); retry in a few seconds/);
    }
    const health = await fetch(`${server.url}/api/health`);
    expect([health.status, health.headers.get('retry-after')]).toEqual([503, '2']);
    const h = (await health.json()) as { ok: boolean; error: string };
    expect(h.ok).toBe(false);
    // No host, port or driver text for a caller without a token.
    expect(h.error).toBe('the database did not answer (a signed-in caller is told why)');

    // The CLI retries its submit (it carries a submission id) until the database is back.
    const cli = startCli(server, ['launch', '-d', '--cmd', 'true', '-n', 'through-outage']);
    await cli.waitFor(/retrying/, 60_000);
    proxy.refuse(false);
    const r = await cli.done;
    expect(r.code, show(r)).toBe(EXIT.OK);
    const id = submittedId(r.stdout + r.stderr);
    const jobs = (await (await server.api('/api/jobs?q=through-outage')).json()) as { jobs: Array<{ id: number; name: string }> };
    expect(jobs.jobs.filter((j) => j.name === 'through-outage').map((j) => j.id)).toEqual([id]);
    // And the server is whole again.
    expect((await submit('after')).status).toBe(201);
  });
});
