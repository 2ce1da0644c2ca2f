/**
 * The QA scenario for a clean stop: `jobdeck logs ID` follows a running job, the server gets
 * SIGTERM — it must exit promptly (exit 0) even though the CLI keeps reconnecting (new WebSocket
 * upgrades are refused with 503 while it stops) — then a new server starts on the same data
 * folder and port: the CLI reconnects, keeps following, and ends with the job's last line, the
 * final status and exit 0; nothing lost, nothing twice. (kill -9 mid-follow: cli-follow.test.ts.)
 * A restart that keeps the server away for a while is caught up about as soon as the new server
 * listens: the server said it was restarting (close 1001), so the CLI keeps knocking at least
 * once a second (the waits it chose, from its JOBDECK_DEBUG lines), within its default 5-minute
 * limit.
 * Real server processes, a real job, the real CLI process; PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=<dir> npx next build`, and the same JOBDECK_NEXT_DIST.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { RESTART_BACKOFF_MAX_MS } from '../../lib/cli/follow';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { runCli, show, startCli, submittedId } from './cli-run';

const LINES = 40;
/**
 * `t 1` … `t 40`, one every 300 ms, holding after `t 3` until `gate` exists: the job is still
 * running across the restart however slowly a busy machine starts the CLI and the servers.
 */
const steady = (gate: string) => `for i in $(seq ${LINES}); do if [ $i = 4 ]; then while [ ! -f ${gate} ]; do sleep 0.05; done; fi; echo t $i; sleep 0.3; done`;
const expected = Array.from({ length: LINES }, (_, i) => `t ${i + 1}\n`).join('');

describe.each(DB_KINDS)('jobdeck logs across a SIGTERM restart of the server (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'cli-restart');

  beforeAll(async () => {
    server = await database.start();
  });

  afterAll(async () => {
    if (server) await runCli(server, ['cancel', '-a', '-y']).catch(() => undefined);
  });

  it('the server exits promptly while the CLI reconnects; the next server on the same home and port serves the rest', async () => {
    const gate = path.join(server.home, 'gate-steady');
    const d = await runCli(server, ['launch', '-d', '--cmd', steady(gate), '-n', 'steady']);
    const id = submittedId(d.stdout);
    const follow = startCli(server, ['logs', String(id)], { env: { JOBDECK_RECONNECT_TIMEOUT_MS: '600000' } });
    await follow.waitFor(/t 3\n/);

    const port = Number(new URL(server.url).port);
    await server.stop(); // SIGTERM, and wait for the exit
    expect(server.proc.exitCode, server.output()).toBe(0);
    // It exited while the CLI was still reconnecting (for up to 10 min): the reconnects did not
    // hold the stop open.
    expect(follow.proc.exitCode, show({ code: null, signal: null, stdout: follow.stdout(), stderr: follow.stderr(), ms: 0 })).toBeNull();
    await follow.waitFor(/lost the connection to jobdeck/);

    server = await database.start({ home: server.home, token: server.token, port });
    writeFileSync(gate, '');
    const r = await follow.done;
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe(expected);
    expect(r.stderr, show(r)).toMatch(/reconnected to jobdeck/);
    expect(r.stderr.match(/attempt 1 started/g), show(r)).toHaveLength(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`✓ Job ${id} finished (status: SUCCEEDED)`);
  });

  it('a restart of seconds: the CLI keeps knocking at least once a second, with its default limit, and is back', async () => {
    const gate = path.join(server.home, 'gate-steady-long');
    const d = await runCli(server, ['launch', '-d', '--cmd', steady(gate), '-n', 'steady-long']);
    const id = submittedId(d.stdout);
    const follow = startCli(server, ['logs', String(id)], { env: { JOBDECK_DEBUG: '1' } });
    await follow.waitFor(/t 3\n/);
    const port = Number(new URL(server.url).port);
    await server.stop();
    await follow.waitFor(/lost the connection to jobdeck: the server is restarting; reconnecting for up to 5 min/);
    // Enough failed tries for a plain doubling backoff to pass 1 s between tries (250, 500,
    // 1000, 2000 ms…): the fifth wait says which rhythm the CLI is on.
    const tries = () => (follow.stderr().match(/next try in \d+ ms \(the server is restarting\)/g) ?? []).length;
    await expect.poll(tries, { timeout: 120_000, interval: 100 }).toBeGreaterThanOrEqual(5);
    server = await database.start({ home: server.home, token: server.token, port });
    await follow.waitFor(/reconnected to jobdeck/);
    writeFileSync(gate, '');
    const r = await follow.done;
    const waits = [...r.stderr.matchAll(/next try in (\d+) ms \(the server is restarting\)/g)].map((m) => Number(m[1]));
    expect(waits.length, show(r)).toBeGreaterThanOrEqual(5);
    expect(waits.filter((ms) => ms > RESTART_BACKOFF_MAX_MS), show(r)).toEqual([]);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe(expected);
    expect(r.stderr.match(/attempt 1 started/g), show(r)).toHaveLength(1);
    const lines = r.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('[jobdeck debug]'));
    expect(lines.at(-1)).toBe(`✓ Job ${id} finished (status: SUCCEEDED)`);
  });
});
