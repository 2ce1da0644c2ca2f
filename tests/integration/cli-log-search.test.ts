/**
 * The CLI's side of the log search and of retention, against a real server (both databases):
 * `jobdeck logs --grep` prints each match with its job, task, attempt and line, exits 0 / 1 (no
 * match) / 2 (a job id with --grep, a bad bound), and selects jobs with the list's filter
 * (--metadata, --owner as `queue` has them); `queue --since / --until` select by submitted time;
 * `jobdeck logs ID` relays a 10 MB single-line log byte for byte without holding it; and, on
 * PostgreSQL (where this process can age a job behind the server's back), `jobdeck logs ID` (and
 * `--all`) of a job whose logs the retention policy removed says "logs removed on <date> by the
 * retention policy", then the job's final status, and exits 0.
 *
 * Needs a built app (`npx next build`, or JOBDECK_NEXT_DIST as for the other server suites).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { BIN, runCli, show, submittedId } from './cli-run';

/** Waits until job `id` is terminal (GET /api/jobs/{id}). */
async function waitTerminal(server: ServerProcess, id: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const j = (await (await server.api(`/api/jobs/${id}`)).json()) as { status: string; endedAt: string | null };
    if (j.endedAt) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${id} did not end`);
}

/** Runs the CLI with its stdout hashed as it comes (never kept), sampling its RSS (/proc) until it exits. */
function streamCli(server: ServerProcess, args: string[]): Promise<{ code: number | null; sha256: string; bytes: number; peakRss: number }> {
  const proc = spawn(process.execPath, [BIN, ...args, '--url', server.url], { env: { ...process.env, JOBDECK_URL: '', JOBDECK_TOKEN: server.token, NO_COLOR: '1', FORCE_COLOR: '' }, stdio: ['ignore', 'pipe', 'ignore'] });
  const hash = createHash('sha256');
  let bytes = 0;
  let peakRss = 0;
  const sample = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
      if (m) peakRss = Math.max(peakRss, Number(m[1]) * 1024);
    } catch {
      // exited
    }
  };
  const timer = setInterval(sample, 10);
  proc.stdout.on('data', (d: Buffer) => {
    hash.update(d);
    bytes += d.length;
    sample();
  });
  return new Promise((resolve) => proc.once('close', (code) => {
    clearInterval(timer);
    resolve({ code, sha256: hash.digest('hex'), bytes, peakRss });
  }));
}

describe.each(DB_KINDS)('CLI log reading, search and removed logs (%s)', (kind) => {
  const database = useServerDatabase(kind, `cli-log-search-${kind}`);
  let server: ServerProcess;
  beforeAll(async () => {
    server = await database.start({ env: { JOBDECK_RETAIN_LOGS_DAYS: '1', JOBDECK_RETENTION_INTERVAL_MS: '200' } });
  });

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

  it("logs --grep takes the list's filter: --metadata and --owner (a name, or me) as queue does", async () => {
    // A second user submits a job with metadata through the API with its own token.
    const user = (await (await server.api('/api/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'mia', role: 'member' }) })).json()) as { id: number };
    const tok = (await (await server.api('/api/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'grep', userId: user.id }) })).json()) as { token: string };
    const sub = await fetch(`${server.url}/api/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tok.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cmd: 'echo "mia: disk full"', name: 'grep-mia', metadata: { team: 'vision' } }),
    });
    expect(sub.status, await sub.clone().text()).toBe(201);
    const miaJob = ((await sub.json()) as { id: number }).id;
    await waitTerminal(server, miaJob);
    const mine = await runCli(server, ['launch', '--cmd', 'echo "admin: disk full"', '-n', 'grep-admin']);
    const adminJob = submittedId(mine.stderr);
    const jobsOf = (r: { stdout: string }) => [...new Set(r.stdout.trim().split('\n').filter(Boolean).map((l) => Number(/^job (\d+)/.exec(l)?.[1])))].sort((a, b) => a - b);

    const byMeta = await runCli(server, ['logs', '--grep', 'disk full', '--metadata', 'team=vision']);
    expect([byMeta.code, jobsOf(byMeta)], show(byMeta)).toEqual([EXIT.OK, [miaJob]]);
    const byOwner = await runCli(server, ['logs', '--grep', 'disk full', '--owner', 'mia']);
    expect([byOwner.code, jobsOf(byOwner)], show(byOwner)).toEqual([EXIT.OK, [miaJob]]);
    const byMe = await runCli(server, ['logs', '--grep', ': disk full', '--owner', 'me']);
    expect(jobsOf(byMe), show(byMe)).toEqual([adminJob]);
    const none = await runCli(server, ['logs', '--grep', 'disk full', '--metadata', 'team=vision', '--owner', 'me']);
    expect([none.code, none.stdout], show(none)).toEqual([1, '']);
    const badPair = await runCli(server, ['logs', '--grep', 'x', '--metadata', 'novalue']);
    expect([badPair.code, badPair.stderr.includes('--metadata: expected key=value')], show(badPair)).toEqual([EXIT.USAGE, true]);
    const unknown = await runCli(server, ['logs', '--grep', 'x', '--owner', 'nobody']);
    expect([unknown.code, unknown.stderr.includes('no user is named "nobody"')], show(unknown)).toEqual([EXIT.USAGE, true]);
  });

  it('queue --since / --until select by submitted time (at or after / before)', async () => {
    const r = await runCli(server, ['launch', '--cmd', 'true', '-n', 'window-job']);
    const id = submittedId(r.stderr);
    const at = ((await (await server.api(`/api/jobs/${id}`)).json()) as { submittedAt: string }).submittedAt;
    const later = new Date(Date.parse(at) + 1).toISOString();
    const ids = async (...args: string[]) => {
      const q = await runCli(server, ['queue', '--name', 'window-job', '--json', ...args]);
      expect(q.code, show(q)).toBe(EXIT.OK);
      return (JSON.parse(q.stdout) as Array<{ id: number }>).map((j) => j.id);
    };
    expect(await ids('--since', at)).toEqual([id]);
    expect(await ids('--since', later)).toEqual([]);
    expect(await ids('--until', later)).toEqual([id]);
    expect(await ids('--until', at)).toEqual([]);
    expect(await ids('--since', at.slice(0, 10), '--until', new Date(Date.parse(at) + 86_400_000).toISOString().slice(0, 10))).toEqual([id]);
    const bad = await runCli(server, ['queue', '--since', 'yesterday']);
    expect([bad.code, bad.stderr.includes('submittedAfter must be an ISO-8601 time')], show(bad)).toEqual([EXIT.USAGE, true]);
  });

  it('logs streams a 10 MB single-line log byte for byte, in bounded memory', async () => {
    const r = await runCli(server, ['launch', '--cmd', 'head -c 10000000 /dev/zero | tr "\\0" x; printf "\\nend\\n"', '-n', 'one-long-line', '--detach']);
    const id = submittedId(r.stdout + r.stderr);
    await waitTerminal(server, id);
    const file = createHash('sha256').update(readFileSync(path.join(server.home, 'jobs', String(id), 'task-0', 'attempt-1', 'run.log'))).digest('hex');
    expect(file).toBe(createHash('sha256').update('x'.repeat(10_000_000) + '\nend\n').digest('hex'));
    const { code, sha256, bytes, peakRss } = await streamCli(server, ['logs', String(id), '--no-follow']);
    expect([code, bytes, sha256]).toEqual([EXIT.OK, 10_000_005, file]);
    // The CLI relays the line as it comes (about +20 MB over a `queue` run's peak, measured): a
    // CLI that gathered the line, or copied it over and over, would hold several times the 10 MB.
    const idle = (await streamCli(server, ['queue', '--limit', '1'])).peakRss;
    expect(peakRss - idle).toBeLessThan(45 * 1024 * 1024);
  });

  it.runIf(kind === 'postgresql')('logs ID (and --all) of a job whose logs the policy removed says so with its final status and exits 0, as sky jobs logs does', async () => {
    const r = await runCli(server, ['launch', '--cmd', 'echo old output; exit 3', '-n', 'aged']);
    expect(r.code, show(r)).toBe(EXIT.JOB_FAILED);
    const id = submittedId(r.stderr);
    await database.db!.prisma.job.update({ where: { id }, data: { endedAt: new Date(Date.now() - 3 * 86_400_000) } });
    let removed = false;
    for (let i = 0; i < 100 && !removed; i++) {
      removed = !!(await database.db!.prisma.job.findUnique({ where: { id } }))?.logsRemovedAt;
      if (!removed) await new Promise((res) => setTimeout(res, 100));
    }
    expect(removed).toBe(true);
    const gone = new RegExp(`job ${id}: logs removed on \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC by the retention policy; nothing to show\\.\\n✗ Job ${id} finished \\(status: FAILED\\)`);
    for (const args of [['logs', String(id)], ['logs', String(id), '--all'], ['logs', String(id), '--no-follow']]) {
      const logs = await runCli(server, args);
      expect(logs.code, show(logs)).toBe(EXIT.OK);
      expect(logs.stderr).toMatch(gone);
      expect(logs.stdout).toBe('');
    }
  });
});
