/**
 * Both client libraries against one real server (PGlite; a client does not care which
 * database): the TypeScript client (clients/ts) in this process, the Python client
 * (clients/python) installed with `pip install` (no package index) and run with the standard
 * library's unittest, one TestCase per `it`. Each proves: submit → wait → logs byte-exact (bytes
 * no UTF-8 decoder keeps, a line without its newline); `tail` across a restart of the server with
 * no gap and no duplicate (both clients tail through one restart: a server start is most of
 * that test's time); every error class (not found, spec error with file:line, bad request,
 * refused, forbidden, token refused, quota, unreachable, wait timeout); a workdir upload; cancel;
 * the paged list over 500 jobs.
 *
 * The 500 jobs wait in a queue that runs one job at a time, behind a job that waits for a gate
 * file, so none of them runs. The Python restart test asks for its restart through a control
 * folder (it writes `restart-py`; this file restarts the server on the same data folder and port,
 * once the TypeScript tail is under way too, and answers `restarted-py`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ForbiddenError,
  JobdeckClient,
  JobdeckTimeoutError,
  NotFoundError,
  QuotaExceededError,
  RefusedError,
  SpecError,
  UnauthorizedError,
  UnreachableError,
  type TailItem,
} from '../../clients/ts/src';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/server';

/**
 * The server admits 8 CPUs whatever the machine has: the jobs here only print or wait on gates,
 * and the restart test runs one job per client beside the held one (a 2-CPU machine admits only
 * two jobs at once, and the third would wait for ever).
 */
const SERVER_ENV = { JOBDECK_CPUS: '8' };
const PAGE_NAME = 'page-';
const PAGE_COUNT = 500;
/** Bytes no UTF-8 decoder would keep (0xff, 0xfe), a CR, a line without its newline. */
const ODD_CMD = "printf 'a\\377\\376b\\r\\nno newline'";
const ODD = Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0d, 0x0a, ...Buffer.from('no newline')]);

let server: ServerProcess;
let tmp: string;
let control: string;
let client: JobdeckClient;
const tokens = { viewer: '', quota: '' };

/** A command that prints `lines`, then waits until `gate` exists. */
const gated = (gate: string, lines = '') => `${lines}while [ ! -e ${gate} ]; do sleep 0.05; done; echo gate passed`;

async function api<T>(method: string, pathname: string, body?: unknown): Promise<T> {
  const res = await server.api(pathname, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Restarts the server on its data folder, port and token (running jobs keep running). */
async function restart(): Promise<void> {
  const port = Number(new URL(server.url).port);
  await server.stop();
  server = await startServerProcess({ home: server.home, token: server.token, port, env: SERVER_ENV, timeoutMs: 240_000 });
}

/** Resolves once `file` exists; rejects with what `child` printed if it ends first. */
async function fileOrEnd(file: string, child: Promise<{ code: number | null; out: string }>): Promise<void> {
  const ended: { r?: { code: number | null; out: string } } = {};
  void child.then((r) => (ended.r = r));
  while (!existsSync(file)) {
    if (ended.r) throw new Error(`ended (code ${ended.r.code}) before it wrote ${path.basename(file)}:\n${ended.r.out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-clients-'));
  control = path.join(tmp, 'control');
  mkdirSync(control);
  server = await startServerProcess({ env: SERVER_ENV, timeoutMs: 240_000 });
  client = new JobdeckClient({ url: server.url, token: server.token, env: {} });
  const viewer = await api<{ id: number }>('POST', '/api/users', { name: 'vera', role: 'viewer' });
  tokens.viewer = (await api<{ token: string }>('POST', '/api/tokens', { name: 'clients', userId: viewer.id })).token;
  const member = await api<{ id: number }>('POST', '/api/users', { name: 'quinn', role: 'member', maxPendingJobs: 0 });
  tokens.quota = (await api<{ token: string }>('POST', '/api/tokens', { name: 'clients', userId: member.id })).token;
  // 500 jobs that never run: a queue of one running job, held by a job waiting for a gate.
  await api('PUT', '/api/queues/hold', { maxRunning: 1 });
  const page = (i: number, cmd: string) => api('POST', '/api/jobs', { cmd, name: `${PAGE_NAME}${String(i).padStart(3, '0')}`, queue: 'hold' });
  await page(0, gated(path.join(tmp, 'never')));
  for (let i = 1; i < PAGE_COUNT; i += 25) await Promise.all(Array.from({ length: Math.min(25, PAGE_COUNT - i) }, (_, k) => page(i + k, 'true')));
}, 300_000);

afterAll(async () => {
  if (server) {
    await api('POST', '/api/jobs/cancel', { all: true }).catch(() => undefined);
    await server.dispose();
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const bytesOf = (items: TailItem[]) => Buffer.concat(items.flatMap((i) => (i.kind === 'log' ? [i.data] : [])));

describe('the TypeScript client', () => {
  it('submit → wait → logs, byte-exact, task by task; tail gives the same bytes and the events in order', async () => {
    const yaml = `name: ts-exact\n---\nname: first\nrun: ${ODD_CMD}\n---\nname: second\nrun: printf 'second task\\n'\n`;
    const { id, created } = await client.submit({ yaml }, { metadata: { suite: 'ts' } });
    expect(created).toBe(true);
    expect(await client.wait(id, { timeoutMs: 120_000 })).toBe('SUCCEEDED');
    expect(Buffer.from(await client.logs(id))).toEqual(Buffer.concat([ODD, Buffer.from('second task\n')]));
    expect(Buffer.from(await client.logs(id, { task: 1 })).toString()).toBe('second task\n');
    const tail = client.tail(id, { events: true });
    const items: TailItem[] = [];
    for await (const item of tail) items.push(item);
    expect(bytesOf(items)).toEqual(Buffer.concat([ODD, Buffer.from('second task\n')]));
    const events = items.flatMap((i) => (i.kind === 'event' ? [i.message.type] : []));
    expect(events[0]).toBe('hello');
    expect(events.at(-1)).toBe('end');
    expect(events.filter((e) => e === 'attempt')).toHaveLength(4);
    expect(tail.status).toBe('SUCCEEDED');
    const info = await client.info(id);
    expect(info.metadata).toEqual({ suite: 'ts' });
    expect(info.tasks.map((t) => t.name)).toEqual(['first', 'second']);
  }, 180_000);

  it('a workdir folder is packed (without what .gitignore names) and uploaded; each attempt runs in a copy', async () => {
    const dir = path.join(tmp, 'ts-workdir');
    mkdirSync(path.join(dir, 'data'), { recursive: true });
    writeFileSync(path.join(dir, 'data', 'in.txt'), 'from the folder\n');
    writeFileSync(path.join(dir, 'notes.log'), 'ignored\n');
    writeFileSync(path.join(dir, '.gitignore'), '*.log\n');
    symlinkSync('data/in.txt', path.join(dir, 'link'));
    writeFileSync(path.join(dir, 'task.yaml'), "name: ts-workdir\nworkdir: .\nrun: cat link; ls -a | sort | tr '\\n' ' '\n");
    const uploads: string[] = [];
    const { id } = await client.submit({ file: dir }, { onUpload: (u) => uploads.push(`${u.label}: ${u.manifest.entries}`) });
    expect(uploads).toEqual(['workdir .: 5']);
    expect(await client.wait(id, { timeoutMs: 120_000 })).toBe('SUCCEEDED');
    expect(Buffer.from(await client.logs(id)).toString()).toBe('from the folder\n. .. .gitignore data link task.yaml ');
    const byOption = await client.submit({ cmd: 'cat data/in.txt' }, { workdir: dir });
    expect(await client.wait(byOption.id, { timeoutMs: 120_000 })).toBe('SUCCEEDED');
    expect(Buffer.from(await client.logs(byOption.id)).toString()).toBe('from the folder\n');
  }, 240_000);

  it('every error class', async () => {
    await expect(client.info(999_999)).rejects.toThrow(NotFoundError);
    await expect((async () => {
      for await (const _ of client.tail(999_999)) void _;
    })()).rejects.toThrow(NotFoundError);
    const bad = path.join(tmp, 'bad.yaml');
    writeFileSync(bad, 'name: bad\nrun: echo hi\njob_recovery:\n  max_restarts_on_errors: two\n');
    const spec = await client.submit({ file: bad }).catch((e: unknown) => e);
    expect(spec).toBeInstanceOf(SpecError);
    expect((spec as SpecError).lines[0]).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4 task\\[0\\]\\.job_recovery\\.max_restarts_on_errors: expected an integer`));
    const badRequest = await client.submit({ cmd: 'true' }, { priority: 5000 }).catch((e: unknown) => e);
    expect(badRequest).toBeInstanceOf(BadRequestError);
    expect(badRequest).not.toBeInstanceOf(SpecError);
    expect(() => new JobdeckClient({ url: 'ftp://x', env: {} })).toThrow(BadRequestError);

    const gate = path.join(tmp, 'ts-refused-gate');
    const { id } = await client.submit({ cmd: gated(gate) });
    await expect(client.delete(id)).rejects.toThrow(RefusedError);
    writeFileSync(gate, '');
    expect(await client.wait(id, { timeoutMs: 120_000 })).toBe('SUCCEEDED');
    await expect(client.cancel(id)).rejects.toThrow(/already SUCCEEDED/);

    const viewer = new JobdeckClient({ url: server.url, token: tokens.viewer, env: {} });
    expect((await viewer.listPage({ limit: 1 })).jobs).toHaveLength(1);
    await expect(viewer.submit({ cmd: 'true' })).rejects.toThrow(ForbiddenError);
    await expect(new JobdeckClient({ url: server.url, token: 'jd_wrong', env: {} }).status(1)).rejects.toThrow(UnauthorizedError);
    const quota = await new JobdeckClient({ url: server.url, token: tokens.quota, env: {} }).submit({ cmd: 'true' }).catch((e: unknown) => e);
    expect(quota).toBeInstanceOf(QuotaExceededError);
    expect((quota as QuotaExceededError).status).toBe(429);
    const dead = new JobdeckClient({ url: `http://127.0.0.1:${await freePort()}`, token: 'jd_x', env: {} });
    const unreachable = await dead.status(1).catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(UnreachableError);
    expect((unreachable as UnreachableError).phase).toBe('refused');

    const slow = await client.submit({ cmd: gated(path.join(tmp, 'ts-wait-gate')) });
    await expect(client.wait(slow.id, { timeoutMs: 300 })).rejects.toThrow(JobdeckTimeoutError);
    writeFileSync(path.join(tmp, 'ts-wait-gate'), '');
    expect(await client.wait(slow.id, { timeoutMs: 120_000 })).toBe('SUCCEEDED');
  }, 300_000);

  it('cancel stops a running job; its tail ends with it', async () => {
    const { id } = await client.submit({ cmd: gated(path.join(tmp, 'never'), 'echo started; ') });
    const tail = client.tail(id);
    const it = tail[Symbol.asyncIterator]();
    const first = (await it.next()).value as TailItem;
    expect(first.kind === 'log' && Buffer.from(first.data).toString()).toBe('started\n');
    const r = await client.cancel(id);
    expect([...r.cancelled, ...r.cancelling]).toEqual([id]);
    while (!(await it.next()).done);
    expect(tail.status).toBe('CANCELLED');
    expect(await client.status(id)).toBe('CANCELLED');
  }, 120_000);

  it('the paged list: all 500 jobs once, newest first, across pages of 37', async () => {
    const ids: number[] = [];
    for await (const j of client.list({ q: PAGE_NAME }, 37)) ids.push(j.id);
    expect(ids).toHaveLength(PAGE_COUNT);
    expect(new Set(ids).size).toBe(PAGE_COUNT);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const { jobs, more } = await client.listAll({ q: PAGE_NAME, sort: 'oldest' }, 250);
    expect(more).toBe(true);
    expect(jobs.map((j) => j.id)).toEqual([...ids].sort((a, b) => a - b).slice(0, 250));
  }, 120_000);
});

describe('the Python client (python3 -m unittest)', () => {
  let site: string;

  beforeAll(async () => {
    site = path.join(tmp, 'site');
    const r = await run('python3', ['-m', 'pip', 'install', '--no-index', '--no-deps', '--disable-pip-version-check', '--target', site, path.join(ROOT, 'clients', 'python')], tmp, {});
    expect(r.code, r.out).toBe(0);
    expect(existsSync(path.join(site, 'jobdeck', 'py.typed'))).toBe(true);
  }, 300_000);

  /** `python3 -m unittest` of the installed package's tests (cwd outside the source tree). */
  const python = (names: string[]) =>
    run('python3', ['-m', 'unittest', '-v', ...names], path.join(ROOT, 'clients', 'python', 'tests'), {
      PYTHONPATH: site,
      PYTHONDONTWRITEBYTECODE: '1',
      JOBDECK_URL: server.url,
      JOBDECK_TOKEN: server.token,
      JOBDECK_TEST_VIEWER_TOKEN: tokens.viewer,
      JOBDECK_TEST_QUOTA_TOKEN: tokens.quota,
      JOBDECK_TEST_PAGE_NAME: PAGE_NAME,
      JOBDECK_TEST_PAGE_COUNT: String(PAGE_COUNT),
      JOBDECK_TEST_CONTROL: control,
    });

  for (const name of ['test_offline', 'test_server.SubmitWaitLogs', 'test_server.Workdir', 'test_server.Errors', 'test_server.Cancel', 'test_server.PagedList']) {
    it(name, async () => {
      const r = await python([name]);
      expect(r.code, r.out).toBe(0);
      expect(r.out, r.out).not.toMatch(/skipped/);
      expect(r.out).toMatch(/\nOK\s*$/);
    }, 400_000);
  }

  it('test_server.TailAcrossRestart, and the TypeScript tail through the same restart: no gap, no duplicate', async () => {
    const gate = path.join(tmp, 'ts-restart-gate');
    const { id } = await client.submit({ cmd: `i=0; while [ ! -e ${gate} ]; do i=$((i+1)); echo line $i; sleep 0.02; done; echo last` });
    const tail = client.tail(id);
    let text = '';
    let under = () => {};
    const tsUnder = new Promise<void>((r) => (under = r));
    const tsTail = (async () => {
      for await (const item of tail) {
        if (item.kind !== 'log') continue;
        text += Buffer.from(item.data).toString();
        if (text.split('\n').length > 20) under();
      }
    })();
    const py = python(['test_server.TailAcrossRestart']);
    // Both failures surface here or at `await tsTail`; neither is left unhandled.
    void tsTail.catch(() => undefined);
    let restarting = false;
    const endedEarly = tsTail.then(() => {
      if (!restarting) throw new Error(`the TypeScript tail ended before the restart: ${text}`);
    });
    void endedEarly.catch(() => undefined);
    await Promise.all([Promise.race([tsUnder, endedEarly]), fileOrEnd(path.join(control, 'restart-py'), py)]);
    restarting = true;
    await restart();
    writeFileSync(gate, '');
    writeFileSync(path.join(control, 'restarted-py'), 'ok');
    await tsTail;
    const lines = text.split('\n').filter(Boolean);
    expect(lines.at(-1)).toBe('last');
    expect(lines.slice(0, -1)).toEqual(Array.from({ length: lines.length - 1 }, (_, i) => `line ${i + 1}`));
    expect(tail.connections).toBeGreaterThan(1);
    expect(tail.status).toBe('SUCCEEDED');
    expect(Buffer.from(await client.logs(id)).toString()).toBe(text);
    const r = await py;
    expect(r.code, r.out).toBe(0);
    expect(r.out, r.out).not.toMatch(/skipped/);
    expect(r.out).toMatch(/\nOK\s*$/);
  }, 400_000);

  it('the examples run: a sweep that waits for all its jobs, a notebook-like tail', async () => {
    const env = { PYTHONPATH: site, PYTHONDONTWRITEBYTECODE: '1', JOBDECK_URL: server.url, JOBDECK_TOKEN: server.token };
    const examples = path.join(ROOT, 'clients', 'python', 'examples');
    const sweep = await run('python3', [path.join(examples, 'sweep.py'), '--count', '4'], tmp, env);
    expect(sweep.code, sweep.out).toBe(0);
    expect(sweep.out.match(/ SUCCEEDED +lr=0\.00\d loss=/g), sweep.out).toHaveLength(4);
    const notebook = await run('python3', [path.join(examples, 'tail_notebook.py')], tmp, env);
    expect(notebook.code, notebook.out).toBe(0);
    expect(notebook.out).toMatch(/--- task 0 attempt 2 start/);
    expect(notebook.out).toMatch(/ended: SUCCEEDED/);
    expect(notebook.out.match(/epoch 2 loss 0\.7/g)).toHaveLength(3);
  }, 300_000);
});

/** A port nobody listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Runs a command; its exit code and output (stdout and stderr together). */
function run(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', (err) => resolve({ code: -1, out: `${out}${err.message}` }));
    child.on('close', (code) => resolve({ code, out }));
  });
}
