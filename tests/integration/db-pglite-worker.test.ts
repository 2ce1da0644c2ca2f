/**
 * PGlite in a worker thread (lib/db/pglite-worker.ts, lib/db/pglite-worker-main.mjs): the event
 * loop keeps turning while PGlite works; Prisma's transactions, error mapping (P2002) and many
 * concurrent callers behave as with PGlite in the server's thread; a dead worker fails every
 * pending call with a clear error instead of hanging; close() lets the process end; Liftoff-only
 * holds for the worker's WebAssembly; JOBDECK_PGLITE_WORKER chooses the engine (default 0: PGlite
 * in the server's thread, as before). Real PGlite, real threads, real child processes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config';
import { openDatabase, type Database } from '../../lib/db/client';
import { PgliteWorkerGoneError, startPgliteWorker } from '../../lib/db/pglite-worker';
import { PrismaClient } from '../../lib/generated/prisma/client';
import { createEmptyPgDatabase } from '../helpers/db';
import { ROOT } from '../helpers/server';

const CHILD = path.join(__dirname, 'db-pglite-worker-child.ts');

/** Timer hops of the chain loopDuring() runs beside a query (each 10 ms). */
const HOPS = 5;

/**
 * Runs `query` and watches this thread's event loop meanwhile: a 1 ms interval (the longest gap
 * between its firings, ms) and a chain of HOPS 10 ms timer hops — `chainDone`: the whole chain
 * ran before the query resolved. With PGlite in a worker thread the loop turns during the
 * query, so the 50 ms chain ends long before a 2 s query does, however busy the machine; with
 * PGlite in this thread the WebAssembly holds the loop for the whole query (a gap as long as
 * the query). Order and lower bounds only: a loaded machine delays timers but cannot make the
 * chain wait for a worker's query, nor shorten a stall.
 */
async function loopDuring(query: () => Promise<unknown>): Promise<{ maxGapMs: number; ms: number; chainDone: boolean }> {
  let last = performance.now();
  let maxGapMs = 0;
  const t0 = last;
  const iv = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  }, 1);
  let hops = 0;
  let timer: NodeJS.Timeout | undefined;
  const hop = () => {
    if (++hops < HOPS) timer = setTimeout(hop, 10);
  };
  timer = setTimeout(hop, 10);
  let chainDone = false;
  try {
    await query();
    chainDone = hops === HOPS;
  } finally {
    clearInterval(iv);
    clearTimeout(timer);
  }
  const end = performance.now();
  return { maxGapMs: Math.max(maxGapMs, end - last), ms: end - t0, chainDone };
}

// PGlite's own work (pg_sleep runs inside the WebAssembly and blocks its thread): 2 s where the
// loop must turn meanwhile (room for the timer chain on a loaded machine), 1 s where it stalls.
const SLOW = 'SELECT pg_sleep(2)::text AS slept';
const STALL = 'SELECT pg_sleep(1)::text AS slept';

function newJob(name: string, submissionId?: string) {
  return { name, specYaml: 'x', spec: { name }, specHash: 'h', ...(submissionId ? { submissionId } : {}) };
}

describe('PGlite in a worker thread', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ pgliteDir: 'memory://', pgliteWorker: true });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('keeps the event loop turning during a 2 s query; PGlite in this thread stalls it for the whole query', async () => {
    const inWorker = await loopDuring(() => db.prisma.$queryRawUnsafe(SLOW));
    const here = await openDatabase({ pgliteDir: 'memory://', pgliteWorker: false });
    try {
      const inThread = await loopDuring(() => here.prisma.$queryRawUnsafe(STALL));
      expect(inThread.ms).toBeGreaterThanOrEqual(990);
      expect(inThread.maxGapMs).toBeGreaterThanOrEqual(950);
    } finally {
      await here.close();
    }
    expect(inWorker.ms).toBeGreaterThanOrEqual(1990);
    // The loop turned while the worker ran the query: the timer chain ended first.
    expect(inWorker.chainDone).toBe(true);
  });

  it('commits an interactive transaction, rolls back one that throws, and applies a batch atomically', async () => {
    const committed = await db.prisma.$transaction(async (tx) => {
      const a = await tx.job.create({ data: newJob('tx-commit-a') });
      const b = await tx.job.create({ data: newJob('tx-commit-b') });
      // Inside the transaction its own writes are visible.
      expect(await tx.job.count({ where: { name: { startsWith: 'tx-commit-' } } })).toBe(2);
      return [a.id, b.id];
    });
    expect(await db.prisma.job.count({ where: { id: { in: committed } } })).toBe(2);

    const boom = new Error('thrown inside $transaction');
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.job.create({ data: newJob('tx-rollback') });
        await tx.job.update({ where: { id: committed[0] }, data: { name: 'tx-renamed' } });
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await db.prisma.job.count({ where: { name: 'tx-rollback' } })).toBe(0);
    expect((await db.prisma.job.findUniqueOrThrow({ where: { id: committed[0] } })).name).toBe('tx-commit-a');

    // A failing statement inside the transaction rolls back the writes before it.
    await db.prisma.job.create({ data: newJob('tx-taken', 'tx-taken-key') });
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.job.create({ data: newJob('tx-before-failure') });
        await tx.job.create({ data: newJob('tx-duplicate', 'tx-taken-key') });
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
    expect(await db.prisma.job.count({ where: { name: 'tx-before-failure' } })).toBe(0);

    // The database is usable after all of that (no transaction left open in the worker).
    await db.prisma.$transaction([db.prisma.job.create({ data: newJob('batch-1') }), db.prisma.job.create({ data: newJob('batch-2') })]);
    expect(await db.prisma.job.count({ where: { name: { startsWith: 'batch-' } } })).toBe(2);
  });

  it('maps a unique violation to Prisma P2002 naming the field', async () => {
    await db.prisma.job.create({ data: newJob('unique-1', 'same-key') });
    const err = await db.prisma.job.create({ data: newJob('unique-2', 'same-key') }).then(
      () => null,
      (e: unknown) => e as { code?: string; meta?: { target?: unknown; driverAdapterError?: { name?: string; cause?: { kind?: string; originalCode?: string } } } },
    );
    expect(err).not.toBeNull();
    expect(err!.code).toBe('P2002');
    expect(err!.meta?.driverAdapterError?.name).toBe('DriverAdapterError');
    expect(err!.meta?.driverAdapterError?.cause).toMatchObject({ kind: 'UniqueConstraintViolation', originalCode: '23505' });
    expect(JSON.stringify(err!.meta)).toContain('submissionId');
  });

  it('a PostgreSQL error in raw SQL keeps its message and code', async () => {
    const err = await db.prisma.$queryRawUnsafe('SELECT * FROM no_such_table').then(
      () => null,
      (e: { code?: string; message: string; meta?: { driverAdapterError?: { cause?: { kind?: string } } } }) => e,
    );
    expect(err?.message).toMatch(/no_such_table/);
    expect(err?.meta?.driverAdapterError?.cause?.kind).toBe('TableDoesNotExist');
  });

  it('gives each of 300 concurrent callers its own answer', async () => {
    const jobs = await Promise.all(Array.from({ length: 50 }, (_, i) => db.prisma.job.create({ data: newJob(`conc-${i}`) })));
    const answers = await Promise.all([
      ...Array.from({ length: 200 }, (_, i) => db.prisma.$queryRawUnsafe<{ n: number; s: string }[]>('SELECT $1::int AS n, $2::text AS s', i, `s${i}`).then((r) => ({ i, r: r[0] }))),
      ...jobs.map((j, i) => db.prisma.job.findUniqueOrThrow({ where: { id: j.id } }).then((r) => ({ i: 1000 + i, r: { n: r.id, s: r.name } }))),
      ...jobs.map((j, i) => db.prisma.job.update({ where: { id: j.id }, data: { restartCount: i } }).then((r) => ({ i: 2000 + i, r: { n: r.restartCount, s: r.name } }))),
    ]);
    for (const { i, r } of answers) {
      if (i < 1000) expect(r).toEqual({ n: i, s: `s${i}` });
      else if (i < 2000) expect(r).toEqual({ n: jobs[i - 1000].id, s: `conc-${i - 1000}` });
      else expect(r).toEqual({ n: i - 2000, s: `conc-${i - 2000}` });
    }
  });
});

describe('a dead PGlite worker', () => {
  it('terminated mid-query: every pending call (raw and Prisma) rejects with a clear error, and so does every later call', async () => {
    const thread = await startPgliteWorker();
    const conn = await thread.open({ dataDir: undefined, startParams: thread.defaultStartParams });
    const prisma = new PrismaClient({ adapter: conn.adapter });
    try {
      expect(await conn.raw.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      // The migration runner's errors: PGlite's DatabaseError with its name, message and fields.
      await expect(conn.raw.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ name: 'error', code: '42P01', message: 'relation "no_such_table" does not exist' });
      await expect(conn.raw.exec('SELEC 1')).rejects.toMatchObject({ code: '42601', message: expect.stringMatching(/syntax error/) });
      // A query that would run far longer than this test may: every call settling at all means
      // the thread's exit settled them, not the query's end.
      const slow = conn.raw.query('SELECT pg_sleep(600)');
      const queued = Array.from({ length: 5 }, (_, i) => conn.raw.query('SELECT $1::int AS n', [i]));
      const viaPrisma = prisma.$queryRawUnsafe('SELECT 2 AS two');
      const settled = Promise.allSettled([slow, ...queued, viaPrisma]);
      await new Promise((r) => setTimeout(r, 100));
      await thread.thread.terminate();
      const results = await settled;
      for (const r of results.slice(0, -1)) {
        expect(r.status).toBe('rejected');
        const reason = (r as PromiseRejectedResult).reason as Error;
        expect(reason).toBeInstanceOf(PgliteWorkerGoneError);
        expect(reason.message).toMatch(/PGlite worker thread exited \(code 1\).*\(pending: query\)/);
      }
      const last = results.at(-1)!;
      expect(last.status).toBe('rejected');
      expect(String((last as PromiseRejectedResult).reason.message)).toMatch(/PGlite worker thread exited/);
      await expect(conn.raw.query('SELECT 1')).rejects.toThrow(/PGlite worker thread exited/);
      await expect(prisma.job.count()).rejects.toThrow(/PGlite worker thread exited/);
      await thread.close();
    } finally {
      await prisma.$disconnect().catch(() => undefined);
    }
  });

  it('a worker that crashes while starting fails the start with its reason', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jd-pgw-'));
    try {
      const program = path.join(dir, 'crashing-worker.mjs');
      writeFileSync(program, "throw new Error('worker failed to load PGlite (test)');\n");
      const err = await startPgliteWorker(program).then(
        () => null,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(PgliteWorkerGoneError);
      expect(err!.message).toMatch(/exited \(code 1\): worker failed to load PGlite \(test\).*\(pending: defaults\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** ms from the "closed" line to the process's exit, or null without that line. */
  exitAfterCloseMs: number | null;
}

/**
 * Functions compiled per WebAssembly module, from `--trace-wasm-compilation-times` (one line per
 * function: "Compiled function 0x…#12 using Liftoff, …"; the address names the module).
 */
function compiledByModule(out: string): Map<string, { liftoff: number; turbofan: number }> {
  const modules = new Map<string, { liftoff: number; turbofan: number }>();
  for (const m of out.matchAll(/Compiled function (0x[0-9a-f]+)#\d+ using (Liftoff|TurboFan)/gi)) {
    const c = modules.get(m[1]) ?? { liftoff: 0, turbofan: 0 };
    if (m[2].toLowerCase() === 'liftoff') c.liftoff++;
    else c.turbofan++;
    modules.set(m[1], c);
  }
  return modules;
}

/**
 * TurboFan compiles in the modules of more than 100 functions (Prisma's query compiler, PGlite;
 * not node's own small cjs-module-lexer, compiled before the server sets any flag).
 */
function turbofanInLargeModules(out: string): number {
  return [...compiledByModule(out).values()].filter((c) => c.liftoff + c.turbofan > 100).reduce((n, c) => n + c.turbofan, 0);
}

/** Resources that cannot keep a process alive: its stdio pipes, and file requests in flight. */
const IN_FLIGHT = new Set(['PipeWrap', 'CloseReq', 'FSReqCallback', 'FSReqPromise']);

function runChild(env: Record<string, string>, nodeArgs: string[] = []): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', CHILD], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, JOBDECK_LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    let closedAt: number | null = null;
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (closedAt === null && /^closed /m.test(stdout)) closedAt = Date.now();
    });
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`child did not end within 240 s:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`));
    }, 240_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, exitAfterCloseMs: closedAt === null ? null : Date.now() - closedAt });
    });
  });
}

describe('PGlite worker: process life and compile tier', () => {
  it('after close() the process ends by itself, with no handle left (worker and in-thread)', async () => {
    const [worker, inThread] = await Promise.all([runChild({ JOBDECK_PGLITE_WORKER: '1' }), runChild({ JOBDECK_PGLITE_WORKER: '0' })]);
    for (const run of [worker, inThread]) {
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toContain('queried 100');
      // Only the stdout and stderr pipes to this test are left; no Worker, MessagePort or timer.
      // A file request still in flight ends by itself and holds nothing open: a file handle's
      // close ('CloseReq') was seen once, under load in CI.
      const left = JSON.parse(/^closed (.*)$/m.exec(run.stdout)![1]) as string[];
      expect(left.filter((r) => !IN_FLIGHT.has(r))).toEqual([]);
      expect(run.exitAfterCloseMs).not.toBeNull();
      // Ends by itself: a handle left behind would keep it alive until runChild's kill (240 s).
      // (No tighter bound: a loaded machine takes seconds to tear a process down.)
      expect(run.exitAfterCloseMs!).toBeLessThan(60_000);
    }
  });

  it("compiles the worker's PGlite WebAssembly and Prisma's query compiler with Liftoff only, unless JOBDECK_WASM_OPTIMIZE=1", async () => {
    // V8 prints one line per compiled WebAssembly function, naming the tier.
    const turbofan = (out: string) => (out.match(/using TurboFan/gi) ?? []).length;
    const liftoff = (out: string) => (out.match(/using Liftoff/gi) ?? []).length;
    const args = ['--trace-wasm-compilation-times'];
    const [baseline, optimizing] = await Promise.all([
      runChild({ JOBDECK_PGLITE_WORKER: '1', JOBDECK_WASM_OPTIMIZE: '0' }, args),
      runChild({ JOBDECK_PGLITE_WORKER: '1', JOBDECK_WASM_OPTIMIZE: '1' }, args),
    ]);
    expect(baseline.code, baseline.stderr.slice(-2000)).toBe(0);
    expect(optimizing.code, optimizing.stderr.slice(-2000)).toBe(0);
    // PGlite's module has thousands of functions; both runs compile them with Liftoff first.
    expect(liftoff(baseline.stdout)).toBeGreaterThan(1000);
    // With the optimizing tier allowed, the workload's hot PGlite functions are re-compiled by
    // TurboFan (hundreds); Liftoff-only holds for Prisma's query-compiler module too (its hot
    // functions were the TurboFan compiles left before: ~75 MB of an idle server, lib/db/client.ts).
    expect(turbofan(optimizing.stdout)).toBeGreaterThan(200);
    expect(turbofanInLargeModules(baseline.stdout)).toBe(0);
  });
});

describe("Prisma's query compiler on PostgreSQL", () => {
  it('is compiled with Liftoff only, unless JOBDECK_WASM_OPTIMIZE=1', async () => {
    const liftoff = (out: string) => (out.match(/using Liftoff/gi) ?? []).length;
    const dbs = await Promise.all([createEmptyPgDatabase('wasm-tier-0'), createEmptyPgDatabase('wasm-tier-1')]);
    try {
      const args = ['--trace-wasm-compilation-times'];
      const [baseline, optimizing] = await Promise.all([
        runChild({ CHILD_DATABASE_URL: dbs[0].url, JOBDECK_WASM_OPTIMIZE: '0' }, args),
        runChild({ CHILD_DATABASE_URL: dbs[1].url, JOBDECK_WASM_OPTIMIZE: '1' }, args),
      ]);
      expect(baseline.code, baseline.stderr.slice(-2000)).toBe(0);
      expect(optimizing.code, optimizing.stderr.slice(-2000)).toBe(0);
      expect(baseline.stdout).toContain('queried 100');
      expect(liftoff(baseline.stdout)).toBeGreaterThan(100);
      expect(turbofanInLargeModules(baseline.stdout)).toBe(0);
      // The optimizing tier, when allowed, takes the compiler's hot functions (V8's default).
      expect(turbofanInLargeModules(optimizing.stdout)).toBeGreaterThan(0);
    } finally {
      await Promise.all(dbs.map((d) => d.drop()));
    }
  });
});

describe('JOBDECK_PGLITE_WORKER', () => {
  it('defaults to PGlite in the server thread; 0 and 1 are read; anything else is refused naming the variable', async () => {
    const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;
    expect(loadConfig(env({})).pgliteWorker).toBe(false);
    expect(loadConfig(env({ JOBDECK_PGLITE_WORKER: '0' })).pgliteWorker).toBe(false);
    expect(loadConfig(env({ JOBDECK_PGLITE_WORKER: ' 1 ' })).pgliteWorker).toBe(true);
    for (const bad of ['yes', 'true', '2', 'off']) {
      expect(() => loadConfig(env({ JOBDECK_PGLITE_WORKER: bad }))).toThrow(`JOBDECK_PGLITE_WORKER: expected 0 or 1, got "${bad}"`);
    }
    const before = process.env.JOBDECK_PGLITE_WORKER;
    process.env.JOBDECK_PGLITE_WORKER = 'on';
    try {
      await expect(openDatabase({ pgliteDir: 'memory://' })).rejects.toThrow(/JOBDECK_PGLITE_WORKER/);
    } finally {
      if (before === undefined) delete process.env.JOBDECK_PGLITE_WORKER;
      else process.env.JOBDECK_PGLITE_WORKER = before;
    }
  });

  it.each([
    ['0', 'in this thread: the loop stalls for the query', STALL, (loop: { maxGapMs: number; chainDone: boolean }) => expect(loop.maxGapMs).toBeGreaterThanOrEqual(950)],
    ['1', 'in the worker: the loop keeps turning', SLOW, (loop: { maxGapMs: number; chainDone: boolean }) => expect(loop.chainDone).toBe(true)],
  ])('JOBDECK_PGLITE_WORKER=%s runs PGlite %s, with the same results', async (value, _where, sql, checkLoop) => {
    const before = process.env.JOBDECK_PGLITE_WORKER;
    process.env.JOBDECK_PGLITE_WORKER = value;
    let opened: Database | null = null;
    try {
      opened = await openDatabase({ pgliteDir: 'memory://' });
      const db2 = opened;
      const job = await db2.prisma.job.create({ data: newJob('env-engine', 'env-engine-key') });
      await expect(db2.prisma.job.create({ data: newJob('env-engine-2', 'env-engine-key') })).rejects.toMatchObject({ code: 'P2002' });
      expect((await db2.prisma.job.findUniqueOrThrow({ where: { id: job.id } })).name).toBe('env-engine');
      checkLoop(await loopDuring(() => db2.prisma.$queryRawUnsafe(sql)));
    } finally {
      await opened?.close();
      if (before === undefined) delete process.env.JOBDECK_PGLITE_WORKER;
      else process.env.JOBDECK_PGLITE_WORKER = before;
    }
  });
});
