/**
 * Archives that try to escape or explode (lib/uploads/tree.ts, lib/uploads/upload.ts). Links are
 * kept as the links they are — absolute, out of the folder, through chains (`sub/y1 -> x/..` beside
 * `sub/x -> ..`), dangling — and re-created as written; an entry inside a link, backslash names,
 * hard links and devices are refused at upload naming the entry; a decompression bomb is refused
 * at the unpacked-bytes cap while the event loop keeps turning; a file_mounts target, or a
 * folder extracted over what is there, is never placed through a link; a file mount reads no link.
 * And a property test (fast-check): random trees of files, folders, links (at a bait folder
 * outside, among others), hard links and odd names — whatever the checker accepts extracts to
 * exactly its tree, each link as written, nothing outside; a second random archive extracted over
 * it is refused or adds exactly its own entries.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import * as tar from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { UploadTree } from '../../lib/uploads/tree';
import { extractUpload, placeFileMounts, storeUpload, UploadError } from '../../lib/uploads/upload';

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-archive-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One raw tar entry: a file (with `size` bytes of zeros), folder, link, hard link or device. */
interface Raw {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice';
  linkpath?: string;
  size?: number;
}

/** A gzip'd tar of exactly these entries, in order (no file system involved: any name goes). */
function rawTar(entries: Raw[]): Uint8Array {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const size = e.type === 'File' ? (e.size ?? 0) : 0;
    const h = new tar.Header({ path: e.path, type: e.type, linkpath: e.linkpath, size, mode: e.type === 'Directory' ? 0o755 : 0o644, mtime: new Date(0) });
    const block = Buffer.alloc(512);
    h.encode(block);
    blocks.push(block, Buffer.alloc(Math.ceil(size / 512) * 512));
  }
  blocks.push(Buffer.alloc(1024));
  return new Uint8Array(gzipSync(Buffer.concat(blocks)));
}

let homes = 0;
const store = (entries: Raw[], max = 1 << 30) => storeUpload(rawTar(entries), path.join(root, `home-${++homes}`), max);

describe('archives that escape', () => {
  it('keeps every link as the link it is — absolute, out of the folder, through a chain — and places nothing through one', async () => {
    const home = path.join(root, 'links-home');
    const bait = path.join(root, 'links-bait');
    mkdirSync(bait, { recursive: true });
    writeFileSync(path.join(bait, 'keep.txt'), 'bait\n');
    const links: Raw[] = [
      { path: 'sub/', type: 'Directory' },
      { path: 'sub/x', type: 'SymbolicLink', linkpath: '..' },
      { path: 'sub/y1', type: 'SymbolicLink', linkpath: 'x/..' },
      { path: 'abs', type: 'SymbolicLink', linkpath: bait },
      { path: 'up', type: 'SymbolicLink', linkpath: '../../links-bait/keep.txt' },
      { path: 'dangling', type: 'SymbolicLink', linkpath: '/no/such/place' },
      // node-tar's own extraction waits on itself for ever on this one; it never sees a link.
      { path: 'deep/x', type: 'SymbolicLink', linkpath: 'deep' },
      { path: 'data.txt', type: 'File', size: 5 },
    ];
    const m = await storeUpload(rawTar(links), home, 1 << 20);
    expect(m.files).toContain(`abs -> ${bait}`);
    const dest = path.join(root, 'links-dest', 'workdir');
    await extractUpload(m.hash, dest, home);
    for (const l of links.filter((e) => e.type === 'SymbolicLink')) {
      expect(lstatSync(path.join(dest, l.path)).isSymbolicLink(), l.path).toBe(true);
      expect(readlinkSync(path.join(dest, l.path)), l.path).toBe(l.linkpath);
    }
    expect(readdirSync(bait)).toEqual(['keep.txt']);
    // A file_mounts folder placed over that copy never goes through its links: refused, nothing written.
    const mount = await storeUpload(rawTar([{ path: 'abs/PWNED', type: 'File', size: 3 }]), home, 1 << 20);
    await expect(placeFileMounts({ '.': { hash: mount.hash, kind: 'dir' } }, dest, path.dirname(dest), home, null)).rejects.toThrow(/"abs\/PWNED" would be placed through abs, a symbolic link already there/);
    expect(readdirSync(bait)).toEqual(['keep.txt']);
    // A file mount whose upload holds a link: the server reads nothing through it.
    const linkOnly = await storeUpload(rawTar([{ path: 'f', type: 'SymbolicLink', linkpath: path.join(bait, 'keep.txt') }]), home, 1 << 20);
    await expect(placeFileMounts({ 'copied.txt': { hash: linkOnly.hash, kind: 'file' } }, dest, path.dirname(dest), home, null)).rejects.toThrow('the upload holds 0 files, expected one');
    expect(existsSync(path.join(dest, 'copied.txt'))).toBe(false);
  });

  it('refuses an entry inside a link, backslash names, hard links and devices — all at upload', async () => {
    await expect(store([{ path: 'd/x', type: 'SymbolicLink', linkpath: '..' }, { path: 'd/x/ok', type: 'File', size: 3 }])).rejects.toThrow('entry "d/x/ok": it is inside "d/x", a symbolic link');
    await expect(store([{ path: 'l', type: 'SymbolicLink', linkpath: '/etc' }, { path: 'l/passwd', type: 'File', size: 3 }])).rejects.toThrow('entry "l/passwd": it is inside "l", a symbolic link');
    await expect(store([{ path: '..\\..\\name', type: 'File', size: 1 }])).rejects.toThrow('names may not hold a backslash or a NUL');
    await expect(store([{ path: 'a', type: 'File', size: 1 }, { path: 'b', type: 'Link', linkpath: 'a' }])).rejects.toThrow('entry "b": a hard link (to "a") is not accepted');
    await expect(store([{ path: 'tty', type: 'CharacterDevice' }])).rejects.toThrow('only files, folders and symbolic links are allowed, got CharacterDevice');
    // A link where the folder itself is: it would replace the folder.
    await expect(store([{ path: './', type: 'SymbolicLink', linkpath: '/etc' }])).rejects.toThrow('only a folder may name the folder itself');
    await expect(store([{ path: 'a', type: 'SymbolicLink', linkpath: '' }])).rejects.toThrow(UploadError);
  });

  it('extracts an archive stored before these rules existed only after checking it again (a precheck failure)', async () => {
    const home = path.join(root, 'old-home');
    const ok = await storeUpload(rawTar([{ path: 'a.txt', type: 'File', size: 4 }]), home, 1 << 20);
    // The stored bytes replaced by a bad archive, as an older version could have accepted it.
    writeFileSync(path.join(home, 'uploads', `${ok.hash}.tar.gz`), rawTar([{ path: 'd/x', type: 'SymbolicLink', linkpath: '..' }, { path: 'd/x/ok', type: 'File', size: 1 }]));
    const err = await extractUpload(ok.hash, path.join(root, 'old-dest'), home).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect((err as UploadError).precheck).toBe(true);
    expect(existsSync(path.join(root, 'ok'))).toBe(false);
  });

  it('places a file_mounts target never through a link, even one that stays inside', async () => {
    const home = path.join(root, 'mount-home');
    const wd = await storeUpload(rawTar([{ path: 'data/', type: 'Directory' }, { path: 'sub', type: 'SymbolicLink', linkpath: 'data' }]), home, 1 << 20);
    const file = await storeUpload(rawTar([{ path: 'payload.txt', type: 'File', size: 7 }]), home, 1 << 20);
    const attempt = path.join(root, 'mount-attempt');
    const cwd = path.join(attempt, 'work');
    await extractUpload(wd.hash, cwd, home);
    await expect(placeFileMounts({ 'sub/PWNED': { hash: file.hash, kind: 'file' } }, cwd, attempt, home, null)).rejects.toThrow('file_mounts target sub/PWNED: sub is a symbolic link');
    await placeFileMounts({ 'data/ok.txt': { hash: file.hash, kind: 'file' } }, cwd, attempt, home, null);
    expect(lstatSync(path.join(cwd, 'data', 'ok.txt')).size).toBe(7);
    // Beside an absolute workdir, a relative target is held to JOBDECK_FILE_MOUNT_ROOT.
    await expect(placeFileMounts({ 'x.txt': { hash: file.hash, kind: 'file' } }, path.join(root, 'elsewhere'), attempt, home, null)).rejects.toThrow(/is not the attempt's own folder\) is not under JOBDECK_FILE_MOUNT_ROOT/);
  });
});

describe('archives that explode', () => {
  it('refuses a bomb at the unpacked-bytes cap without stopping the event loop for long', async () => {
    const before = process.env.JOBDECK_UPLOAD_MAX_UNPACKED_BYTES;
    process.env.JOBDECK_UPLOAD_MAX_UNPACKED_BYTES = String(64 * 1024 * 1024);
    // 512 MB of zeros in one file: ~0.5 MB compressed.
    const bomb = rawTar([{ path: 'zeros', type: 'File', size: 512 * 1024 * 1024 }]);
    expect(bomb.byteLength).toBeLessThan(1 << 20);
    let longest = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 5);
    try {
      await expect(storeUpload(bomb, path.join(root, 'bomb-home'), 1 << 30)).rejects.toThrow(`the archive unpacks to more than ${64 * 1024 * 1024} bytes (JOBDECK_UPLOAD_MAX_UNPACKED_BYTES)`);
    } finally {
      clearInterval(tick);
      if (before === undefined) delete process.env.JOBDECK_UPLOAD_MAX_UNPACKED_BYTES;
      else process.env.JOBDECK_UPLOAD_MAX_UNPACKED_BYTES = before;
    }
    // Inflating runs in zlib's thread pool, piece by piece: this bound only catches an inflate
    // done in one turn of the event loop, which takes seconds (no speed is asserted).
    expect(longest).toBeLessThan(2000);
  });
});

/** Every path under `dir` (not following links), with its kind. */
function walk(dir: string, out = new Map<string, 'file' | 'dir' | 'link'>(), base = dir): Map<string, 'file' | 'dir' | 'link'> {
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    const st = lstatSync(p);
    out.set(path.relative(base, p), st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file');
    if (st.isDirectory()) walk(p, out, base);
  }
  return out;
}

/** What an accepted archive must build: each entry at its own name, the folders above them. */
function expected(entries: Raw[]): Map<string, 'file' | 'dir' | 'link'> {
  const want = new Map<string, 'file' | 'dir' | 'link'>();
  for (const e of entries) {
    const parts = e.path.split('/').filter((p) => p !== '' && p !== '.');
    for (let i = 1; i < parts.length; i++) want.set(parts.slice(0, i).join('/'), 'dir');
    if (parts.length) want.set(parts.join('/'), e.type === 'SymbolicLink' ? 'link' : e.type === 'Directory' ? 'dir' : 'file');
  }
  return want;
}

describe('a property: links stay links, nothing is written through one or outside', () => {
  // A folder beside every sandbox that links may point at (absolute or relative): never written.
  const bait = path.join(root, 'bait');
  mkdirSync(path.join(bait, 'inner'), { recursive: true });
  writeFileSync(path.join(bait, 'inner', 'keep.txt'), 'bait\n');
  const name = fc.constantFrom('a', 'b', 'c', 'sub', 'a/b', 'sub/x', 'sub/y', 'b/c/d', 'odd name', 'ünï', '.hidden', 'a//b', './c', 'A', 'Sub/x', '.');
  const target = fc.constantFrom('.', '..', '../..', '../../bait', '../../../bait/inner', bait, path.join(bait, 'inner'), '/nowhere', 'a', 'a/..', 'a/../..', 'sub', 'sub/x', 'x/..', 'b/../..', 'sub/x/..', 'c/d/../../..', 'missing/../..', 'SUB', 'b/c', './a');
  const entry: fc.Arbitrary<Raw> = fc.oneof(
    fc.record({ path: name, type: fc.constant('File' as const), size: fc.integer({ min: 0, max: 600 }) }),
    fc.record({ path: name, type: fc.constant('Directory' as const) }),
    fc.record({ path: name, type: fc.constant('SymbolicLink' as const), linkpath: target }),
    fc.record({ path: name, type: fc.constant('Link' as const), linkpath: name }),
  );
  const accepted = (entries: Raw[]) => {
    const tree = new UploadTree();
    return entries.every((e) => tree.add(e.path, e.type, e.linkpath) === null);
  };

  it('extracts what it accepts exactly — each link as written, files and folders where named — and a second archive over it never goes through a link', async () => {
    let extracted = 0;
    let overRefused = 0;
    let n = 0;
    const home = path.join(root, 'fc-home');
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.array(entry, { minLength: 1, maxLength: 4 }), async (first, second) => {
        if (!accepted(first)) return;
        const sandbox = path.join(root, `fc-${++n}`);
        const dest = path.join(sandbox, 'root');
        const one = await storeUpload(rawTar(first), home, 1 << 20);
        await extractUpload(one.hash, dest, home);
        extracted++;
        // Exactly the archive's tree: a file written through a link would show up elsewhere.
        expect(new Map([...walk(dest)].sort()), JSON.stringify(first)).toEqual(new Map([...expected(first)].sort()));
        for (const e of first.filter((x) => x.type === 'SymbolicLink')) expect(readlinkSync(path.join(dest, e.path))).toBe(e.linkpath);
        // Over what is there (a file_mounts folder): refused, or the union — never through a link.
        if (accepted(second)) {
          const two = await storeUpload(rawTar(second), home, 1 << 20);
          const r = await extractUpload(two.hash, dest, home, false).then(() => null, (e: unknown) => e);
          if (r) {
            expect(r, String(r)).toBeInstanceOf(UploadError);
            overRefused++;
          } else for (const [p, kind] of expected(second)) expect(walk(dest).get(p), `${p} of ${JSON.stringify(second)} over ${JSON.stringify(first)}`).toBe(kind);
        }
        expect(readdirSync(sandbox)).toEqual(['root']);
        expect(walk(bait)).toEqual(new Map([['inner', 'dir'], [path.join('inner', 'keep.txt'), 'file']]));
        rmSync(sandbox, { recursive: true, force: true });
      }),
      // Each run is a store and one or two extractions of a few entries (a few ms).
      { numRuns: 300, seed: 36 },
    );
    // The generator reaches both sides of the rules.
    expect(extracted).toBeGreaterThan(30);
    expect(overRefused).toBeGreaterThan(0);
  });
});
