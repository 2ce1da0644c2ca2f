/**
 * The CLI's side of the log search and of retention, against a real server (both databases):
 * `jobdeck logs --grep` prints each match with its job, task, attempt and line, exits 0 / 1 (no
 * match) / 2 (a job id with --grep, a bad bound); and, on PostgreSQL (where this process can age a
 * job behind the server's back), `jobdeck logs ID` of a job whose logs the retention policy
 * removed says "logs removed on <date> by the retention policy" and exits 4.
 *
 * Needs a built app (`npx next build`, or JOBDECK_NEXT_DIST as for the other server suites).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { runCli, show, submittedId } from './cli-run';

describe.each(DB_KINDS)('CLI log search and removed logs (%s)', (kind) => {
  const database = useServerDatabase(kind, `cli-log-search-${kind}`);
  let server: ServerProcess;
  beforeAll(async () => {
    server = await database.start({ env: { JOBDECK_RETAIN_LOGS_DAYS: '1', JOBDECK_RETENTION_INTERVAL_MS: '200' } });
  }, 120_000);

  it('logs --grep prints the matches of the selected jobs, then a summary; exit 0, 1 without a match, 2 for misuse', async () => {
    const a = await runCli(server, ['launch', '--cmd', 'echo starting; echo "fatal: Disk Full on /data"; echo done', '-n', 'grep-a']);
    expect(a.code, show(a)).toBe(EXIT.OK);
    const b = await runCli(server, ['launch', '--cmd', 'echo "disk full? no"', '-n', 'grep-b']);
    expect(b.code, show(b)).toBe(EXIT.OK);
    const idA = submittedId(a.stderr);
    const idB = submittedId(b.stderr);
    const r = await runCli(server, ['logs', '--grep', 'disk full', '-i']);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout.trim().split('\n').sort()).toEqual([`job ${idA} · task 0 · attempt 1 · line 2: fatal: Disk Full on /data`, `job ${idB} · task 0 · attempt 1 · line 1: disk full? no`].sort());
    expect(r.stderr).toMatch(/2 matches in the logs of \d+ jobs/);
    const named = await runCli(server, ['logs', '--grep', 'disk', '-i', '--jobs-named', 'grep-a']);
    expect(named.stdout.trim(), show(named)).toBe(`job ${idA} · task 0 · attempt 1 · line 2: fatal: Disk Full on /data`);
    const none = await runCli(server, ['logs', '--grep', 'no such text anywhere']);
    expect([none.code, none.stdout], show(none)).toEqual([1, '']);
    expect((await runCli(server, ['logs', '5', '--grep', 'x'])).code).toBe(EXIT.USAGE);
    const bad = await runCli(server, ['logs', '--grep', 'x', '--limit', '0']);
    expect(bad.code, show(bad)).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('limit must be an integer from 1 to 1000');
  });

  it.runIf(kind === 'postgresql')('logs ID of a job whose logs the policy removed says so and exits 4', async () => {
    const r = await runCli(server, ['launch', '--cmd', 'echo old output', '-n', 'aged']);
    const id = submittedId(r.stderr);
    await database.db!.prisma.job.update({ where: { id }, data: { endedAt: new Date(Date.now() - 3 * 86_400_000) } });
    let removed = false;
    for (let i = 0; i < 100 && !removed; i++) {
      removed = !!(await database.db!.prisma.job.findUnique({ where: { id } }))?.logsRemovedAt;
      if (!removed) await new Promise((res) => setTimeout(res, 100));
    }
    expect(removed).toBe(true);
    const logs = await runCli(server, ['logs', String(id)]);
    expect(logs.code, show(logs)).toBe(EXIT.NOT_FOUND);
    expect(logs.stderr).toMatch(new RegExp(`job ${id}: logs removed on \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC by the retention policy`));
    expect(logs.stdout).toBe('');
  });
});
