// jobdeck attempt launcher: a small, long-lived child of the server that starts attempt wrappers
// on its behalf (lib/executors/local/launcher.ts is the server side and documents the protocol).
//
// Why a separate process: a fork's cost grows with the forking process's memory (launcher.ts).
// Plain JavaScript with no imports beyond Node's own: it starts fast and never loads the server's
// code.
//
// Messages (IPC, JSON):
//   in:  {type:'spawn', id, file, args, cwd, env, handleFile, handle[, durable]}
//   out: {type:'spawned', id, pid, startTime} | {type:'failed', id, message, code}
//        {type:'exit', pid, code, signal}          (after the wrapper was reaped)
// 'spawned' is sent only after `handleFile` holds the attempt's handle (written to a temporary
// name, then renamed), so an attempt that runs always has its handle on disk, even if this process
// or the server dies right after the spawn. The wrapper is detached (setsid: its own session and
// process group) with stdio on /dev/null: it outlives this process and the server.
// `durable` (paths: the exit record, its folder): once the wrapper was reaped, a whole record at
// the record's temporary name (`<record>.tmp`) is renamed to it before the exit is reported, and
// both are fsynced after; the wrapper learns from __jobdeck_syncer (this pid) that it need start
// neither `mv` nor `sync` while this process is still its parent (lib/executors/wrapper.ts,
// docs/design.md §6).
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * Field 22 (starttime, clock ticks since boot) of /proc/<pid>/stat, or null. Same parsing as
 * parseProcStat in lib/executors/local/proc.ts (which owns the format): the fields after comm start at
 * the last ')'.
 */
function startTimeOf(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const rest = text.slice(text.lastIndexOf(')') + 1).trim().split(/\s+/);
  const st = rest[22 - 3];
  return st && /^\d+$/.test(st) ? st : null;
}

/**
 * Writes `text` into the handle file the server reserved before the spawn, without giving its
 * blocks back first (no O_TRUNC, then cut to length): the task may have filled the disk
 * meanwhile. Same rule as overwriteReserved in lib/executors/local/launch.ts.
 */
function overwriteReserved(file, text) {
  let fd;
  try {
    fd = openSync(file, 'r+');
  } catch {
    fd = openSync(file, 'w');
  }
  try {
    const b = Buffer.from(text);
    writeSync(fd, b, 0, b.length, 0);
    ftruncateSync(fd, b.length);
  } finally {
    closeSync(fd);
  }
}

/** fsyncs still running: the launcher ends only after them (a disconnect waits for them). */
let syncing = 0;
let leaving = false;

/**
 * fsyncs `paths` in order (a file, then the folder that names it), through the thread pool: the
 * wrapper's exit is already reported, so nothing waits for this but durability. A path that is
 * gone or fails is skipped: a missing record is the monitor's business, not this process's.
 */
async function makeDurable(paths) {
  syncing++;
  for (const p of paths) {
    let fh;
    try {
      fh = await open(p, 'r');
      await fh.sync();
    } catch {
      // gone (no record written) or an I/O error: nothing to make durable
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }
  if (--syncing === 0 && leaving) process.exit(0);
}

/**
 * Renames the wrapper's record from `<file>.tmp` to `file` when it is whole: one line of JSON, an
 * object, ended by its newline (the rule of isWholeRecordText in lib/executors/attempt-record.ts,
 * which owns the record). Anything else stays where it is: the server reads what is there, and
 * writes the record itself when the wrapper could not (a full disk). Never throws.
 */
function publish(file) {
  const tmp = `${file}.tmp`;
  try {
    // Never through a link, never blocking on a FIFO, never more than a record (the reader's rules).
    const fd = openSync(tmp, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    let text;
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > 64 * 1024) return;
      const b = Buffer.alloc(st.size);
      text = b.toString('utf8', 0, readSync(fd, b, 0, st.size, 0));
    } finally {
      closeSync(fd);
    }
    if (!text.endsWith('}\n') || text.indexOf('\n') !== text.length - 1) return;
    const v = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return;
    renameSync(tmp, file);
  } catch {
    // none (the wrapper renamed it itself, or wrote none), unreadable, or not JSON
  }
}

function send(msg) {
  if (process.connected) process.send(msg);
}

function launch(m) {
  let child;
  try {
    const env = Array.isArray(m.durable) ? { ...m.env, __jobdeck_syncer: String(process.pid) } : m.env;
    child = spawn(m.file, m.args, { detached: true, stdio: 'ignore', cwd: m.cwd, env });
  } catch (err) {
    send({ type: 'failed', id: m.id, message: err.message, code: err.code ?? null });
    return;
  }
  const pid = child.pid;
  if (pid === undefined) {
    child.once('error', (err) => send({ type: 'failed', id: m.id, message: err.message, code: err.code ?? null }));
    return;
  }
  // Synchronously, before this loop turns again: the child cannot have been reaped yet, so
  // /proc/<pid> exists even if the wrapper already finished (a zombie until we reap it).
  const startTime = startTimeOf(pid);
  if (startTime === null) {
    send({ type: 'failed', id: m.id, message: `started pid ${pid} but /proc/${pid}/stat is unreadable`, code: null });
    return;
  }
  child.once('exit', (code, signal) => {
    if (Array.isArray(m.durable)) publish(m.durable[0]);
    send({ type: 'exit', pid, code, signal });
    if (Array.isArray(m.durable)) void makeDurable(m.durable);
  });
  child.on('error', () => undefined); // reported through 'exit'; never crash the launcher
  try {
    const handle = { ...m.handle, ref: `${pid}:${startTime}`, pid, pidStartTime: startTime };
    overwriteReserved(`${m.handleFile}.tmp`, JSON.stringify(handle) + '\n');
    renameSync(`${m.handleFile}.tmp`, m.handleFile);
  } catch (err) {
    // The wrapper runs; the server learns its pid from this reply and can still cancel it.
    send({ type: 'spawned', id: m.id, pid, startTime, handleError: err.message });
    return;
  }
  send({ type: 'spawned', id: m.id, pid, startTime });
}

process.on('message', (m) => {
  if (m && m.type === 'spawn') launch(m);
});
// The server went away (exit, crash, kill -9): nothing left to do but the fsyncs under way. The
// wrappers keep running (those that end from now on sync their records themselves).
process.on('disconnect', () => {
  leaving = true;
  if (syncing === 0) process.exit(0);
});
// Ctrl-C in the server's terminal reaches this process too (same process group): the server
// decides when to stop; this process ends when the server disconnects.
process.on('SIGINT', () => undefined);
send({ type: 'ready' });
