import { readFileSync, statSync, watch as fsWatch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { logger } from '../log';
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
 * What the wrapper records when the attempt ends, as one JSON line in `<attemptDir>/exit`
 * (written to `exit.tmp`, renamed, then fsynced with its folder before the wrapper exits):
 * `{"phase":"setup"|"run","exitCode":N,"endedAtMs":<epoch ms, wrapper's clock>[,"reason":"…"]}`.
 * `phase: "setup"` with a non-zero code means setup failed (or never started: missing workdir,
 * cancelled between setup and run) and run never started; `phase: "run"` carries run's code
 * (0 when run is null). A process killed by signal N exits 128+N (SIGTERM → 143). A multi-node
 * attempt's record (written by its batch script from the ranks' own) adds `"nodes":N` and, when a
 * rank's failure decided, `"rank":K` (lib/executors/slurm-gang.ts).
 */
export interface ExitRecord {
  phase: 'setup' | 'run';
  exitCode: number;
  endedAtMs: number;
  /** Set by the wrapper when it ended the attempt itself (missing workdir, cancel, log file). */
  reason?: string;
  /** A multi-node attempt's: the rank whose end decided. */
  rank?: number;
}

/**
 * Reads `<attemptDir>/exit`.
 * @returns the record; null when there is none yet; `{ malformed }` when the file is unreadable
 *   as an exit record (never seen with the atomic rename; reported as a lost attempt).
 * @throws for I/O errors other than "no such file".
 */
export function readExitRecord(attemptDir: string): ExitRecord | null | { malformed: string } {
  const file = path.join(attemptDir, EXIT_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
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
      endedAtMs = statSync(file).mtimeMs;
    } catch {
      endedAtMs = Date.now();
    }
  }
  const out: ExitRecord = { phase: rec.phase, exitCode: rec.exitCode as number, endedAtMs };
  if (typeof rec.reason === 'string') out.reason = rec.reason;
  if (Number.isInteger(rec.rank) && (rec.rank as number) >= 0) out.rank = rec.rank;
  return out;
}

/** How an attempt ended, as probe()/watch() report it. */
export type EndResult = Exclude<ProbeResult, { state: 'running' }>;

/** An exit record as a probe result (a malformed record is a lost attempt). Shared with Slurm. */
export function toResult(rec: ExitRecord | { malformed: string }): EndResult {
  if ('malformed' in rec) return { state: 'lost', reason: rec.malformed };
  const r: EndResult = { state: 'exited', phase: rec.phase, exitCode: rec.exitCode, endedAt: new Date(rec.endedAtMs) };
  if (rec.reason) r.reason = rec.reason;
  if (rec.rank !== undefined) r.rank = rec.rank;
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
    const w: FSWatcher = fsWatch(handle.attemptDir, { persistent: false }, (_event, filename) => {
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
