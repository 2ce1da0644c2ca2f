/**
 * First start on a fresh PGlite data folder (lib/db/pglite-init.ts): the database is created by
 * a short-lived child process, then opened and migrated in this one, which does not grow by
 * initdb's ~600 MB; the folder is locked meanwhile; a failing child gives an error that names
 * the folder and the child's message, leaves no half-made database and releases the lock.
 * Real PGlite folders, real child processes.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/db/client';
import { LOCK_FILE } from '../../lib/db/lock';
import { readMigrations } from '../../lib/db/migrate';
import { INITDB_TMP, initPgliteFolder, PgliteInitError } from '../../lib/db/pglite-init';

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

describe('PGlite first start', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'jd-first-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  // Each initdb takes 5–30 s on a busy machine.
  it('a fresh folder is created by a child process, then opened and migrated here with the configured shared_buffers; the data survives a reopen', async () => {
    const dir = path.join(tempDir(), 'db'); // does not exist yet
    const before = rssMb();
    const db = await openDatabase({ pgliteDir: dir, pgliteSharedBuffers: '8MB' });
    try {
      // initdb in this process adds ~600 MB that stays; opening a ready folder ~150 MB.
      expect(rssMb() - before).toBeLessThan(400);
      expect(db.kind).toBe('pglite');
      expect(db.migrations).toEqual(readMigrations().map((m) => m.name));
      expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
      expect(existsSync(path.join(dir, INITDB_TMP))).toBe(false);
      expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
      const [{ shared_buffers }] = await db.prisma.$queryRawUnsafe<{ shared_buffers: string }[]>('SHOW shared_buffers');
      expect(shared_buffers).toBe('8MB');
      await db.prisma.job.create({ data: { name: 'first-start', specYaml: 'x', spec: {}, specHash: 'h' } });
    } finally {
      await db.close();
    }
    expect(await initPgliteFolder(dir)).toBe(false); // a folder with a database is left alone
    const again = await openDatabase({ pgliteDir: dir, pgliteSharedBuffers: '16MB' });
    try {
      expect(await again.prisma.job.count({ where: { name: 'first-start' } })).toBe(1);
      const [{ shared_buffers }] = await again.prisma.$queryRawUnsafe<{ shared_buffers: string }[]>('SHOW shared_buffers');
      expect(shared_buffers).toBe('16MB');
    } finally {
      await again.close();
    }
  });

  it('a failing child: the error names the folder and carries the child message; no database is left, the lock is released, the next open works', async () => {
    const dir = tempDir();
    const err = await openDatabase({ pgliteDir: dir, pgliteSharedBuffers: 'lots' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PgliteInitError);
    const msg = (err as Error).message;
    expect(msg).toMatch(new RegExp(`^cannot create the embedded database in ${dir}: the initdb process \\(pid \\d+\\) exited with code 1:\\n`));
    expect(msg).toContain('FATAL:  invalid value for parameter "shared_buffers": "lots"'); // PostgreSQL's own message
    expect(readdirSync(dir)).toEqual([]); // no PG_VERSION, no initdb.tmp, no lock
    const db = await openDatabase({ pgliteDir: dir, pgliteSharedBuffers: '8MB' });
    try {
      expect(db.migrations.length).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
  });

  it('leftovers of an interrupted first start (initdb.tmp, cluster files without PG_VERSION) are replaced', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, INITDB_TMP, 'base'), { recursive: true });
    mkdirSync(path.join(dir, 'global'));
    writeFileSync(path.join(dir, 'global', 'half-moved'), 'x');
    expect(await initPgliteFolder(dir)).toBe(true);
    expect(existsSync(path.join(dir, 'global', 'half-moved'))).toBe(false);
    expect(existsSync(path.join(dir, INITDB_TMP))).toBe(false);
    const db = await openDatabase({ pgliteDir: dir });
    await db.close();
  });

  it('a child that cannot load PGlite: the error names the folder and the missing module', async () => {
    const dir = tempDir();
    const err = await initPgliteFolder(dir, { pgliteModule: path.join(dir, 'no-such-pglite.js') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PgliteInitError);
    expect((err as Error).message).toContain(`cannot create the embedded database in ${dir}: the initdb process`);
    expect((err as Error).message).toContain('Cannot find module');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('JOBDECK_PGLITE_SHARED_BUFFERS: default 16MB, a malformed value is refused naming the variable', () => {
    const env = (v?: string): NodeJS.ProcessEnv => ({ ...process.env, JOBDECK_PGLITE_SHARED_BUFFERS: v });
    expect(loadConfig(env()).pgliteSharedBuffers).toBe('16MB');
    expect(loadConfig(env('64MB')).pgliteSharedBuffers).toBe('64MB');
    for (const bad of ['16', '16mb', '64kB', '2GB', 'lots']) {
      expect(() => loadConfig(env(bad))).toThrow(`JOBDECK_PGLITE_SHARED_BUFFERS: expected a size from 128kB to 1GB`);
    }
  });

  it('JOBDECK_WASM_OPTIMIZE (or its older name JOBDECK_PGLITE_OPTIMIZE): default off, 0 or 1, anything else refused naming the variable', () => {
    const env = (vars: Record<string, string | undefined>): NodeJS.ProcessEnv => ({ ...process.env, JOBDECK_WASM_OPTIMIZE: undefined, JOBDECK_PGLITE_OPTIMIZE: undefined, ...vars });
    expect(loadConfig(env({})).wasmOptimize).toBe(false);
    for (const name of ['JOBDECK_WASM_OPTIMIZE', 'JOBDECK_PGLITE_OPTIMIZE']) {
      expect(loadConfig(env({ [name]: '1' })).wasmOptimize).toBe(true);
      expect(loadConfig(env({ [name]: '0' })).wasmOptimize).toBe(false);
      for (const bad of ['yes', 'true', '2']) expect(() => loadConfig(env({ [name]: bad }))).toThrow(`${name}: expected 0 or 1`);
    }
  });
});
