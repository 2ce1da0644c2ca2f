/**
 * `jobdeck server` runs the real server in its own process (what `npm start` runs, without the
 * build): it listens, serves the CLI, and stops on Ctrl-C with exit 0; without a built app it
 * says so and exits 2. PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-cli npx next build`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { runCli, show, startCli } from './cli-run';

describe.each(DB_KINDS)('jobdeck server (%s)', (kind) => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-cli-server-'));
  const token = 'jd_cli_server_test_token_0123456789';
  // The CLI starts these servers itself: only the database's environment comes from the fixture.
  const database = useServerDatabase(kind, 'cli-server', { isolation: 'test' });

  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
  });

  it('serves the CLI and stops on Ctrl-C with exit 0', async () => {
    // As tests/helpers/server.ts does: logs on (vitest silences them), production mode.
    const env: Record<string, string> = { JOBDECK_HOME: home, JOBDECK_TOKEN: token, JOBDECK_LOG_PRETTY: '0', JOBDECK_LOG_LEVEL: 'info', VITEST: '', NODE_ENV: 'production', HOST: '127.0.0.1', ...database.env };
    const srv = startCli(null, ['server', '--port', '0'], { env });
    await srv.waitFor(/jobdeck listening on http:\/\/127\.0\.0\.1:\d+/, 90_000);
    const url = /jobdeck listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(srv.stdout() + srv.stderr())![1];
    const target = { url, token, home } as ServerProcess;

    const r = await runCli(target, ['launch', '--cmd', 'echo "served by jobdeck server"']);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('served by jobdeck server\n');
    // The local token file is not written when JOBDECK_TOKEN is set; --token works as well as the env.
    const q = await runCli(target, ['queue', '--json', '--token', token], { env: { JOBDECK_TOKEN: '' } });
    expect(q.code, show(q)).toBe(EXIT.OK);
    expect((JSON.parse(q.stdout) as unknown[]).length).toBe(1);

    srv.proc.kill('SIGINT');
    const done = await srv.done;
    expect(done.code, show(done)).toBe(0);
  });

  it('without JOBDECK_TOKEN the server writes its token file, and the CLI finds it through JOBDECK_HOME', async () => {
    const own = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-cli-token-'));
    try {
      const env: Record<string, string> = { JOBDECK_HOME: own, JOBDECK_TOKEN: '', JOBDECK_LOG_PRETTY: '0', JOBDECK_LOG_LEVEL: 'info', VITEST: '', NODE_ENV: 'production', HOST: '127.0.0.1', ...database.env };
      const srv = startCli(null, ['server', '--port', '0'], { env });
      await srv.waitFor(/jobdeck listening on http:\/\/127\.0\.0\.1:\d+/, 90_000);
      const url = /jobdeck listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(srv.stdout() + srv.stderr())![1];
      const local = await runCli(null, ['queue', '-a', '--json', '--url', url], { env: { JOBDECK_HOME: own, JOBDECK_TOKEN: '' } });
      expect(local.code, show(local)).toBe(EXIT.OK);
      const wrongHome = await runCli(null, ['queue', '--url', url], { env: { JOBDECK_HOME: home, JOBDECK_TOKEN: '' } });
      expect(wrongHome.code, show(wrongHome)).toBe(EXIT.UNAUTHORIZED);
      // JOBDECK_TOKEN wins over the file.
      const envWins = await runCli(null, ['queue', '--url', url], { env: { JOBDECK_HOME: own, JOBDECK_TOKEN: 'jd_wrong_token_but_takes_precedence' } });
      expect(envWins.code, show(envWins)).toBe(EXIT.UNAUTHORIZED);
      srv.proc.kill('SIGTERM');
      expect((await srv.done).code).toBe(0);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('without a built app: a clear message and exit 2', async () => {
    const r = await runCli(null, ['server', '--port', '0'], { env: { JOBDECK_HOME: home, JOBDECK_NEXT_DIST: '.next-missing-build' } });
    expect(r.code, show(r)).toBe(EXIT.USAGE);
    expect(r.stderr).toContain('the web app is not built');
    expect(r.stderr).toContain('npm run build');
  });
});
