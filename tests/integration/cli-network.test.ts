/**
 * `jobdeck` through a network that drops connections: a TCP proxy (cli-proxy.ts) between the real
 * CLI process and a real server cuts chosen answers mid-body, resets the WebSocket handshake, or
 * cuts every connection on a schedule. The CLI must retry what is safe to retry (GETs, a submit
 * with its submissionId), never create a second job, and still print every marker exactly once
 * with stdout exactly the job's bytes. Also: on a terminal, a job's escape sequences other than
 * colours never reach the user's terminal (examples/hostile-output.yaml), while redirected output
 * and `--raw` stay byte-exact. PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-<name> npx next build`, and the same
 * JOBDECK_NEXT_DIST when running vitest.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSummary } from '../../lib/api/types';
import type { CliIO } from '../../lib/cli/context';
import { EXIT } from '../../lib/cli/exit-codes';
import { main } from '../../lib/cli/main';
import { terminalSafe } from '../../lib/cli/terminal-safe';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import { ROOT, type ServerProcess } from '../helpers/server';
import { BIN, runCli, show, submittedId, waitTerminal } from './cli-run';
import { startProxy, type Proxy, type ProxyOptions } from './cli-proxy';

const E = '\u001b';

/** Task 0 prints 4 lines over ~1 s and fails; one restart; task 1 never runs. */
const FLAKY = `name: flaky-net
---
name: steps
job_recovery:
  max_restarts_on_errors: 1
run: |
  for i in 1 2 3 4; do echo "attempt $JOBDECK_ATTEMPT line $i"; sleep 0.25; done
  exit 1
---
run: echo "never"
`;
const FLAKY_OUT = [1, 2].map((a) => [1, 2, 3, 4].map((i) => `attempt ${a} line ${i}\n`).join('')).join('');

/** The marker lines a follow of FLAKY prints, each exactly once. */
function flakyMarkers(id: number): string[] {
  return [
    'Task 0 (steps), attempt 1 started',
    'Task 0 attempt 1 failed with exit code 1',
    '↻ Restarting task 0 (attempt 2 of 2)',
    'Task 0 (steps), attempt 2 started',
    'Task 0 attempt 2 failed with exit code 1',
    'Task 1 will not run (status: CANCELLED)',
    `✗ Job ${id} finished (status: FAILED)`,
  ];
}

function expectMarkersOnce(stderr: string, markers: string[], ctx: string): void {
  for (const m of markers) expect(stderr.split(m).length - 1, `"${m}" once in:\n${ctx}`).toBe(1);
}

/**
 * An onServerData hook that cuts the first answer to a request matching `re` after its headers
 * and 3 bytes of its body (the body read then fails: undici's "terminated").
 */
function cutFirstAnswerMidBody(re: RegExp): NonNullable<ProxyOptions['onServerData']> & { fired: () => boolean } {
  let fired = false;
  const seen = new Map<number, Buffer>();
  const headersDone = new Set<number>();
  const hook = (conn: number, chunk: Buffer, request: string) => {
    if (fired || !re.test(request)) return;
    if (headersDone.has(conn)) {
      fired = true;
      return { forward: Math.min(3, chunk.length - 1) };
    }
    const all = Buffer.concat([seen.get(conn) ?? Buffer.alloc(0), chunk]);
    seen.set(conn, all);
    const h = all.indexOf('\r\n\r\n');
    if (h < 0) return;
    headersDone.add(conn);
    const bodyHere = all.length - (h + 4);
    if (bodyHere <= 3) return; // the body comes in a later chunk: cut that one
    fired = true;
    return { forward: chunk.length - bodyHere + 3 };
  };
  return Object.assign(hook, { fired: () => fired });
}

async function jobsNamed(server: ServerProcess, name: string): Promise<JobSummary[]> {
  const list = (await (await server.api('/api/jobs?limit=200')).json()) as { jobs: JobSummary[] };
  return list.jobs.filter((j) => j.name === name);
}

describe.each(DB_KINDS)('jobdeck through a dropping network (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'cli-network');
  let dir: string;
  const proxies: Proxy[] = [];
  const proxy = async (opts: ProxyOptions) => {
    const p = await startProxy(server.url, opts);
    proxies.push(p);
    return p;
  };
  /** Runs the CLI against the proxy (not the server) with the server's token. */
  const viaProxy = (p: Proxy, args: string[], env: Record<string, string> = {}) => runCli(null, [...args, '--url', p.url], { env: { JOBDECK_TOKEN: server.token, ...env } });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-cli-net-'));
    server = await database.start();
  });

  afterAll(async () => {
    for (const p of proxies) await p.close();
    if (server) await runCli(server, ['cancel', '-a', '-y']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('launch: the submit answer is cut mid-body — retried with the same submissionId, one job, followed to the end', async () => {
    const cut = cutFirstAnswerMidBody(/^POST \/api\/jobs HTTP/);
    const p = await proxy({ onServerData: cut });
    const name = `cut-submit-${kind}`;
    const r = await viaProxy(p, ['launch', 'examples/seed-retry-pipeline.yaml', '-n', name]);
    expect(cut.fired(), show(r)).toBe(true);
    expect(r.code, show(r)).toBe(EXIT.JOB_FAILED);
    expect(r.stderr).toContain('⚠ lost the connection to jobdeck');
    expect(r.stderr).toContain('during submit; retrying…');
    expect(r.stderr).not.toContain('terminated\n');
    const id = submittedId(r.stderr);
    expect(r.stderr).not.toContain('the existing job of submission id'); // our own retry, not the user's id
    expect(r.stdout).toBe('task 1, attempt 1\ntask 1, attempt 2\n');
    expectMarkersOnce(r.stderr, ['↻ Restarting task 0 (attempt 2 of 2)', `✗ Job ${id} finished (status: FAILED)`], show(r));
    const jobs = await jobsNamed(server, name);
    expect(jobs.map((j) => j.id)).toEqual([id]);
    expect(jobs[0].submissionId).toMatch(/^jobdeck-cli-[0-9a-f-]{36}$/);
  });

  it('status / queue: a GET answer cut mid-body is retried (exit 0, the table)', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', 'echo hi', '-n', `cut-get-${kind}`]);
    const id = submittedId(d.stdout);
    await waitTerminal(server, id);
    const cutStatus = cutFirstAnswerMidBody(new RegExp(`^GET /api/jobs/${id} HTTP`));
    const st = await viaProxy(await proxy({ onServerData: cutStatus }), ['status', String(id)]);
    expect(cutStatus.fired(), show(st)).toBe(true);
    expect(st.code, show(st)).toBe(EXIT.OK);
    expect(st.stdout).toContain(`Job ${id} (cut-get-${kind}): SUCCEEDED`);
    expect(st.stdout).toMatch(/^TASK\s+ATTEMPT\s+CAUSE\s+STATUS\s+EXIT\s+RESTARTS\s+STARTED\s+DURATION\s+REASON$/m);
    const cutQueue = cutFirstAnswerMidBody(/^GET \/api\/jobs\?/);
    const q = await viaProxy(await proxy({ onServerData: cutQueue }), ['queue', '-a', '--json']);
    expect(cutQueue.fired(), show(q)).toBe(true);
    expect(q.code, show(q)).toBe(EXIT.OK);
    expect((JSON.parse(q.stdout) as JobSummary[]).some((j) => j.id === id)).toBe(true);
  });

  it('cancel: a cut answer is not sent again; exit 6 says the server may have done it', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', 'sleep 30', '-n', `cut-cancel-${kind}`]);
    const id = submittedId(d.stdout);
    const cut = cutFirstAnswerMidBody(/^POST \/api\/jobs\/cancel HTTP/);
    const r = await viaProxy(await proxy({ onServerData: cut }), ['cancel', String(id)]);
    expect(cut.fired(), show(r)).toBe(true);
    expect(r.code, show(r)).toBe(EXIT.UNREACHABLE);
    expect(r.stderr).toContain('before its answer to cancel');
    expect(r.stderr).toContain('may or may not have done it');
    // It did: the one request reached the server.
    expect((await waitTerminal(server, id)).status).toBe('CANCELLED');
  });

  it('logs: the WebSocket handshake of the first connection is reset — retried, not "cannot reach"', async () => {
    const d = await runCli(server, ['launch', '-d', '--cmd', 'echo one; echo two', '-n', `cut-ws-${kind}`]);
    const id = submittedId(d.stdout);
    await waitTerminal(server, id);
    let resets = 0;
    const p = await proxy({
      onServerData: (_conn, _chunk, request) => {
        if (request.startsWith('GET /ws/jobs/') && resets < 1) {
          resets++;
          return 'cut';
        }
      },
    });
    const r = await viaProxy(p, ['logs', String(id)]);
    expect(resets).toBe(1);
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('one\ntwo\n');
  });

  it('every connection cut every 600 ms (the flaky proxy): one job, stdout exact, every marker exactly once', async () => {
    const file = path.join(dir, 'flaky.yaml');
    writeFileSync(file, FLAKY);
    const p = await proxy({ every: 600, phase: 300 });
    const r = await viaProxy(p, ['launch', file]);
    expect(r.code, show(r)).toBe(EXIT.JOB_FAILED);
    const id = submittedId(r.stderr);
    expect(p.cuts(), show(r)).toBeGreaterThan(0);
    expect(r.stdout, show(r)).toBe(FLAKY_OUT);
    expectMarkersOnce(r.stderr, flakyMarkers(id), show(r));
    expect((await jobsNamed(server, 'flaky-net')).filter((j) => j.id >= id - 1 && j.id <= id + 1).map((j) => j.id)).toEqual([id]);
  });

  describe('a hostile job on a terminal', () => {
    let id: number;
    /** The attempt's log as the server stored it (RAW, plus whatever the executor may add). */
    let stored: string;
    const RAW =
      '<script>document.title="pwned"</script><img src=x onerror=alert(1)>\n' +
      `${E}]0;title-change\u0007${E}]8;;http://example.invalid${E}\\link${E}]8;;${E}\\\n` +
      `${E}[31mred${E}[0m ${E}[1mbold${E}[0m \r carriage-return overwrite\n` +
      'no newline at the end';

    beforeAll(async () => {
      const d = await runCli(server, ['launch', '-d', 'examples/hostile-output.yaml']);
      id = submittedId(d.stdout);
      expect((await waitTerminal(server, id)).status).toBe('SUCCEEDED');
      stored = ((await (await server.api(`/api/jobs/${id}/logs?task=0&attempt=1`)).json()) as { data: string }).data;
      expect(stored.startsWith(RAW), JSON.stringify(stored)).toBe(true);
    });

    /** Runs main() in this process with stdout a (pretend) terminal or not; answers stdout bytes. */
    async function logsInProcess(args: string[], tty: boolean): Promise<{ code: number; out: Buffer; err: string }> {
      const out: Buffer[] = [];
      let err = '';
      const io: CliIO = {
        stdout: { write: (c: string | Uint8Array) => (out.push(Buffer.from(c)), true), once: () => undefined, isTTY: tty },
        stderr: { write: (c: string | Uint8Array) => ((err += Buffer.from(c).toString()), true), once: () => undefined, isTTY: false },
        stdin: process.stdin,
        env: { JOBDECK_TOKEN: server.token, NO_COLOR: '1' } as unknown as NodeJS.ProcessEnv,
        cwd: ROOT,
        now: () => new Date(),
        onInterrupt: () => () => undefined,
      };
      const code = await main([...args, '--url', server.url], io);
      return { code, out: Buffer.concat(out), err };
    }

    it('redirected (not a TTY): the bytes exactly as the job wrote them', async () => {
      const r = await logsInProcess(['logs', String(id)], false);
      expect(r.code, r.err).toBe(EXIT.OK);
      expect(r.out.toString()).toBe(stored);
    });

    it('on a TTY: no OSC title/hyperlink, colours and text kept; --raw gives the exact bytes back', async () => {
      const r = await logsInProcess(['logs', String(id)], true);
      expect(r.code, r.err).toBe(EXIT.OK);
      expect(r.out.toString()).toBe(
        '<script>document.title="pwned"</script><img src=x onerror=alert(1)>\n' +
          'link\n' +
          `${E}[31mred${E}[0m ${E}[1mbold${E}[0m \r carriage-return overwrite\n` +
          'no newline at the end' +
          terminalSafe(stored.slice(RAW.length)),
      );
      const raw = await logsInProcess(['logs', String(id), '--raw'], true);
      expect(raw.out.toString()).toBe(stored);
    });

    it('a real terminal (a pty through `script`): the title sequence never reaches it', async () => {
      const cmd = [process.execPath, BIN, 'logs', String(id), '--url', server.url].map((a) => `'${a}'`).join(' ');
      const out = await new Promise<string>((resolve, reject) => {
        const p = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, JOBDECK_TOKEN: server.token, NO_COLOR: '1', JOBDECK_URL: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
        let text = '';
        p.stdout.on('data', (d: Buffer) => (text += d.toString('latin1')));
        p.stderr.on('data', (d: Buffer) => (text += d.toString('latin1')));
        p.on('error', reject);
        p.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`script exited ${code}:\n${text}`))));
        p.stdin.end();
      });
      expect(out).not.toContain(`${E}]`);
      expect(out).not.toContain('title-change');
      expect(out).not.toContain('example.invalid');
      expect(out).toContain('link');
      expect(out).toContain(`${E}[31mred${E}[0m`);
      expect(out).toContain(Buffer.from(`✓ Job ${id} finished (status: SUCCEEDED)`).toString('latin1'));
    });
  });
});
