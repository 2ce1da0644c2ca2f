import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, mkdir, symlink, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar';
import { setting, type Env } from '../config';
import { dataFolder, workspaceOf } from '../jobs/paths';
import { UploadTree } from './tree';

/**
 * Uploaded working folders (SkyPilot's workdir sync; docs/spec.md "workdir"): a gzip'd tar the
 * CLI packs, stored once per content hash in `$JOBDECK_HOME/uploads/<sha256>.tar.gz` with its
 * manifest (`<sha256>.json`), and extracted into a fresh folder for each attempt. The entry
 * rules (lib/uploads/tree.ts: files, folders and links; nothing inside a link) and the caps
 * (entries, unpacked bytes) are
 * checked at upload and again before each extraction (an archive stored by an older version
 * too), while the archive streams: it is inflated by zlib's thread pool, never whole in memory
 * nor in one turn of the event loop. A refusal names the entry or the limit; at a launch it is a
 * precheck failure (FAILED_PRECHECKS), never a recovery.
 *
 * Symbolic links are kept as links, whatever they point at (as `rsync -a` does; SkyPilot's workdir
 * sync): the server never reads or writes through one. Extraction writes files and folders with
 * node-tar, which is never given a link (node-tar rewrites an absolute target and refuses one that
 * leaves the folder, and its path reservations hang on some link shapes), then re-creates each
 * link as written (placeLinks) — so no entry is ever written through a link of the archive, and
 * one extracted over what is there (a file_mounts folder) is refused where a link already on disk
 * lies on its path.
 */

/** Default of JOBDECK_UPLOAD_MAX_BYTES: 100 MiB (the compressed archive; lib/config.ts). */
export { DEFAULT_UPLOAD_MAX_BYTES } from '../config';
/** Default of JOBDECK_UPLOAD_MAX_UNPACKED_BYTES: 1 GiB (the archive inflated: what each attempt writes; lib/config.ts). */
export { DEFAULT_UPLOAD_MAX_UNPACKED_BYTES } from '../config';
/** Most entries an archive may hold. */
export const UPLOAD_MAX_ENTRIES = 100_000;
/** Entries the manifest lists by name (the rest are counted). */
export const UPLOAD_LISTED_FILES = 1000;

/** An archive's content hash: 64 lower-case hex digits (sha256 of the gzip'd bytes). */
export const UPLOAD_HASH = /^[0-9a-f]{64}$/;

/** What an upload holds, as stored beside it and shown on the job's page. */
export interface UploadManifest {
  hash: string;
  /** Size of the archive (bytes, compressed). */
  size: number;
  /** Sum of the files' sizes (bytes, uncompressed). */
  unpackedSize: number;
  /** Entries in the archive. */
  entries: number;
  /** The first {@link UPLOAD_LISTED_FILES} paths (files, folders with a trailing `/`, links as `a -> b`). */
  files: string[];
}

/** A `file_mounts` source's upload: a folder placed at the target, or one file placed as it. */
export interface FileMountUpload {
  hash: string;
  kind: 'file' | 'dir';
}

/** An archive refused: the reason names the entry or the limit. */
export class UploadError extends Error {
  /** At a launch, no recovery would change it (the monitor's precheck rule). */
  readonly precheck = true;
  constructor(message: string) {
    super(message);
    this.name = 'UploadError';
  }
}

/** JOBDECK_UPLOAD_MAX_BYTES (bytes), else {@link DEFAULT_UPLOAD_MAX_BYTES}. @throws ConfigError when set and not a positive integer. */
export function uploadMaxBytes(env: Env = process.env): number {
  return setting('JOBDECK_UPLOAD_MAX_BYTES', env);
}

/**
 * JOBDECK_UPLOAD_MAX_UNPACKED_BYTES (bytes: the archive inflated, headers included), else
 * {@link DEFAULT_UPLOAD_MAX_UNPACKED_BYTES}. @throws ConfigError when set and not a positive integer.
 */
export function uploadMaxUnpackedBytes(env: Env = process.env): number {
  return setting('JOBDECK_UPLOAD_MAX_UNPACKED_BYTES', env);
}

/** Where uploads are kept: `$JOBDECK_HOME/uploads`. */
export function uploadsDir(home?: string): string {
  return path.join(dataFolder(home), 'uploads');
}

/**
 * Lists and checks an archive file while it streams: gunzip in zlib's thread pool, the tar
 * headers parsed chunk by chunk, every entry through the folder's rules (UploadTree), the
 * inflated bytes and the entries counted against their caps (stops at the first one passed).
 * @throws UploadError naming the entry or the limit, or saying it is no gzip'd tar.
 */
async function inspect(file: string, maxUnpacked = uploadMaxUnpackedBytes()): Promise<Omit<UploadManifest, 'hash' | 'size'> & { entryNames: string[]; links: ArchiveLink[] }> {
  const files: string[] = [];
  const entryNames: string[] = [];
  const links: ArchiveLink[] = [];
  const tree = new UploadTree();
  let entries = 0;
  let unpackedSize = 0;
  let inflated = 0;
  let problem: string | null = null;
  const parser = tar.t({
    strict: true,
    onReadEntry: (e) => {
      entries++;
      problem ??= tree.add(e.path, e.type, e.linkpath);
      if (entries > UPLOAD_MAX_ENTRIES) problem ??= `the archive holds more than ${UPLOAD_MAX_ENTRIES} entries`;
      if (!problem) {
        entryNames.push(e.path);
        if (e.type === 'SymbolicLink') links.push({ name: e.path, target: e.linkpath ?? '' });
      }
      unpackedSize += e.type === 'File' || e.type === 'OldFile' ? (e.size ?? 0) : 0;
      if (files.length < UPLOAD_LISTED_FILES) files.push(e.type === 'SymbolicLink' ? `${e.path} -> ${e.linkpath}` : e.path);
      e.resume();
    },
  });
  const src = createReadStream(file);
  const gunzip = createGunzip();
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      inflated += chunk.length;
      if (inflated > maxUnpacked) problem ??= `the archive unpacks to more than ${maxUnpacked} bytes (JOBDECK_UPLOAD_MAX_UNPACKED_BYTES)`;
      // A refused archive is not read further.
      done(problem ? new UploadError(problem) : null, problem ? undefined : chunk);
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      // `on`, not `once`: a stream may report more than one error, and one not listened for would throw.
      for (const s of [src, gunzip, cap]) s.on('error', reject);
      parser.on('error', reject);
      parser.once('end', () => resolve());
      src.pipe(gunzip).pipe(cap).pipe(parser as unknown as NodeJS.WritableStream);
    });
  } catch (err) {
    if (problem) throw new UploadError(problem);
    throw new UploadError(`not a gzip'd tar archive: ${(err as Error).message}`);
  } finally {
    src.destroy();
    gunzip.destroy();
  }
  if (problem) throw new UploadError(problem);
  return { unpackedSize, entries, files, entryNames, links };
}

/** A symbolic link of an archive: its entry name and its target as written. */
interface ArchiveLink {
  name: string;
  target: string;
}

/** An entry name's components (`a//b/./c` → a, b, c). */
const partsOf = (name: string): string[] => name.split('/').filter((p) => p !== '' && p !== '.');

/**
 * Checks that the folders an entry is placed in, below `dest`, are folders and no link — on disk
 * as they are now (what an extraction over existing content would pass through). `checked`
 * remembers the folders seen, so a shared prefix costs one lstat.
 * @throws UploadError naming the entry and the link (or file) in the way.
 */
async function assertPlaceable(dest: string, name: string, checked: Set<string>, hash: string): Promise<void> {
  const parts = partsOf(name);
  let at = dest;
  for (const p of parts.slice(0, -1)) {
    at = path.join(at, p);
    if (checked.has(at)) continue;
    const st = await lstat(at).catch(() => null);
    if (st?.isSymbolicLink()) throw new UploadError(`upload ${hash.slice(0, 12)}…: ${JSON.stringify(name)} would be placed through ${path.relative(dest, at)}, a symbolic link already there, which nothing is placed through`);
    if (st && !st.isDirectory()) throw new UploadError(`upload ${hash.slice(0, 12)}…: ${JSON.stringify(name)} would be placed inside ${path.relative(dest, at)}, which is not a folder`);
    // A folder not there yet is made by the extraction itself: nothing below it can be a link.
    if (!st) return;
    checked.add(at);
  }
}

/**
 * Re-creates an archive's links in `dest` as written (never followed): each one's folders checked
 * to hold no link, whatever is at its name replaced unless it is a folder.
 * @throws UploadError naming the link.
 */
async function placeLinks(dest: string, links: readonly ArchiveLink[], hash: string): Promise<void> {
  const checked = new Set<string>();
  for (const l of links) {
    await assertPlaceable(dest, l.name, checked, hash);
    const at = path.join(dest, ...partsOf(l.name));
    const st = await lstat(at).catch(() => null);
    if (st?.isDirectory()) throw new UploadError(`upload ${hash.slice(0, 12)}…: the link ${JSON.stringify(l.name)} would replace the folder there`);
    try {
      if (st) await unlink(at);
      // Its folders, when no other entry made them (checked above: none of those that exist is a link).
      else await mkdir(path.dirname(at), { recursive: true, mode: 0o755 });
      await symlink(l.target, at);
    } catch (err) {
      throw new UploadError(`upload ${hash.slice(0, 12)}…: the link ${JSON.stringify(l.name)} cannot be made: ${(err as Error).message}`);
    }
  }
}

/**
 * Stores an archive (a gzip'd tar) once per content hash and answers its manifest; storing the
 * same bytes again answers the stored one.
 * @throws UploadError when it is larger than `maxBytes`, is not a gzip'd tar, or breaks an entry rule.
 */
export async function storeUpload(bytes: Uint8Array, home?: string, maxBytes = uploadMaxBytes()): Promise<UploadManifest> {
  if (bytes.byteLength > maxBytes) throw new UploadError(`the archive is ${bytes.byteLength} bytes; the limit is ${maxBytes} bytes (JOBDECK_UPLOAD_MAX_BYTES)`);
  const hash = createHash('sha256').update(bytes).digest('hex');
  const dir = uploadsDir(home);
  const known = readManifest(hash, home);
  if (known) return known;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `${hash}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, bytes, { mode: 0o600 });
  try {
    const manifest: UploadManifest = { hash, size: bytes.byteLength, ...(await inspect(tmp)) };
    renameSync(tmp, path.join(dir, `${hash}.tar.gz`));
    writeFileSync(path.join(dir, `${hash}.json`), JSON.stringify(manifest), { mode: 0o600 });
    return manifest;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The manifest of a stored upload, or null when there is none with that hash. */
export function readManifest(hash: string, home?: string): UploadManifest | null {
  if (!UPLOAD_HASH.test(hash)) return null;
  const dir = uploadsDir(home);
  if (!existsSync(path.join(dir, `${hash}.tar.gz`))) return null;
  try {
    return JSON.parse(readFileSync(path.join(dir, `${hash}.json`), 'utf8')) as UploadManifest;
  } catch {
    return null;
  }
}

/**
 * Extracts a stored upload into `dest`, made fresh (removed first) unless `fresh` is false (then
 * extracted over what is there): the attempt's own copy. The whole archive is checked again first
 * (rules and caps); modes are kept, owners are not.
 * @throws UploadError when the upload is gone, an entry breaks a rule, or extraction fails.
 */
export async function extractUpload(hash: string, dest: string, home?: string, fresh = true): Promise<void> {
  const file = path.join(uploadsDir(home), `${hash}.tar.gz`);
  if (!UPLOAD_HASH.test(hash) || !existsSync(file)) throw new UploadError(`upload ${hash} is not in the data folder`);
  // The whole check first: an archive stored before a rule existed is held to it too.
  const { entryNames, links } = await inspect(file);
  if (fresh) rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  if (!fresh) {
    // Over what is there: no entry may go through a link already on disk.
    const checked = new Set<string>();
    for (const name of entryNames) await assertPlaceable(dest, name, checked, hash);
  }
  try {
    // Links are left to placeLinks(): node-tar is given files and folders only.
    const filter = (_p: string, e: unknown) => (e as { type?: string }).type !== 'SymbolicLink';
    await pipeline(createReadStream(file), createGunzip(), tar.x({ cwd: dest, strict: true, preserveOwner: false, filter }) as unknown as NodeJS.WritableStream);
  } catch (err) {
    // Whatever the extraction still refuses is the archive's fault: a precheck failure, named.
    throw new UploadError(`upload ${hash.slice(0, 12)}… cannot be extracted: ${(err as Error).message}`);
  }
  await placeLinks(dest, links, hash);
}

/**
 * An attempt's working folder with an uploaded folder: a fresh copy in its workspace
 * `<attemptDir>/work` (lib/jobs/paths.ts workspaceOf).
 * The upload *is* the folder a relative `workdir` resolved to where the job was launched (the CLI
 * packs that folder), so a relative workdir runs at the copy's root; an absolute or `~/` workdir
 * is kept as written (the copy is still made, beside it, for file_mounts).
 * @throws UploadError (a precheck failure: the upload is gone or breaks a rule).
 */
export async function uploadedWorkdir(hash: string, workdir: string | null, attemptDir: string, home?: string): Promise<string> {
  const copy = workspaceOf(attemptDir);
  await extractUpload(hash, copy, home);
  if (workdir !== null && (workdir.startsWith('/') || workdir === '~' || workdir.startsWith('~/'))) return workdir;
  return copy;
}

/**
 * Where a `file_mounts` target lands (docs/spec.md "file_mounts"), and the folder it must stay
 * in: `~/x` in the home of the user the attempt runs as; a relative target inside the attempt's
 * working folder `cwd` when that folder is the attempt's own (its uploaded copy, or the attempt
 * folder `attemptDir`) — a relative target beside an absolute `workdir` is held to the rule of an
 * absolute one; an absolute one as written, only under `root` (JOBDECK_FILE_MOUNT_ROOT; the submit
 * checked it, checked again here since the operator may have changed it). `ownFolderOnly`
 * (isolation on: jobdeck places as root): only the first kind — the attempt's own folder.
 * @throws UploadError for a target outside its allowed folder.
 */
export function fileMountPath(target: string, cwd: string, root: string | null, attemptDir?: string, ownFolderOnly = false): { dest: string; base: string } {
  const within = (dir: string, p: string) => p === dir || p.startsWith(dir + path.sep);
  const own = attemptDir === undefined || within(path.resolve(attemptDir), path.resolve(cwd));
  if (ownFolderOnly && (path.isAbsolute(target) || target === '~' || target.startsWith('~/') || !own)) {
    // jobdeck places as root: never where the job's account (or another) decides what is there.
    throw new UploadError(`file_mounts target ${target}: with isolation on, a target is placed only inside the attempt's workspace (a relative target, with the default or the uploaded workdir)`);
  }
  if (target === '~' || target.startsWith('~/')) return { dest: path.join(os.homedir(), target.slice(1)), base: os.homedir() };
  if (!path.isAbsolute(target) && own) return { dest: path.join(cwd, target), base: cwd };
  const r = root ? path.resolve(root) : null;
  const t = path.resolve(cwd, target);
  if (r === null || !within(r, t)) {
    const what = path.isAbsolute(target) ? '' : ` (relative to the workdir ${cwd}, which is not the attempt's own folder)`;
    throw new UploadError(`file_mounts target ${target}${what} is not under JOBDECK_FILE_MOUNT_ROOT${r ? ` (${r})` : ' (not set)'}`);
  }
  return { dest: t, base: r };
}

/**
 * Makes the folders from `base` down to `dest` (`dest` itself too when `dir`), following no link:
 * a target is never reached through a symbolic link, which could lead anywhere (the upload's
 * own links, or whatever is at an absolute target).
 * @throws UploadError naming the link (or the file in the way).
 */
function placeWithin(base: string, dest: string, target: string, dir: boolean): void {
  const rel = path.relative(base, dest);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new UploadError(`file_mounts target ${target} leaves ${base}`);
  const parts = rel.split(path.sep).filter(Boolean);
  let at = base;
  for (let i = 0; i < parts.length; i++) {
    at = path.join(at, parts[i]);
    const last = i === parts.length - 1;
    let st = null;
    try {
      st = lstatSync(at);
    } catch {
      // not there yet
    }
    if (st?.isSymbolicLink()) throw new UploadError(`file_mounts target ${target}: ${path.relative(base, at)} is a symbolic link, which a target is never placed through`);
    if (st && !st.isDirectory() && (!last || dir)) throw new UploadError(`file_mounts target ${target}: ${path.relative(base, at)} is not a folder`);
    if (!st && (!last || dir)) mkdirSync(at, { mode: 0o755 });
  }
}

/**
 * Places a task's `file_mounts` uploads for one attempt: a folder's content extracted at its
 * target (over what is there), a file copied to its target (parents made), never through a link.
 * Before the attempt starts, every time, so each attempt sees the uploaded content. `ownFolderOnly`:
 * see fileMountPath.
 * @throws UploadError (a precheck failure: an upload gone, an entry rule, a target outside its folder or through a link).
 */
export async function placeFileMounts(mounts: Record<string, FileMountUpload>, cwd: string, attemptDir: string, home?: string, root = setting('JOBDECK_FILE_MOUNT_ROOT'), opts: { ownFolderOnly?: boolean } = {}): Promise<void> {
  for (const [target, up] of Object.entries(mounts)) {
    const { dest, base } = fileMountPath(target, cwd, root, attemptDir, opts.ownFolderOnly);
    placeWithin(base, dest, target, up.kind === 'dir');
    if (up.kind === 'dir') {
      await extractUpload(up.hash, dest, home, false);
      continue;
    }
    const tmp = path.join(attemptDir, 'mount-file');
    await extractUpload(up.hash, tmp, home);
    // The file itself, never what a link points at (the server reads nothing through a link).
    const files = readdirSync(tmp).filter((f) => lstatSync(path.join(tmp, f)).isFile());
    if (files.length !== 1) throw new UploadError(`file_mounts ${target}: the upload holds ${files.length} files, expected one`);
    copyFileSync(path.join(tmp, files[0]), dest);
    rmSync(tmp, { recursive: true, force: true });
  }
}
