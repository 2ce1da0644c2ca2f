import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, watch as fsWatch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { logger } from '../log';
import { LOST_SUFFIX } from './log-pump';
import type { AttemptHandle, ExitListener, ProbeResult } from './types';

/**
 * The records an attempt leaves in its folder that outlive jobdeck, and watching for them —
 * shared by every executor whose attempts run the wrapper (local, Slurm): the exit record the
 * wrapper writes when the attempt ends (the truth about how it ended), the name of the handle
 * copy launch() leaves, and watchExitRecord, which turns the record's appearance into an
 * ExitListener call (docs/design.md, "Executors").
 */

/** Name of the exit record in the attempt folder. */
export const EXIT_FILE = 'exit';
/** Name of the handle copy in the attempt folder. */
export const HANDLE_FILE = 'handle.json';
/**
 * The folder of a Slurm attempt that runs as an OS account (docs/design.md §16): its scripts and
 * the records its batch job writes, the account's; the attempt folder around it stays jobdeck's.
 */
export const JOB_DIR = 'job';
/** Most bytes of an exit record read: a record is one short line. */
const MAX_RECORD_BYTES = 64 * 1024;

/**
 * Where an attempt's exit record is: `<attemptDir>/job` when that folder is there (a Slurm
 * attempt run as an account: only jobdeck can make it, in its own attempt folder), else the
 * attempt folder itself.
 */
export function recordDirOf(attemptDir: string): string {
  const dir = path.join(attemptDir, JOB_DIR);
  try {
    // No exception for the common answer (no such folder): every probe asks (bench/README.md).
    return lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() ? dir : attemptDir;
  } catch {
    return attemptDir;
  }
}

/**
 * A small file's text, read without following a link and without blocking (a FIFO put in its
 * place answers at once), and only when the file's owner is its folder's (a hard link to another
 * owner's file is not a record): in a folder a job's account writes, whatever is at that name
 * must not lead jobdeck elsewhere. Null when there is no such file.
 * @throws Error for a name that is not a regular file of its folder's owner, or larger than `max` bytes; I/O errors.
 */
/** True when nothing is at `file` (ENOENT), found without an exception; any other answer: false. */
function noEntry(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

function readRecordFile(file: string, max: number): string | null {
  // A running attempt has no record: answered by a look that throws nothing (an ENOENT thrown
  // by open costs more than the read). The open below still refuses links and other owners.
  if (noEntry(file)) return null;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'ELOOP') throw new Error(`${file} is a symbolic link, not an exit record`, { cause: err });
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    if (st.uid !== statSync(path.dirname(file)).uid) throw new Error(`${file} belongs to uid ${st.uid}, not to its folder's owner`);
    if (st.size > max) throw new Error(`${file} is ${st.size} bytes, more than an exit record (${max})`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Name of the file a Slurm batch script writes with its nodes' host names (one a line, rank order). */
export const HOSTS_FILE = 'hosts';
/** Most nodes a hosts file is read for (the spec's num_nodes bound). */
const MAX_HOSTS = 1024;

/**
 * The host names `<attemptDir>/hosts` lists (one a line, in rank order), or null when there is
 * none yet or it holds anything but host names (letters, digits, `.`, `_`, `-`; ≤ 253 characters).
 */
export function readHostsFile(attemptDir: string): string[] | null {
  // Where the batch job writes its records (an account's `job/` folder), read as an exit record is.
  let text: string | null;
  try {
    text = readRecordFile(path.join(recordDirOf(attemptDir), HOSTS_FILE), 64 * 1024);
  } catch {
    return null;
  }
  if (text === null) return null;
  const names = text.split('\n').filter((l) => l !== '');
  if (names.length === 0 || names.length > MAX_HOSTS || !names.every((n) => /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(n))) return null;
  return names;
}

/**
 * What the wrapper records when the attempt ends, as one JSON line in `<attemptDir>/exit`
 * (written to `exit.tmp`, then renamed and fsynced with its folder — by the wrapper, or by the
 * local launcher once it reaped the wrapper; a whole `exit.tmp` of an attempt whose launcher died
 * first is read as the record: readExitRecord):
 * `{"phase":"setup"|"run","exitCode":N,"endedAtMs":<epoch ms, wrapper's clock>[,"reason":"…"][,"cpuMs":N]}`.
 * `phase: "setup"` with a non-zero code means setup failed (or never started: missing workdir,
 * cancelled between setup and run) and run never started; `phase: "run"` carries run's code
 * (0 when run is null). A process killed by signal N exits 128+N (SIGTERM → 143). A multi-node
 * attempt's record (written by its batch script from the ranks' own) adds `"nodes":N` and, when a
 * rank's failure decided, `"rank":K` (lib/executors/slurm/gang.ts). A local attempt in a control
 * group adds `"oomKills":N` when the kernel killed processes of its group for memory (the group's
 * own count, read by the wrapper: lib/executors/local/cgroup.ts). `"logLostBytes":N` when the
 * log could not take N bytes of the attempt's output (a full disk: the log pump's count,
 * lib/executors/log-pump.ts; the log has a marker line where they went missing).
 */
export interface ExitRecord {
  phase: 'setup' | 'run';
  exitCode: number;
  endedAtMs: number;
  /** Set by the wrapper when it ended the attempt itself (missing workdir, cancel, log file). */
  reason?: string;
  /** A multi-node attempt's: the rank whose end decided. */
  rank?: number;
  /**
   * CPU time (user + system, ms) of what the wrapper waited for — setup, run and what they waited
   * for — from the kernel's record of its children (bash's `times`): the attempt's final CPU
   * reading, taken at its end (docs/design.md §7 "Resource usage"). Absent from older records
   * and multi-node ones.
   */
  cpuMs?: number;
  /** Processes of the attempt's control group the kernel killed for memory (absent: none, or no group). */
  oomKills?: number;
  /** Bytes of output its log could not take (a full disk; docs/design.md §8). Absent: none lost. */
  logLostBytes?: number;
}

/**
 * The bytes the log pump counted as lost for the record named `exitName` in `recordDir`
 * (`<exitName>.lost`: a fixed-width number the pump keeps; lib/executors/log-pump.ts); 0 when
 * there is none or it is unreadable. For an exit record written without the wrapper (it could
 * not write its own: a full disk).
 */
export function readLostBytes(recordDir: string, exitName: string = EXIT_FILE): number {
  try {
    const t = readRecordFile(path.join(recordDir, exitName + LOST_SUFFIX), 64);
    const n = t === null ? NaN : Number(t.trim());
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}

/**
 * Reads the exit record of the attempt in `attemptDir` (`exit`, in recordDirOf's folder), never
 * through a link, a FIFO or a file larger than a record.
 * @returns the record; null when there is none yet; `{ malformed }` when the file is unreadable
 *   as an exit record (never seen with the atomic rename; reported as a lost attempt).
 * @throws for I/O errors other than "no such file".
 */
export function readExitRecord(attemptDir: string): ExitRecord | null | { malformed: string } {
  let file = path.join(recordDirOf(attemptDir), EXIT_FILE);
  let text: string;
  try {
    let t = readRecordFile(file, MAX_RECORD_BYTES);
    if (t === null) {
      // Not renamed yet, or never: a wrapper whose parent was to publish it (the local launcher)
      // leaves it under its temporary name when that parent dies first. Whole, it is the record.
      const tmp = readRecordFile(`${file}${TMP_SUFFIX}`, MAX_RECORD_BYTES);
      if (tmp === null || !isWholeRecordText(tmp)) return null;
      [file, t] = [`${file}${TMP_SUFFIX}`, tmp];
    }
    text = t;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== undefined) throw err;
    return { malformed: (err as Error).message };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { malformed: `exit file ${file} is not JSON: ${JSON.stringify(text.slice(0, 200))}` };
  }
  const rec = data as Partial<ExitRecord> | null;
  if (!rec || (rec.phase !== 'setup' && rec.phase !== 'run') || !Number.isInteger(rec.exitCode)) {
    return { malformed: `exit file ${file} is not an exit record: ${JSON.stringify(text.slice(0, 200))}` };
  }
  let endedAtMs = Number(rec.endedAtMs);
  if (!Number.isFinite(endedAtMs) || endedAtMs <= 0) {
    try {
      endedAtMs = lstatSync(file).mtimeMs;
    } catch {
      endedAtMs = Date.now();
    }
  }
  const out: ExitRecord = { phase: rec.phase, exitCode: rec.exitCode as number, endedAtMs };
  if (typeof rec.reason === 'string') out.reason = rec.reason;
  if (Number.isInteger(rec.rank) && (rec.rank as number) >= 0) out.rank = rec.rank;
  // A gang's record copies the deciding rank's: one rank's CPU time is not the attempt's.
  const gang = Number((rec as { nodes?: unknown }).nodes) > 1;
  if (!gang && typeof rec.cpuMs === 'number' && Number.isFinite(rec.cpuMs) && rec.cpuMs >= 0) out.cpuMs = rec.cpuMs;
  if (Number.isInteger(rec.oomKills) && (rec.oomKills as number) > 0) out.oomKills = rec.oomKills;
  if (Number.isSafeInteger(rec.logLostBytes) && (rec.logLostBytes as number) > 0) out.logLostBytes = rec.logLostBytes;
  return out;
}

/** The temporary name an exit record is written under before its rename (`exit.tmp`). */
export const TMP_SUFFIX = '.tmp';

/**
 * Whether the text at an exit record's temporary name is a whole record: one line of JSON, an
 * object, ended by its newline — what the wrapper's one printf writes last (before it, the file
 * holds the `times` builtin's output; a write cut short has no newline or no closing brace).
 * The launcher (lib/executors/local/launcher-main.mjs) applies the same rule before it renames.
 */
export function isWholeRecordText(text: string): boolean {
  if (!text.endsWith('}\n') || text.indexOf('\n') !== text.length - 1) return false;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** How an attempt ended, as probe()/watch() report it. */
export type EndResult = Exclude<ProbeResult, { state: 'running' }>;

/** An exit record as a probe result (a malformed record is a lost attempt). Shared with Slurm. */
export function toResult(rec: ExitRecord | { malformed: string }): EndResult {
  if ('malformed' in rec) return { state: 'lost', reason: rec.malformed };
  const r: EndResult = { state: 'exited', phase: rec.phase, exitCode: rec.exitCode, endedAt: new Date(rec.endedAtMs) };
  if (rec.reason) r.reason = rec.reason;
  if (rec.rank !== undefined) r.rank = rec.rank;
  if (rec.cpuMs !== undefined && r.state === 'exited') r.cpuMs = rec.cpuMs;
  if (rec.logLostBytes !== undefined && r.state === 'exited') r.logLostBytes = rec.logLostBytes;
  // Out of memory is the group's own count, and only for an attempt that failed: a task that
  // caught a child's OOM kill and went on to succeed succeeded.
  if (rec.oomKills && rec.exitCode !== 0) r.limit = 'memory';
  return r;
}

/**
 * Watches one attempt for its end, for every executor whose attempts write the exit record
 * (local, Slurm): `direct` may offer an immediate notification (the local parent's child 'exit'
 * event); otherwise the attempt folder is watched for the rename exit.tmp → exit (fs.watch), and
 * `probe` is polled every `pollMs` as a fallback that also sees `lost`. Calls `listener` at most
 * once and never from inside this call. Returns the unsubscribe function.
 */
export function watchExitRecord(
  handle: AttemptHandle,
  listener: ExitListener,
  o: {
    name: string;
    probe: (h: AttemptHandle) => Promise<ProbeResult>;
    pollMs: number;
    direct?: (fire: (r: EndResult) => void) => (() => void) | null;
  },
): () => void {
  let done = false;
  const cleanups: Array<() => void> = [];
  const stop = () => {
    done = true;
    for (const c of cleanups.splice(0)) c();
  };
  const fire = (r: EndResult) => {
    if (done) return;
    stop();
    try {
      listener(r);
    } catch (err) {
      logger().error({ err, ref: handle.ref }, `${o.name}: exit listener threw`);
    }
  };
  const direct = o.direct?.(fire);
  if (direct) {
    cleanups.push(direct);
    return stop;
  }
  const checkFile = () => {
    if (done) return;
    try {
      const rec = readExitRecord(handle.attemptDir);
      if (rec) fire(toResult(rec));
    } catch {
      /* the poll will retry */
    }
  };
  try {
    const w: FSWatcher = fsWatch(recordDirOf(handle.attemptDir), { persistent: false }, (_event, filename) => {
      if (!filename || filename === EXIT_FILE) checkFile();
    });
    w.on('error', () => w.close());
    cleanups.push(() => w.close());
  } catch {
    /* no such folder or no inotify: the poll alone decides */
  }
  let probing = false;
  let failures = 0;
  const poll = async () => {
    if (done || probing) return;
    probing = true;
    try {
      const r = await o.probe(handle);
      failures = 0;
      if (r.state !== 'running') fire(r);
    } catch (err) {
      // A backend outage fails every poll: say so once, then every 100th time.
      if (failures++ % 100 === 0) logger().warn({ err, ref: handle.ref, failures }, `${o.name}: probe failed in watch; will retry`);
    } finally {
      probing = false;
    }
  };
  // poll() handles its own failures (logged above): fire and forget.
  const timer = setInterval(() => void poll(), o.pollMs);
  timer.unref();
  cleanups.push(() => clearInterval(timer));
  // First look right away (asynchronously: the listener is never called from inside watch()).
  setImmediate(() => void poll());
  return stop;
}
