/**
 * Packing a local folder for upload (a submit with a relative `workdir` or a local `file_mounts`
 * source — the client's and so `jobdeck launch`'s; docs/spec.md "workdir"): a gzip'd tar of the folder's files, without what
 * its `.gitignore` and `.skyignore` files exclude (the root's and every sub-folder's, with git's
 * pattern rules via the `ignore` package) and without `.git`. Symbolic links are packed as the
 * links they are, whatever they point at — never followed, so nothing outside the folder is read —
 * as `rsync -a` copies them (SkyPilot's workdir sync): the job finds the same link, valid or
 * dangling where it runs. The server checks the entry rules again (POST /api/uploads).
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import * as tar from 'tar';
import { BadRequestError } from './errors';

const usageError = (message: string) => new BadRequestError(message, 'upload');

/** Default of JOBDECK_UPLOAD_MAX_BYTES (the compressed archive; the server's default too). */
export const DEFAULT_UPLOAD_MAX_BYTES = 100 * 1024 * 1024;

/** Files whose patterns exclude entries, in the folder they sit in and below. */
const IGNORE_FILES = ['.gitignore', '.skyignore'];

/** A packed folder: the archive's bytes and what it holds. */
export interface PackedFolder {
  bytes: Uint8Array<ArrayBuffer>;
  /** Paths packed, relative to the folder (folders with a trailing `/`). */
  entries: string[];
}

/**
 * JOBDECK_UPLOAD_MAX_BYTES as the client reads it (bytes).
 * @throws BadRequestError when set and not a positive integer.
 */
export function uploadCap(env: Record<string, string | undefined>): number {
  const raw = env.JOBDECK_UPLOAD_MAX_BYTES;
  if (raw === undefined || raw.trim() === '') return DEFAULT_UPLOAD_MAX_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw usageError(`JOBDECK_UPLOAD_MAX_BYTES must be a positive integer (bytes), got ${JSON.stringify(raw)}`);
  return n;
}

/** One folder's ignore rules, with the folder they apply from (relative to the root, '' for it). */
interface Rules {
  base: string;
  ig: Ignore;
}

async function rulesOf(root: string, rel: string): Promise<Rules | null> {
  let text = '';
  for (const f of IGNORE_FILES) {
    try {
      text += `${await readFile(path.join(root, rel, f), 'utf8')}\n`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return text.trim() === '' ? null : { base: rel, ig: ignore().add(text) };
}

function ignored(rules: readonly Rules[], rel: string, dir: boolean): boolean {
  for (const r of rules) {
    const sub = r.base === '' ? rel : rel.slice(r.base.length + 1);
    if (r.ig.ignores(dir ? `${sub}/` : sub)) return true;
  }
  return false;
}

/** Walks `root`, answering the entries to pack (sorted, so the same folder packs to the same bytes). @throws BadRequestError for a socket, pipe or device. */
async function walk(root: string, rel: string, rules: readonly Rules[], out: string[], label: string): Promise<void> {
  const own = await rulesOf(root, rel);
  const all = own ? [...rules, own] : rules;
  const names = (await readdir(path.join(root, rel))).sort();
  for (const name of names) {
    if (name === '.git') continue;
    const p = rel === '' ? name : `${rel}/${name}`;
    const st = await lstat(path.join(root, p));
    if (ignored(all, p, st.isDirectory())) continue;
    if (st.isSymbolicLink()) out.push(p);
    else if (st.isDirectory()) {
      out.push(`${p}/`);
      await walk(root, p, all, out, label);
    } else if (st.isFile()) out.push(p);
    else throw usageError(`${label}: ${p} is not a file, folder or link (a socket, pipe or device cannot be uploaded; add it to .skyignore)`);
  }
}

/**
 * Packs folder `dir` (absolute) into a gzip'd tar, at most `maxBytes` compressed. `label` names
 * it in errors (`workdir .`, `file_mounts ~/data`).
 * @throws BadRequestError when it is not a folder, holds a special file, or
 *   packs to more than `maxBytes` (the message names both sizes and JOBDECK_UPLOAD_MAX_BYTES).
 */
export async function packFolder(dir: string, maxBytes: number, label: string): Promise<PackedFolder> {
  let st;
  try {
    st = await lstat(dir);
  } catch {
    throw usageError(`${label}: ${dir} does not exist`);
  }
  if (!st.isDirectory()) throw usageError(`${label}: ${dir} is not a folder`);
  const entries: string[] = [];
  await walk(dir, '', [], entries, label);
  // An empty folder packs as its own entry alone (tar needs at least one path).
  return { bytes: await tarOf(dir, entries.length ? entries : ['.'], maxBytes, label), entries };
}

/**
 * Packs one file (absolute path) as an archive holding it under `name`.
 * @throws BadRequestError like {@link packFolder}.
 */
export async function packFile(file: string, maxBytes: number, label: string): Promise<PackedFolder> {
  const st = await lstat(file).catch(() => null);
  if (!st) throw usageError(`${label}: ${file} does not exist`);
  if (!st.isFile()) throw usageError(`${label}: ${file} is not a regular file`);
  const name = path.basename(file);
  return { bytes: await tarOf(path.dirname(file), [name], maxBytes, label), entries: [name] };
}

async function tarOf(cwd: string, entries: string[], maxBytes: number, label: string): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  let total = 0;
  // Entries are listed one by one (folders without recursion): only what the walk kept is packed.
  // A file with several hard links is packed as a copy each time (a cache that never remembers):
  // the server accepts no hard-link entry (docs/spec.md "workdir").
  const noHardLinks = { get: () => undefined, set() {} } as unknown as Map<`${number}:${number}`, string>;
  const stream = tar.c({ gzip: true, cwd, portable: true, noDirRecurse: true, follow: false, linkCache: noHardLinks }, entries.map((e) => e.replace(/\/$/, '')));
  for await (const c of stream as AsyncIterable<Buffer>) {
    total += c.byteLength;
    // Past the cap the bytes are only counted, so the message can name the whole size.
    if (total <= maxBytes) chunks.push(c);
  }
  if (total > maxBytes) {
    throw usageError(`${label}: the upload is ${total} bytes (compressed); the limit is ${maxBytes} bytes (JOBDECK_UPLOAD_MAX_BYTES) — add large files to .skyignore or raise the limit`);
  }
  const all = Buffer.concat(chunks);
  return new Uint8Array(all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer);
}
