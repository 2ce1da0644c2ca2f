/**
 * One process owns a PGlite data folder at a time (lib/db/lock.ts): a second openDatabase() on the
 * same folder — another process, or the same one — is refused with a clear message; a lock left
 * by a crash (kill -9) is taken over; a second `jobdeck` server on the same JOBDECK_HOME exits
 * non-zero with the message. Real processes, real PGlite folders.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../lib/db/client';
import { DataFolderInUseError, LOCK_FILE } from '../../lib/db/lock';
import { readProcStat } from '../../lib/executors/local/proc';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/server';

const HOLDER = path.join(__dirname, 'db-lock-holder.ts');

interface Holder {
  proc: ChildProcess;
  /** "open <pid>" or "refused: <message>". */
  line: Promise<string>;
  exited: Promise<number | null>;
}

function startHolder(dir: string): Holder {
  const proc = spawn(process.execPath, ['--import', 'tsx', HOLDER, dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, JOBDECK_LOG_LEVEL: 'warn' } });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const line = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`holder gave no answer:\n${out}\n${err}`)), 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^(open \d+|refused: .*)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`holder exited ${code} without an answer:\n${out}\n${err}`));
    });
  });
  line.catch(() => undefined);
  return { proc, line, exited };
}

describe('PGlite data folder lock', () => {
  const dirs: string[] = [];
  const procs: ChildProcess[] = [];
  const tempDir = () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'jd-lock-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a second process is refused while the first holds the folder; after kill -9 of the first, a new open succeeds with the data', async () => {
    const dir = tempDir();
    const first = startHolder(dir);
    procs.push(first.proc);
    expect(await first.line).toBe(`open ${first.proc.pid}`);
    const lock = JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8'));
    expect(lock).toMatchObject({ pid: first.proc.pid, host: os.hostname(), startTime: readProcStat(first.proc.pid!)!.startTime });

    const second = startHolder(dir);
    procs.push(second.proc);
    const answer = await second.line;
    expect(answer).toContain(`refused: the data folder ${dir} is in use by jobdeck pid ${first.proc.pid} (started ${lock.startedAt}); stop it first, or use another JOBDECK_HOME`);
    expect(await second.exited).toBe(3);
    // This process is refused the same way, with a typed error.
    const err = await openDatabase({ pgliteDir: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataFolderInUseError);
    expect((err as DataFolderInUseError).owner.pid).toBe(first.proc.pid);

    first.proc.kill('SIGKILL'); // a crash: the lock file stays behind
    await first.exited;
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(true);
    const db = await openDatabase({ pgliteDir: dir });
    try {
      expect(await db.prisma.job.count({ where: { name: `held-by-${first.proc.pid}` } })).toBe(1);
      expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    } finally {
      await db.close();
    }
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false); // released on close
  });

  it('a second open in the same process is refused; close releases the folder for the next open', async () => {
    const dir = tempDir();
    const one = await openDatabase({ pgliteDir: dir });
    await expect(openDatabase({ pgliteDir: dir })).rejects.toThrow(`in use by jobdeck pid ${process.pid}`);
    await one.close();
    const two = await openDatabase({ pgliteDir: dir });
    await two.close();
  });

  it('a lock whose pid now names another process (another start time) is stale and taken over', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, startTime: '1', host: os.hostname(), startedAt: '2020-01-01T00:00:00.000Z', nonce: 'x' }));
    const db = await openDatabase({ pgliteDir: dir });
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).startTime).toBe(readProcStat(process.pid)!.startTime);
    await db.close();
  });

  it('two processes taking over the same stale lock at once: exactly one opens, the other is refused', async () => {
    const dir = tempDir();
    // Create the database once, then leave a stale lock (a pid that no longer runs).
    const init = await openDatabase({ pgliteDir: dir });
    await init.close();
    const gone = spawn('true');
    await new Promise((r) => gone.once('exit', r));
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: gone.pid, startTime: '1', host: os.hostname(), startedAt: '2020-01-01T00:00:00.000Z', nonce: 'y' }));
    const a = startHolder(dir);
    const b = startHolder(dir);
    procs.push(a.proc, b.proc);
    const answers = (await Promise.all([a.line, b.line])).sort();
    expect(answers[0]).toMatch(/^open \d+$/);
    expect(answers[1]).toMatch(/^refused: the data folder .* is in use by jobdeck pid \d+/);
    expect(answers[1]).toContain(`pid ${answers[0].split(' ')[1]}`);
  });
});

describe('a second server on the same JOBDECK_HOME', () => {
  let first: ServerProcess | undefined;
  afterEach(async () => {
    await first?.dispose();
    first = undefined;
  });

  it('exits non-zero with the message; the first keeps serving', async () => {
    first = await startServerProcess();
    const err = await startServerProcess({ home: first.home }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).toMatch(/server exited with 1 before listening/);
    expect(msg).toContain(`the data folder ${path.join(first.home, 'db')} is in use by jobdeck pid ${first.proc.pid}`);
    expect(msg).toContain('stop it first, or use another JOBDECK_HOME');
    const r = await first.api('/api/jobs');
    expect(r.status).toBe(200);
  });
});
