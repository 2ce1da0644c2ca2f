/**
 * The QA scenario for a clean stop: `jobdeck logs ID` follows a running job, the server gets
 * SIGTERM — it must exit promptly (exit 0) even though the CLI keeps reconnecting (new WebSocket
 * upgrades are refused with 503 while it stops) — then a new server starts on the same data
 * folder and port: the CLI reconnects, keeps following, and ends with the job's last line, the
 * final status and exit 0; nothing lost, nothing twice. (kill -9 mid-follow: cli-follow.test.ts.)
 * A restart that keeps the server away for a while is caught up about as soon as the new server
 * listens: the server said it was restarting (close 1001), so the CLI keeps knocking at least
 * once a second, within its default 5-minute limit.
 * Real server processes, a real job, the real CLI process; PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=<dir> npx next build`, and the same JOBDECK_NEXT_DIST.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { runCli, show, startCli, submittedId } from './cli-run';

const LINES = 40;
/** ~12 s of output: `t 1` … `t 40`, one every 300 ms. */
const STEADY = `for i in $(seq ${LINES}); do echo t $i; sleep 0.3; done`;
const expected = Array.from({ length: LINES }, (_, i) => `t ${i + 1}\n`).join('');

describe.each(DB_KINDS)('jobdeck logs across a SIGTERM restart of the server (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'cli-restart');

  beforeAll(async () => {
    server = await database.start();
  }, 120_000);

  afterAll(async () => {
    if (server) await runCli(server, ['cancel', '-a', '-y']).catch(() => undefined);
  });

  it('the server exits promptly while the CLI reconnects; the next server on the same home and port serves the rest', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', STEADY, '-n', 'steady']);
    const id = submittedId(d.stdout);
    const follow = startCli(server, ['logs', String(id)], { env: { JOBDECK_RECONNECT_TIMEOUT_MS: '60000' } });
    await follow.waitFor(/t 3\n/);

    const port = Number(new URL(server.url).port);
    const t0 = Date.now();
    await server.stop(); // SIGTERM, and wait for the exit
    const stopMs = Date.now() - t0;
    expect(server.proc.exitCode, server.output()).toBe(0);
    expect(stopMs, `the server took ${stopMs} ms to stop`).toBeLessThan(8000);
    await follow.waitFor(/lost the connection to jobdeck/);

    server = await database.start({ home: server.home, token: server.token, port });
    const r = await follow.done;
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe(expected);
    expect(r.stderr, show(r)).toMatch(/reconnected to jobdeck/);
    expect(r.stderr.match(/attempt 1 started/g), show(r)).toHaveLength(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`✓ Job ${id} finished (status: SUCCEEDED)`);
  }, 120_000);

  it('a restart of ~8 s: the CLI is back within seconds of the new server listening, with its default limit', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', STEADY, '-n', 'steady-long']);
    const id = submittedId(d.stdout);
    const follow = startCli(server, ['logs', String(id)]);
    await follow.waitFor(/t 3\n/);
    const port = Number(new URL(server.url).port);
    await server.stop();
    await follow.waitFor(/lost the connection to jobdeck: the server is restarting; reconnecting for up to 5 min/);
    // Long enough for a plain doubling backoff to reach seconds between tries.
    await new Promise((r) => setTimeout(r, 8000));
    server = await database.start({ home: server.home, token: server.token, port });
    const listening = Date.now();
    await follow.waitFor(/reconnected to jobdeck/);
    const backMs = Date.now() - listening;
    console.log(`[cli-restart ${kind}] from "listening" to the CLI reconnected: ${backMs} ms`);
    // RESTART_BACKOFF_MAX_MS (1 s) plus slack for a loaded machine; a plain doubling backoff
    // would be waiting 8 s or more by now.
    expect(backMs).toBeLessThan(3000);
    const r = await follow.done;
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe(expected);
    expect(r.stderr.match(/attempt 1 started/g), show(r)).toHaveLength(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`✓ Job ${id} finished (status: SUCCEEDED)`);
  }, 120_000);
});
