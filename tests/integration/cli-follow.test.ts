/**
 * `jobdeck logs` across a lost server: the server is killed (kill -9) mid-follow and started
 * again on the same data and port; the CLI reconnects with backoff and resumes from the last
 * task, attempt and byte offset it received — every line exactly once, markers not repeated —
 * and still ends with the job's status. Without a server coming back it gives up (exit 5).
 * Real server processes, a real job, the real CLI process; PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-cli npx next build`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { runCli, show, startCli, submittedId, waitStatus } from './cli-run';

const LINES = 40;
/** ~10 s of output: `line 1` … `line 40`, one every 250 ms. */
const STEADY = `for i in $(seq 1 ${LINES}); do echo "line $i"; sleep 0.25; done`;
const expected = Array.from({ length: LINES }, (_, i) => `line ${i + 1}\n`).join('');

describe.each(DB_KINDS)('jobdeck logs survives a server restart (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'cli-follow');

  beforeAll(async () => {
    server = await database.start();
  });

  afterAll(async () => {
    if (server) await runCli(server, ['cancel', '-a', '-y']).catch(() => undefined);
  });

  it('kill -9 of the server mid-follow: the CLI resumes where it was, nothing lost, nothing twice', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', STEADY, '-n', 'steady']);
    const id = submittedId(d.stdout);
    const follow = startCli(server, ['logs', String(id)], { env: { JOBDECK_RECONNECT_TIMEOUT_MS: '60000' } });
    await follow.waitFor(/line 5\n/);

    const port = Number(new URL(server.url).port);
    await server.kill9();
    await follow.waitFor(/lost the connection to jobdeck/);
    // The CLI keeps trying while nobody listens; the same data folder and port come back.
    await new Promise((r) => setTimeout(r, 1500));
    server = await database.start({ home: server.home, token: server.token, port });

    const r = await follow.done;
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe(expected);
    expect(r.stderr.match(/attempt 1 started/g), show(r)).toHaveLength(1);
    expect(r.stderr.match(/├── Job \d+ \(steady\)/g), show(r)).toHaveLength(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`✓ Job ${id} finished (status: SUCCEEDED)`);
  });

  it('gives up after JOBDECK_RECONNECT_TIMEOUT_MS without a server: exit 5, the job was not touched', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', 'echo up; sleep 30', '-n', 'orphan']);
    const id = submittedId(d.stdout);
    await waitStatus(server, id, (s) => s === 'RUNNING');
    const follow = startCli(server, ['logs', String(id)], { env: { JOBDECK_RECONNECT_TIMEOUT_MS: '1500' } });
    await follow.waitFor(/up\n/);
    const port = Number(new URL(server.url).port);
    await server.kill9();
    const r = await follow.done;
    expect(r.code, show(r)).toBe(EXIT.STOPPED_FOLLOWING);
    expect(r.stderr).toContain(`Stopped following job ${id}`);
    expect(r.stdout).toBe('up\n');
    // Bring the server back for the cleanup (and check the job is still alive).
    server = await database.start({ home: server.home, token: server.token, port });
    const job = (await (await server.api(`/api/jobs/${id}`)).json()) as { status: string };
    expect(['RUNNING', 'RECOVERING', 'STARTING']).toContain(job.status);
  });
});
