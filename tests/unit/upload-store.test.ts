/**
 * Uploaded folders (lib/uploads/upload.ts): stored once per content hash, entry rules checked
 * at upload (absolute and `..` paths; links are kept as links, as rsync -a copies them), each
 * extraction a fresh copy.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { readManifest, storeUpload, uploadedWorkdir, UploadError, uploadMaxBytes, uploadsDir } from '../../lib/uploads/upload';

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-upload-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The entry names of a gzip'd tar file. */
async function tarNames(file: string): Promise<string[]> {
  const names: string[] = [];
  await tar.t({ file, onReadEntry: (e) => void names.push(e.path) });
  return names;
}

/** A gzip'd tar of `dir`'s entries `names` (as tar packs them, links kept as links). */
async function pack(dir: string, names: string[]): Promise<Uint8Array> {
  const file = path.join(root, `pack-${Math.random().toString(36).slice(2)}.tgz`);
  await tar.c({ gzip: true, file, cwd: dir, portable: true }, names);
  return new Uint8Array(readFileSync(file));
}

describe('storeUpload', () => {
  it('stores a folder once per content hash, and each attempt gets a fresh copy', async () => {
    const home = path.join(root, 'home1');
    const src = path.join(root, 'src1');
    mkdirSync(path.join(src, 'sub'), { recursive: true });
    writeFileSync(path.join(src, 'a.txt'), 'hello\n');
    writeFileSync(path.join(src, 'sub', 'b.txt'), 'bee\n');
    symlinkSync('a.txt', path.join(src, 'sub-link'));
    const bytes = await pack(src, ['a.txt', 'sub', 'sub-link']);
    const m1 = await storeUpload(bytes, home, 1 << 20);
    const m2 = await storeUpload(bytes, home, 1 << 20);
    expect(m2).toEqual(m1);
    expect(m1.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(m1.unpackedSize).toBe(10);
    expect(m1.files).toContain('sub-link -> a.txt');
    expect(readdirSync(uploadsDir(home)).sort()).toEqual([`${m1.hash}.json`, `${m1.hash}.tar.gz`]);
    expect(readManifest(m1.hash, home)).toEqual(m1);

    const attempt = path.join(root, 'attempt-1');
    const wd = await uploadedWorkdir(m1.hash, '.', attempt, home);
    expect(wd).toBe(path.join(attempt, 'work'));
    expect(readFileSync(path.join(wd, 'sub', 'b.txt'), 'utf8')).toBe('bee\n');
    writeFileSync(path.join(wd, 'left-over'), 'x');
    // A second launch in the same folder starts from the upload again, not from what ran before.
    // The upload is the folder the relative workdir named at launch: the attempt runs at its root.
    const again = await uploadedWorkdir(m1.hash, 'sub', attempt, home);
    expect(again).toBe(path.join(attempt, 'work'));
    expect(readdirSync(path.join(attempt, 'work')).sort()).toEqual(['a.txt', 'sub', 'sub-link']);
    expect(await uploadedWorkdir(m1.hash, '/tmp', attempt, home)).toBe('/tmp');
  });

  it('keeps a link out of the folder as the link it is (rsync -a), and refuses `..` in a name', async () => {
    const src = path.join(root, 'src2');
    mkdirSync(src, { recursive: true });
    symlinkSync('/etc/passwd', path.join(src, 'out'));
    symlinkSync('../../x', path.join(src, 'up'));
    const home = path.join(root, 'home2');
    const m = await storeUpload(await pack(src, ['out', 'up']), home, 1 << 20);
    expect(m.files).toEqual(expect.arrayContaining(['out -> /etc/passwd', 'up -> ../../x']));
    const wd = await uploadedWorkdir(m.hash, '.', path.join(root, 'attempt-2'), home);
    expect(readlinkSync(path.join(wd, 'out'))).toBe('/etc/passwd');
    expect(readlinkSync(path.join(wd, 'up'))).toBe('../../x');
    const dotted = path.join(root, `dotted-${Math.random().toString(36).slice(2)}.tgz`);
    mkdirSync(path.join(src, 'inner'));
    await tar.c({ gzip: true, file: dotted, cwd: path.join(src, 'inner'), portable: true, preservePaths: true }, ['../out']);
    expect((await tarNames(dotted))[0]).toBe('../out');
    await expect(storeUpload(new Uint8Array(readFileSync(dotted)), home, 1 << 20)).rejects.toThrow(UploadError);
  });

  it('refuses what is not a gzip\'d tar, and an archive over the cap naming both sizes', async () => {
    await expect(storeUpload(new TextEncoder().encode('not a tar'), path.join(root, 'home3'), 1 << 20)).rejects.toThrow(/not a gzip'd tar/);
    await expect(storeUpload(new Uint8Array(2048), path.join(root, 'home3'), 1024)).rejects.toThrow('the archive is 2048 bytes; the limit is 1024 bytes (JOBDECK_UPLOAD_MAX_BYTES)');
  });

  it('reads JOBDECK_UPLOAD_MAX_BYTES', () => {
    expect(uploadMaxBytes({})).toBe(100 * 1024 * 1024);
    expect(uploadMaxBytes({ JOBDECK_UPLOAD_MAX_BYTES: '5000' })).toBe(5000);
    expect(() => uploadMaxBytes({ JOBDECK_UPLOAD_MAX_BYTES: '-1' })).toThrow(/positive integer/);
  });
});
