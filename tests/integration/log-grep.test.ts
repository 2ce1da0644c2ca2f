/**
 * The cross-job log search (lib/logs/grep.ts, lib/api/grep.ts GET /api/logs/grep) over real log
 * files and both databases: ripgrep and the Node scan find the same lines with the same line
 * numbers and text (a literal pattern with regex characters, any case, a 3 MB line cut), the
 * list's filter picks the jobs, results and time are bounded, an aborted search stops, bad
 * parameters are refused naming the field. A regular expression that backtracks for ever
 * runs off the event loop (the Node scan's worker thread) and ends at the time limit; one that
 * does not compile is refused (400) before the search, with either engine. ripgrep must be
 * installed (scripts/ensure-services.sh installs it): the engines are compared, not skipped.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api/errors';
import { grepResponse, parseGrepQuery } from '../../lib/api/grep';
import { list } from '../../lib/api/jobs';
import { parseListQuery } from '../../lib/api/request';
import type { Actor } from '../../lib/jobs/roles';
import { grepLogs, hasRipgrep, MAX_MATCH_TEXT, NODE_SCANS_AT_ONCE, type GrepMatch } from '../../lib/logs/grep';
import { DB_KINDS } from '../helpers/db';
import { storeOf } from '../helpers/store';
import { useDatabase } from '../helpers/use-database';
import { JobDriver } from './ws-fixtures';

const LONG = 'y'.repeat(3_000_000) + ' Disk Full at the end';

/** Pids of this process's `rg` children now (from /proc). */
function rgPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^[0-9]+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return stat.includes('(rg)') && Number(fields[1]) === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.each(DB_KINDS)('log search (%s)', (kind) => {
  // One set of jobs for the whole file (the default empties the tables before each test).
  const tdb = useDatabase(kind, `log-grep-${kind}`, { isolation: 'file' });
  let dir: string;
  const jobs: Record<string, JobDriver> = {};
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-grep-'));
    const make = async (name: string, log: string, status: 'SUCCEEDED' | 'FAILED') => {
      const d = await JobDriver.create(tdb.db.prisma, dir, { name });
      const a = await d.startAttempt(0, 1);
      mkdirSync(path.dirname(d.logPath(0, 1)), { recursive: true });
      writeFileSync(d.logPath(0, 1), log);
      await d.endAttempt(a, status, status === 'FAILED' ? 1 : 0);
      await d.endTask(0, status, status === 'FAILED' ? 1 : 0);
      await d.endJob(status);
      jobs[name] = d;
    };
    await make('alpha', 'starting\nloading a.b(1)\nERROR: disk full\nretrying\r\nerror: DISK FULL again\n', 'SUCCEEDED');
    await make('beta', 'disk full at line 1\n' + Array.from({ length: 9998 }, (_, i) => `line ${i + 2}`).join('\n') + '\nlast: disk full, no newline', 'FAILED');
    await make('gamma', `one\n${LONG}\nthree\n`, 'FAILED');
    await make('delta', `Übergröße: 1234 Bytes\nwarn: retry 7 of 10\nWARN: retry 8 of 10\ncafé au lait\n${'a'.repeat(28)}b\n`, 'SUCCEEDED');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const files = () => Object.values(jobs).map((d) => ({ path: d.logPath(0, 1), key: d.jobId }));
  const run = async (engine: 'rg' | 'node', pattern: string, o: { regex?: boolean; ignoreCase?: boolean; maxResults?: number } = {}) => {
    const out: GrepMatch<number>[] = [];
    const s = await grepLogs(files(), { pattern, maxResults: 1000, maxMs: 20_000, engine, ...o }, (m) => out.push(m));
    return { s, out: out.sort((a, b) => a.key - b.key || a.line - b.line) };
  };
  const engines = ['rg', 'node'] as const;

  it('has ripgrep to compare with (scripts/ensure-services.sh installs it)', () => {
    expect(hasRipgrep(), 'rg and gzip must be installed: apt-get install ripgrep').toBe(true);
  });

  it('finds the same lines, numbers and text with ripgrep and the Node scan', async () => {
    for (const engine of engines) {
      const { s, out } = await run(engine, 'disk full', { ignoreCase: true });
      expect(s).toEqual({ engine, matches: 5, reason: 'done' });
      const short = out.map((m) => [m.key, m.line, m.cut ? `${m.text.length}…` : m.text]);
      expect(short).toEqual([
        [jobs.alpha.jobId, 3, 'ERROR: disk full'],
        [jobs.alpha.jobId, 5, 'error: DISK FULL again'],
        [jobs.beta.jobId, 1, 'disk full at line 1'],
        [jobs.beta.jobId, 10_000, 'last: disk full, no newline'],
        [jobs.gamma.jobId, 2, `${MAX_MATCH_TEXT}…`],
      ]);
      // Case matters without ignoreCase; the pattern is literal (a.b( is no regex).
      expect((await run(engine, 'disk full')).out.map((m) => [m.key, m.line])).toEqual([[jobs.alpha.jobId, 3], [jobs.beta.jobId, 1], [jobs.beta.jobId, 10_000]]);
      expect((await run(engine, 'a.b(1)')).out.map((m) => m.line)).toEqual([2]);
      expect((await run(engine, 'a.b', { regex: false })).out.length).toBe(1);
      expect((await run(engine, '^line 99+$', { regex: true })).out.map((m) => m.line)).toEqual([99, 999, 9999]);
      // A \r before the newline is not part of the text.
      expect((await run(engine, 'retrying')).out.map((m) => m.text)).toEqual(['retrying']);
    }
  });

  it('gives the same matches with both engines for the regular expressions both read alike', async () => {
    const corpus = [
      ['(warn|WARN): retry [0-9]+', false],
      ['retry \\d+ of 10$', false],
      ['^[a-z]+: ', false],
      ['\\bdisk\\b', true],
      ['\\p{Lu}\\p{Ll}+gr', false],
      ['caf.', false],
      ['[äöü]BERGRÖ', true],
      ['(a+)+b$', false],
      ['line 1[0-9]{2}$', false],
      ['y{5} Disk|^one$', false],
    ] as const;
    for (const [pattern, ignoreCase] of corpus) {
      const [rg, node] = await Promise.all(engines.map(async (engine) => (await run(engine, pattern, { regex: true, ignoreCase })).out.map((m) => [m.key, m.line, m.text.slice(0, 80), m.cut])));
      expect(node, pattern).toEqual(rg);
      expect(rg.length, `${pattern} finds something`).toBeGreaterThan(0);
    }
  });

  it('runs a pattern that backtracks for ever off the event loop, and ends it at the time limit or when aborted', async () => {
    const evil = [{ path: jobs.delta.logPath(0, 1), key: jobs.delta.jobId }];
    // 28 a's and a b: a JavaScript RegExp takes minutes over this one line.
    const ac = new AbortController();
    let ended = false;
    const search = grepLogs(evil, { pattern: '(a+)+$', regex: true, maxResults: 10, maxMs: 600_000, engine: 'node', signal: ac.signal }, () => undefined).finally(() => (ended = true));
    // The event loop keeps turning while it runs: a timer fires, another search answers in full.
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toBe(false);
    expect((await run('node', 'disk full', { ignoreCase: true })).s).toEqual({ engine: 'node', matches: 5, reason: 'done' });
    expect(ended).toBe(false);
    ac.abort();
    expect(await search).toEqual({ engine: 'node', matches: 0, reason: 'aborted' });
    // The time limit ends it the same way.
    expect(await grepLogs(evil, { pattern: '(a+)+$', regex: true, maxResults: 10, maxMs: 300, engine: 'node' }, () => undefined)).toEqual({ engine: 'node', matches: 0, reason: 'time' });
  });

  it('runs at most NODE_SCANS_AT_ONCE Node scans at once: another waits its turn within its own time limit', async () => {
    const evil = [{ path: jobs.delta.logPath(0, 1), key: jobs.delta.jobId }];
    const ac = new AbortController();
    const busy = Array.from({ length: NODE_SCANS_AT_ONCE }, () => grepLogs(evil, { pattern: '(a+)+$', regex: true, maxResults: 10, maxMs: 600_000, engine: 'node', signal: ac.signal }, () => undefined));
    const waiting = await grepLogs(files(), { pattern: 'disk', maxResults: 10, maxMs: 300, engine: 'node' }, () => undefined);
    expect(waiting).toEqual({ engine: 'node', matches: 0, reason: 'time' });
    ac.abort();
    expect(await Promise.all(busy)).toEqual(busy.map(() => ({ engine: 'node', matches: 0, reason: 'aborted' })));
    expect((await run('node', 'disk full', { ignoreCase: true })).s.reason).toBe('done');
  });

  it('refuses a regular expression that does not compile with 400 naming the problem, with either engine, before anything streams', async () => {
    for (const engine of engines) {
      for (const pattern of ['(a', '[z-a]']) {
        const q = parseGrepQuery(new URL(`http://x/api/logs/grep?regex=1&pattern=${encodeURIComponent(pattern)}`));
        const err = await grepResponse(storeOf(tdb.db.prisma), q, new AbortController().signal, undefined, engine).catch((e: unknown) => e);
        expect(err, `${engine} ${pattern}`).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(400);
        expect((err as ApiError).detail).toMatch(/^pattern: not a regular expression the search can run: .+/);
      }
      // The same text as a literal is fine.
      const ok = await grepResponse(storeOf(tdb.db.prisma), parseGrepQuery(new URL('http://x/api/logs/grep?pattern=(a')), new AbortController().signal, undefined, engine);
      expect(ok.status).toBe(200);
      await ok.text();
    }
  });

  it('stops at the result limit and when aborted', async () => {
    for (const engine of engines) {
      const limited = await run(engine, 'line', { maxResults: 3 });
      expect([limited.s.reason, limited.out.length]).toEqual(['limit', 3]);
      const ac = new AbortController();
      ac.abort();
      const s = await grepLogs(files(), { pattern: 'line', maxResults: 1000, maxMs: 20_000, engine, signal: ac.signal }, () => undefined);
      expect(s).toEqual({ engine, matches: 0, reason: 'aborted' });
    }
  });

  it('GET /api/logs/grep streams NDJSON matches of the filtered jobs, then the summary', async () => {
    const call = async (query: string) => {
      const res = await grepResponse(storeOf(tdb.db.prisma), parseGrepQuery(new URL(`http://x/api/logs/grep?${query}`)), new AbortController().signal);
      expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      return (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    const all = await call('pattern=disk%20full&ignoreCase=1');
    expect(all.filter((m) => m.type === 'match').length).toBe(5);
    expect(all[all.length - 1]).toMatchObject({ type: 'end', matches: 5, jobs: 4, files: 4, reason: 'done' });
    const failed = await call('pattern=disk%20full&status=FAILED');
    expect(failed.filter((m) => m.type === 'match').map((m) => [m.jobId, m.task, m.attempt, m.line, m.text])).toEqual([
      [jobs.beta.jobId, 0, 1, 1, 'disk full at line 1'],
      [jobs.beta.jobId, 0, 1, 10_000, 'last: disk full, no newline'],
    ]);
    const named = await call('pattern=disk&ignoreCase=1&q=alp&limit=1');
    expect(named.map((m) => m.type)).toEqual(['match', 'end']);
    expect(named[1]).toMatchObject({ matches: 1, jobs: 1, reason: 'limit' });
  });

  it("takes the list's whole filter: metadata pairs and the owner (a name, or me), as GET /api/jobs does", async () => {
    const mia = await tdb.db.prisma.user.create({ data: { name: 'mia' } });
    await tdb.db.prisma.job.update({ where: { id: jobs.alpha.jobId }, data: { userId: mia.id, metadata: { team: 'vision', run: 'r1' } } });
    await tdb.db.prisma.job.update({ where: { id: jobs.beta.jobId }, data: { metadata: { team: 'nlp' } } });
    const actor: Actor = { userId: mia.id, name: 'mia', role: 'member', tokenId: null, tokenPrefix: null, ip: null };
    const call = async (query: string, as?: Actor) => {
      const res = await grepResponse(storeOf(tdb.db.prisma), parseGrepQuery(new URL(`http://x/api/logs/grep?pattern=disk%20full&ignoreCase=1&${query}`)), new AbortController().signal, as);
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      return { jobIds: [...new Set(lines.filter((m) => m.type === 'match').map((m) => m.jobId))], end: lines[lines.length - 1] };
    };
    // The same filter on the list selects the same jobs.
    const listed = async (query: string, as?: Actor) => (await list(storeOf(tdb.db.prisma), parseListQuery(new URL(`http://x/api/jobs?${query}`)), as)).jobs.map((j) => j.id);
    for (const [query, as, want] of [
      ['metadata=team:vision', undefined, [jobs.alpha.jobId]],
      ['metadata=team:vision&metadata=run:r1', undefined, [jobs.alpha.jobId]],
      ['metadata=team:nlp&metadata=run:r1', undefined, []],
      ['owner=mia', undefined, [jobs.alpha.jobId]],
      ['owner=me', actor, [jobs.alpha.jobId]],
      ['owner=admin', undefined, []],
      ['metadata=team:nlp&status=FAILED', undefined, [jobs.beta.jobId]],
    ] as const) {
      const r = await call(query, as);
      expect(r.jobIds, query).toEqual([...want]);
      expect(r.end, query).toMatchObject({ type: 'end', jobs: want.length });
      expect(await listed(query, as), query).toEqual([...want]);
    }
    const refused = await call('owner=nobody').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).detail).toBe('owner: no user is named "nobody"');
  });

  it('stops when its time is up, and says so', async () => {
    // The same files 200,000 times over: 600 GB to read, which takes either engine far longer
    // than this test may run. An answer at all, saying "time", is the proof that it stopped on
    // time rather than after reading everything (no clock in the test).
    const many = Array.from({ length: 200_000 }, () => files()).flat();
    for (const engine of engines) {
      const s = await grepLogs(many, { pattern: 'no such text anywhere', maxResults: 1000, maxMs: 150, engine }, () => undefined);
      expect(s.reason, engine).toBe('time');
    }
  });

  it('kills rg when the client goes away', async () => {
    // A named pipe no one writes to: rg waits on it for ever unless it is killed.
    const fifo = path.join(dir, 'never-written.fifo');
    execFileSync('mkfifo', [fifo]);
    const ac = new AbortController();
    const before = new Set(rgPids());
    const search = grepLogs([{ path: fifo, key: 0 }], { pattern: 'x', maxResults: 1000, maxMs: 30_000, engine: 'rg', signal: ac.signal }, () => undefined);
    let started: number[] = [];
    for (let i = 0; i < 200 && started.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      started = rgPids().filter((p) => !before.has(p));
    }
    expect(started.length).toBe(1);
    expect(existsSync(`/proc/${started[0]}`)).toBe(true);
    ac.abort();
    const ended = await Promise.race([search, new Promise((r) => setTimeout(() => r('still waiting on rg'), 10_000))]);
    expect(ended).toEqual({ engine: 'rg', matches: 0, reason: 'aborted' });
    // The child was killed and reaped: its pid is gone.
    expect(existsSync(`/proc/${started[0]}`)).toBe(false);
  });

  it('a client that goes away stops the search without an error', async () => {
    const ac = new AbortController();
    const res = await grepResponse(storeOf(tdb.db.prisma), parseGrepQuery(new URL('http://x/api/logs/grep?pattern=line&limit=1000')), ac.signal);
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await reader.cancel();
    // The search ended: a new one on the same store answers in full.
    const again = await grepResponse(storeOf(tdb.db.prisma), parseGrepQuery(new URL('http://x/api/logs/grep?pattern=disk%20full')), new AbortController().signal);
    expect((await again.text()).trim().split('\n').length).toBe(4);
  });

  it('refuses a missing or long pattern and bad bounds, naming the field', () => {
    const bad = (q: string) => {
      try {
        parseGrepQuery(new URL(`http://x/api/logs/grep?${q}`));
      } catch (err) {
        if (err instanceof ApiError) return `${err.status} ${err.detail}`;
        throw err;
      }
      throw new Error('accepted');
    };
    expect(bad('')).toMatch(/^400 query: pattern: /);
    expect(bad(`pattern=${'x'.repeat(201)}`)).toMatch(/^400 query: pattern: /);
    expect(bad('pattern=x&limit=0')).toContain('limit must be an integer from 1 to 1000');
    expect(bad('pattern=x&jobs=5000')).toContain('jobs must be an integer from 1 to 1000');
    expect(bad('pattern=x&timeoutMs=1')).toContain('timeoutMs must be an integer from 100 to 30000');
    expect(bad('pattern=x&regex=yes')).toContain('regex must be 0 or 1');
    expect(bad('pattern=x&status=DONE')).toContain('status');
  });
});
