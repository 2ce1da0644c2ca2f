import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { dataFolder } from '../jobs/paths';

/**
 * Uploaded working folders (SkyPilot's workdir sync; docs/spec.md "workdir"): a gzip'd tar the
 * CLI packs, stored once per content hash in `$JOBDECK_HOME/uploads/<sha256>.tar.gz` with its
 * manifest (`<sha256>.json`), and extracted into a fresh folder for each attempt. The entry
 * rules are checked at upload and again at extraction: regular files, folders and symbolic links
 * only; relative paths without `..`; a link's target relative and inside the folder — so nothing
 * is ever written, or reached through a link, outside the attempt's copy.
 */

/** Default of JOBDECK_UPLOAD_MAX_BYTES: 100 MiB (the compressed archive). */
export const DEFAULT_UPLOAD_MAX_BYTES = 100 * 1024 * 1024;
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

/** JOBDECK_UPLOAD_MAX_BYTES (bytes), else {@link DEFAULT_UPLOAD_MAX_BYTES}. @throws Error when set and not a positive integer. */
export function uploadMaxBytes(env: Record<string, string | undefined> = process.env): number {
  const raw = env.JOBDECK_UPLOAD_MAX_BYTES;
  if (raw === undefined || raw.trim() === '') return DEFAULT_UPLOAD_MAX_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`JOBDECK_UPLOAD_MAX_BYTES must be a positive integer (bytes), got ${JSON.stringify(raw)}`);
  return n;
}

/** Where uploads are kept: `$JOBDECK_HOME/uploads`. */
export function uploadsDir(home?: string): string {
  return path.join(dataFolder(home), 'uploads');
}

/** The problem with one entry (path, type, link target), or null. */
function entryProblem(p: string, type: string, linkpath: string | undefined): string | null {
  const name = p.replace(/\/+$/, '');
  if (name === '' || name === '.') return null;
  if (path.posix.isAbsolute(name) || name.split('/').includes('..')) return `entry ${JSON.stringify(p)}: paths must be relative and stay inside the folder`;
  if (type !== 'File' && type !== 'OldFile' && type !== 'Directory' && type !== 'SymbolicLink') return `entry ${JSON.stringify(p)}: only files, folders and symbolic links are allowed, got ${type}`;
  if (type === 'SymbolicLink') {
    const target = linkpath ?? '';
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
    if (target === '' || path.posix.isAbsolute(target) || resolved === '..' || resolved.startsWith('../')) return `entry ${JSON.stringify(p)}: a link must point inside the folder, got ${JSON.stringify(target)}`;
  }
  return null;
}

/** Lists and checks an archive file. @throws UploadError */
async function inspect(file: string): Promise<Omit<UploadManifest, 'hash' | 'size'>> {
  const files: string[] = [];
  let entries = 0;
  let unpackedSize = 0;
  let problem: string | null = null;
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (e) => {
        entries++;
        problem ??= entryProblem(e.path, e.type, e.linkpath);
        if (entries > UPLOAD_MAX_ENTRIES) problem ??= `the archive holds more than ${UPLOAD_MAX_ENTRIES} entries`;
        unpackedSize += e.type === 'File' || e.type === 'OldFile' ? (e.size ?? 0) : 0;
        if (files.length < UPLOAD_LISTED_FILES) files.push(e.type === 'SymbolicLink' ? `${e.path} -> ${e.linkpath}` : e.path);
        e.resume();
      },
    });
  } catch (err) {
    throw new UploadError(`not a gzip'd tar archive: ${(err as Error).message}`);
  }
  if (problem) throw new UploadError(problem);
  return { unpackedSize, entries, files };
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
 * extracted over what is there): the attempt's own copy. The entry rules are applied again; modes
 * are kept, owners are not.
 * @throws UploadError when the upload is gone or an entry breaks a rule.
 */
export async function extractUpload(hash: string, dest: string, home?: string, fresh = true): Promise<void> {
  const file = path.join(uploadsDir(home), `${hash}.tar.gz`);
  if (!UPLOAD_HASH.test(hash) || !existsSync(file)) throw new UploadError(`upload ${hash} is not in the data folder`);
  if (fresh) rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  let problem: string | null = null;
  await pipeline(
    Readable.from([readFileSync(file)]),
    tar.x({
      cwd: dest,
      strict: true,
      preserveOwner: false,
      filter: (p, e) => {
        const why = entryProblem(p, (e as tar.ReadEntry).type, (e as tar.ReadEntry).linkpath);
        problem ??= why;
        return why === null;
      },
    }),
  );
  if (problem) throw new UploadError(problem);
}

/**
 * An attempt's working folder with an uploaded folder: a fresh copy at `<attemptDir>/workdir`.
 * The upload *is* the folder a relative `workdir` resolved to where the job was launched (the CLI
 * packs that folder), so a relative workdir runs at the copy's root; an absolute or `~/` workdir
 * is kept as written (the copy is still made, beside it, for file_mounts).
 * @throws UploadError (a precheck failure: the upload is gone or breaks a rule).
 */
export async function uploadedWorkdir(hash: string, workdir: string | null, attemptDir: string, home?: string): Promise<string> {
  const copy = path.join(attemptDir, 'workdir');
  await extractUpload(hash, copy, home);
  if (workdir !== null && (workdir.startsWith('/') || workdir === '~' || workdir.startsWith('~/'))) return workdir;
  return copy;
}

/**
 * Where a `file_mounts` target lands (docs/spec.md "file_mounts"): `~/x` in the home of the user
 * the attempt runs as, a relative target inside the attempt's working folder `cwd`, an absolute
 * one as written — only under `root` (JOBDECK_FILE_MOUNT_ROOT; the submit checked it, checked
 * again here since the operator may have changed it).
 * @throws UploadError for an absolute target outside `root`.
 */
export function fileMountPath(target: string, cwd: string, root: string | null): string {
  if (target === '~' || target.startsWith('~/')) return path.join(os.homedir(), target.slice(1));
  if (!path.isAbsolute(target)) return path.join(cwd, target);
  const r = root ? path.resolve(root) : null;
  const t = path.resolve(target);
  if (r === null || (t !== r && !t.startsWith(r + path.sep))) throw new UploadError(`file_mounts target ${target} is not under JOBDECK_FILE_MOUNT_ROOT${r ? ` (${r})` : ' (not set)'}`);
  return t;
}

/**
 * Places a task's `file_mounts` uploads for one attempt: a folder's content extracted at its
 * target (over what is there), a file copied to its target (parents made). Before the attempt
 * starts, every time, so each attempt sees the uploaded content.
 * @throws UploadError (a precheck failure: an upload gone, an entry rule, a target outside the root).
 */
export async function placeFileMounts(mounts: Record<string, FileMountUpload>, cwd: string, attemptDir: string, home?: string, root = process.env.JOBDECK_FILE_MOUNT_ROOT || null): Promise<void> {
  for (const [target, up] of Object.entries(mounts)) {
    const dest = fileMountPath(target, cwd, root);
    if (up.kind === 'dir') {
      await extractUpload(up.hash, dest, home, false);
      continue;
    }
    const tmp = path.join(attemptDir, 'mount-file');
    await extractUpload(up.hash, tmp, home);
    const files = readdirSync(tmp).filter((f) => statSync(path.join(tmp, f)).isFile());
    if (files.length !== 1) throw new UploadError(`file_mounts ${target}: the upload holds ${files.length} files, expected one`);
    mkdirSync(path.dirname(dest), { recursive: true });
    copyFileSync(path.join(tmp, files[0]), dest);
    rmSync(tmp, { recursive: true, force: true });
  }
}
