/**
 * A job spec read from a file, and the local folders and files it names that go with it
 * (docs/spec.md "workdir", "file_mounts"): what the client's `submit()` — and so `jobdeck
 * launch` — reads, packs (pack.ts) and uploads before submitting.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BadRequestError } from './errors';

const usageError = (message: string) => new BadRequestError(message, 'spec file');

/** Most bytes of YAML read from a spec file (the server caps request bodies too). */
export const MAX_SPEC_BYTES = 1024 * 1024;

/** The task file read in a folder given instead of a file (SkyPilot's name). */
export const FOLDER_TASK_FILE = 'task.yaml';

/** Reads the spec file, with clear errors for a missing, unreadable or oversized file. @throws BadRequestError */
export async function readSpecFile(file: string, cwd: string): Promise<string> {
  const abs = path.resolve(cwd, file);
  try {
    const st = await stat(abs);
    if (st.isDirectory()) throw usageError(`${file} is a directory; give a job YAML file`);
    if (st.size > MAX_SPEC_BYTES) throw usageError(`${file} is ${st.size} bytes; a job spec may be at most ${MAX_SPEC_BYTES} bytes`);
    return await readFile(abs, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw usageError(`file not found: ${file} (looked for ${abs})`);
    if (code === 'EACCES') throw usageError(`cannot read ${file}: permission denied`);
    throw err;
  }
}

/**
 * A folder's task.yaml; a file is itself.
 * @throws BadRequestError when a folder holds no task.yaml.
 */
export async function resolveTaskFile(file: string, cwd: string): Promise<string> {
  const st = await stat(path.resolve(cwd, file)).catch(() => null);
  if (!st?.isDirectory()) return file;
  const inside = path.join(file, FOLDER_TASK_FILE);
  if (!(await stat(path.resolve(cwd, inside)).catch(() => null))?.isFile()) throw usageError(`${file} is a folder without a ${FOLDER_TASK_FILE}; give the task file itself (jobdeck launch ${path.join(file, 'FILE.yaml')})`);
  return inside;
}

/** True for a workdir that names an uploaded folder's place, not a path on the machine (the server's rule, lib/jobs/spec). */
export function isRelativeWorkdir(v: string): boolean {
  return !v.startsWith('/') && v !== '~' && !v.startsWith('~/');
}

/** Each YAML document's top-level map (null for one that is not a map or does not parse). */
function documents(yamlText: string): Array<Record<string, unknown> | null> {
  return parseAllDocuments(yamlText).map((doc) => {
    const v: unknown = doc.errors.length ? null : doc.toJS();
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  });
}

/**
 * The one folder the tasks' relative workdirs name, resolved from `base` (the task file's
 * folder), or null when no task has one. A pipeline whose tasks name different folders is
 * refused (one upload per job).
 * @throws BadRequestError for two different folders.
 */
export function relativeWorkdirFolder(yamlText: string, base: string): { dir: string; written: string } | null {
  let found: { dir: string; written: string } | null = null;
  for (const v of documents(yamlText)) {
    const w = v?.workdir;
    if (typeof w !== 'string' || w.trim() === '' || !isRelativeWorkdir(w)) continue;
    const dir = path.resolve(base, w);
    if (found && found.dir !== dir) throw usageError(`the tasks name different relative workdirs (${found.written}, ${w}); one job uploads one folder — give them the same workdir`);
    found ??= { dir, written: w };
  }
  return found;
}

/**
 * The local sources of the tasks' `file_mounts`: target → absolute source path (relative sources
 * from `base`, `~/` from `homeDir`). Buckets and storage objects are left to the server, which
 * refuses them with the reason.
 * @throws BadRequestError when two tasks mount different sources at one target.
 */
export function localFileMounts(yamlText: string, base: string, homeDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of documents(yamlText)) {
    const fm = v?.file_mounts;
    if (!fm || typeof fm !== 'object' || Array.isArray(fm)) continue;
    for (const [target, source] of Object.entries(fm as Record<string, unknown>)) {
      if (typeof source !== 'string' || source.trim() === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(source)) continue;
      const abs = source === '~' || source.startsWith('~/') ? path.join(homeDir, source.slice(1)) : path.resolve(base, source);
      const known = out.get(target);
      if (known !== undefined && known !== abs) throw usageError(`file_mounts ${target}: the tasks mount different sources there (${known}, ${abs}); one job uploads one source per target`);
      out.set(target, abs);
    }
  }
  return out;
}
