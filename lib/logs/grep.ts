import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { gzPathOf, openLog } from './source';

/**
 * Search across log files (docs/design.md "Log search"): ripgrep (`rg --json`, Debian's
 * `ripgrep`) when it is installed, else a streaming scan in Node — neither reads a file whole.
 * Matches come as they are found, each with its file, 1-based line number and the line's text
 * (cut at {@link MAX_MATCH_TEXT} characters); the search stops at `maxResults`, at `maxMs`, or
 * when `signal` aborts (rg is killed).
 *
 * A pattern is a literal string unless `regex` (rg's Rust syntax; the Node scan takes it as a
 * JavaScript RegExp with the `u` flag: the common subset — classes, alternation, anchors,
 * repetition, `\p{…}` — means the same). A pattern either engine cannot compile is refused before
 * the search starts (patternProblem()). Neither engine runs a pattern on the server's event loop:
 * rg is another process (its regex engine is linear in the text), and the Node scan matches in a
 * worker thread that is ended at the time limit — a backtracking pattern (`(a+)+$`) costs that
 * thread its time, no more; at most NODE_SCANS_AT_ONCE such threads run at once. Log files hold the attempt's bytes as written (the stream's framing is on the wire
 * only), so line numbers are the file's; a line is cut at `\n` (a `\r` stays in its text).
 *
 * A finished log may be compressed (docs/design.md §8 "Compressed logs": `run.log.gz` instead of
 * `run.log`). rg gets both names with `-z` (it inflates a `.gz` through the system's `gzip`) and
 * reports a log under whichever name it found — under one only: should it find both (the instant
 * between a compression's rename and its unlink), the matches of the name seen second are
 * dropped. The Node scan opens the log through openLog() (lib/logs/source.ts).
 */

/** One file to search, with what the caller needs to report it. */
export interface GrepFile<K> {
  path: string;
  key: K;
}

/** One matching line. */
export interface GrepMatch<K> {
  key: K;
  /** 1-based line number in the file. */
  line: number;
  /** The line without its newline, at most MAX_MATCH_TEXT characters. */
  text: string;
  /** True when `text` was cut. */
  cut: boolean;
}

/** Options of grepLogs(). */
export interface GrepOptions {
  pattern: string;
  /** `pattern` is a regular expression (default: a literal string). */
  regex?: boolean;
  ignoreCase?: boolean;
  /** Stop after this many matches. */
  maxResults: number;
  /** Stop after this long (ms). */
  maxMs: number;
  signal?: AbortSignal;
  /** Force an engine (tests, bench); default rg when installed. */
  engine?: 'rg' | 'node';
}

/** How a search ended. */
export interface GrepSummary {
  engine: 'rg' | 'node';
  matches: number;
  /** `done`: every file read; `limit`: maxResults reached; `time`: maxMs passed; `aborted`: signal. */
  reason: 'done' | 'limit' | 'time' | 'aborted';
}

/** Longest line text a match carries (a 10 MB line is not sent whole). */
export const MAX_MATCH_TEXT = 2000;

let rgAvailable: boolean | null = null;

/**
 * True when `rg` runs here, and `gzip` too — rg's `-z` runs it to search compressed logs, which
 * would otherwise be skipped without a word (checked once per process).
 */
export function hasRipgrep(): boolean {
  if (rgAvailable === null) rgAvailable = spawnSync('rg', ['--version'], { stdio: 'ignore' }).status === 0 && spawnSync('gzip', ['--version'], { stdio: 'ignore' }).status === 0;
  return rgAvailable;
}

/**
 * Why `pattern` cannot be searched with `engine` (default: the one grepLogs() would choose), or
 * null when it can: rg's own message for a regex rg refuses (`rg -e PATTERN` on an empty file,
 * a few ms), the JavaScript RegExp's for the Node scan. A literal pattern is always fine.
 */
export async function patternProblem(pattern: string, opts: { regex?: boolean; ignoreCase?: boolean; engine?: 'rg' | 'node' } = {}): Promise<string | null> {
  if (!opts.regex) return null;
  const engine = opts.engine ?? (hasRipgrep() ? 'rg' : 'node');
  if (engine === 'node') {
    try {
      new RegExp(pattern, opts.ignoreCase ? 'iu' : 'u');
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }
  return new Promise((resolve, reject) => {
    const child = spawn('rg', ['--no-config', '--no-messages', ...(opts.ignoreCase ? ['-i'] : []), '-e', pattern, '--', '/dev/null'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.once('error', reject);
    // 0: a match, 1: none — the pattern compiled; 2: rg refused it (or could not run).
    child.once('close', (code) => resolve(code === 2 ? stderr.trim().replace(/\s*\n\s*/g, ' ') || 'rg refused the pattern' : null));
  });
}

const cutText = (s: string) => (s.length > MAX_MATCH_TEXT ? { text: s.slice(0, MAX_MATCH_TEXT), cut: true } : { text: s, cut: false });

/**
 * Searches `files` (see the module comment), calling `onMatch` for each match in the order
 * found. @throws Error for a regex the Node scan cannot compile (rg reports its own on stderr as
 * an Error naming the pattern).
 */
export async function grepLogs<K>(files: readonly GrepFile<K>[], opts: GrepOptions, onMatch: (m: GrepMatch<K>) => void): Promise<GrepSummary> {
  const engine = opts.engine ?? (hasRipgrep() ? 'rg' : 'node');
  const ac = new AbortController();
  const stop = (why: GrepSummary['reason']) => {
    if (!ac.signal.aborted) ac.abort(why);
  };
  const timer = setTimeout(() => stop('time'), opts.maxMs);
  const onAbort = () => stop('aborted');
  opts.signal?.addEventListener('abort', onAbort);
  if (opts.signal?.aborted) stop('aborted');
  let matches = 0;
  const emit = (m: GrepMatch<K>) => {
    if (ac.signal.aborted) return;
    matches++;
    onMatch(m);
    if (matches >= opts.maxResults) stop('limit');
  };
  try {
    if (files.length && !ac.signal.aborted) await (engine === 'rg' ? viaRipgrep(files, opts, ac.signal, emit) : viaNode(files, opts, ac.signal, emit));
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
  return { engine, matches, reason: ac.signal.aborted ? (ac.signal.reason as GrepSummary['reason']) : 'done' };
}

/** rg's own argument list is bounded: files go in chunks. */
const RG_FILES_PER_RUN = 500;

/** rg's exit code 2 with nothing on stderr: only the errors `--no-messages` silences (a file not there). */
const quietFailure = (code: number | null, stderr: string) => code === 2 && stderr.trim() === '';

async function viaRipgrep<K>(files: readonly GrepFile<K>[], opts: GrepOptions, signal: AbortSignal, emit: (m: GrepMatch<K>) => void): Promise<void> {
  // Each log under both its names; the first name rg reports for a log is the one it keeps.
  const byPath = new Map<string, { key: K; log: number }>();
  files.forEach((f, log) => {
    byPath.set(f.path, { key: f.key, log });
    byPath.set(gzPathOf(f.path), { key: f.key, log });
  });
  const reportedAs = new Map<number, string>();
  for (let i = 0; i < files.length && !signal.aborted; i += RG_FILES_PER_RUN) {
    const chunk = files.slice(i, i + RG_FILES_PER_RUN).flatMap((f) => [f.path, gzPathOf(f.path)]);
    // --no-config: no user rc file; -a: logs may hold NULs; -z: a `.gz` is searched inflated; sorted by path is not needed.
    const args = ['--json', '--no-config', '--no-messages', '-a', '-z', ...(opts.regex ? [] : ['-F']), ...(opts.ignoreCase ? ['-i'] : []), '-e', opts.pattern, '--', ...chunk];
    await new Promise<void>((resolve, reject) => {
      const child = spawn('rg', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      // The line being received, in pieces: a 10 MB line arrives in ~160 of them, and joining
      // and scanning the whole of it again per piece made a search of one long line quadratic.
      let parts: string[] = [];
      let pending = 0;
      let stderr = '';
      const kill = () => child.kill('SIGKILL');
      signal.addEventListener('abort', kill);
      const take = (line: string) => {
        if (!line.startsWith('{"type":"match"')) return;
        const m = JSON.parse(line) as { data: { path: { text?: string }; line_number: number; lines: { text?: string; bytes?: string } } };
        const p = m.data.path.text;
        const hit = p === undefined ? undefined : byPath.get(p);
        if (hit === undefined) return;
        if ((reportedAs.get(hit.log) ?? p) !== p) return;
        reportedAs.set(hit.log, p!);
        const raw = m.data.lines.text ?? Buffer.from(m.data.lines.bytes ?? '', 'base64').toString('utf8');
        emit({ key: hit.key, line: m.data.line_number, ...cutText(raw.replace(/\r?\n$/, '')) });
      };
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        let from = 0;
        let nl;
        while ((nl = d.indexOf('\n', from)) >= 0 && !signal.aborted) {
          const line = parts.length ? parts.join('') + d.slice(from, nl) : d.slice(from, nl);
          parts = [];
          pending = 0;
          from = nl + 1;
          take(line);
        }
        if (from < d.length) {
          parts.push(from ? d.slice(from) : d);
          pending += d.length - from;
        }
        // A very long line arrives in pieces: keep only what the text needs plus the JSON around it.
        if (pending > 64 * 1024 * 1024) kill();
      });
      child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      child.once('error', (err) => {
        signal.removeEventListener('abort', kill);
        reject(err);
      });
      child.once('close', (code) => {
        signal.removeEventListener('abort', kill);
        // 0: matches, 1: none, 2: an error — a bad regex (on stderr), unless we killed it, or
        // only files not there (every log is named twice, one of them is always missing).
        if (code === 2 && !signal.aborted && !quietFailure(code, stderr)) reject(new Error(`rg: ${stderr.trim() || 'failed'} (pattern ${JSON.stringify(opts.pattern.slice(0, 100))})`));
        else resolve();
      });
    });
  }
}

/** Node scans running at once (each a worker thread that may use a CPU to its time limit); more wait their turn. */
export const NODE_SCANS_AT_ONCE = 2;
let nodeScans = 0;
const nodeScanTurns: Array<() => void> = [];

/** Waits for a Node scan's turn; false when `signal` ended the wait first. */
async function nodeScanTurn(signal: AbortSignal): Promise<boolean> {
  while (nodeScans >= NODE_SCANS_AT_ONCE) {
    if (signal.aborted) return false;
    await new Promise<void>((resolve) => {
      const go = () => {
        signal.removeEventListener('abort', go);
        resolve();
      };
      nodeScanTurns.push(go);
      signal.addEventListener('abort', go);
    });
  }
  if (signal.aborted) return false;
  nodeScans++;
  return true;
}

function endNodeScan(): void {
  nodeScans--;
  nodeScanTurns.shift()?.();
}

/**
 * Path of the matcher's worker program (lib/logs/grep-worker.mjs): beside this file when run
 * unbundled (tsx, vitest), else under the working directory — the lookup of lib/executors/launcher.ts.
 */
function grepWorkerProgram(): string {
  const candidates: string[] = [];
  try {
    candidates.push(path.join(path.dirname(fileURLToPath(import.meta.url)), 'grep-worker.mjs'));
  } catch {
    // bundled: import.meta.url is not a file URL
  }
  candidates.push(path.resolve(/*turbopackIgnore: true*/ process.cwd(), 'lib', 'logs', 'grep-worker.mjs'));
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`the log search's matcher is missing (looked for ${candidates.join(', ')})`);
  return found;
}

type WorkerReply = { matches: Array<{ line: number; text: string; cut: boolean }> } | { error: string };

/**
 * The Node scan: this thread reads each log (through openLog(), 256 KiB pieces) and hands the
 * pieces in turn to a worker thread that splits and matches them (lib/logs/grep-worker.mjs), so
 * a pattern that backtracks for ever blocks that thread only; the thread is ended when the
 * search stops (time, limit, abort).
 */
async function viaNode<K>(files: readonly GrepFile<K>[], opts: GrepOptions, signal: AbortSignal, emit: (m: GrepMatch<K>) => void): Promise<void> {
  if (!(await nodeScanTurn(signal))) return;
  const worker = new Worker(grepWorkerProgram(), { workerData: { pattern: opts.pattern, regex: !!opts.regex, ignoreCase: !!opts.ignoreCase, maxText: MAX_MATCH_TEXT }, stdout: false, stderr: false });
  let answer: ((r: WorkerReply | null) => void) | null = null;
  let failure: Error | null = null;
  const settle = (r: WorkerReply | null) => {
    const a = answer;
    answer = null;
    a?.(r);
  };
  worker.on('message', (r: WorkerReply) => settle(r));
  worker.on('error', (err) => {
    failure = err;
    settle(null);
  });
  let ending = false;
  worker.on('exit', (code) => {
    if (!ending && !signal.aborted) failure ??= new Error(`the log search's matcher thread ended (exit code ${code})`);
    settle(null);
  });
  const stop = () => settle(null);
  signal.addEventListener('abort', stop);
  /** Sends one piece; its matches, or null when the search stopped (or the thread failed) meanwhile. */
  const ask = (bytes: Uint8Array, end: 'no' | 'yes' | 'discard') =>
    new Promise<WorkerReply | null>((resolve) => {
      if (signal.aborted || failure) return resolve(null);
      answer = resolve;
      worker.postMessage({ bytes, end });
    });
  try {
    for (const f of files) {
      if (signal.aborted) return;
      if (!(await scanFile(f, ask, emit))) break;
    }
    if (failure) throw failure;
  } finally {
    ending = true;
    signal.removeEventListener('abort', stop);
    endNodeScan();
    void worker.terminate();
  }
}

const NO_BYTES = new Uint8Array(0);

/** The matcher could not run the pattern (a search checks it first: patternProblem()). */
class MatcherError extends Error {}

/**
 * Reads one log piece by piece and has each matched (`ask`); emits the matches with the log's
 * key. False when the search stopped meanwhile. A log removed or unreadable part-way reports
 * what was matched before (its unfinished last line is dropped).
 */
async function scanFile<K>(f: GrepFile<K>, ask: (bytes: Uint8Array, end: 'no' | 'yes' | 'discard') => Promise<WorkerReply | null>, emit: (m: GrepMatch<K>) => void): Promise<boolean> {
  const deliver = (r: WorkerReply | null): boolean => {
    if (!r) return false;
    if ('error' in r) throw new MatcherError(r.error);
    for (const m of r.matches) emit({ key: f.key, ...m });
    return true;
  };
  let stream;
  let end: 'yes' | 'discard' = 'yes';
  try {
    const src = await openLog(f.path, { sequential: true });
    if (!src) return true;
    stream = src.stream(await src.size());
    for await (const piece of stream as AsyncIterable<Buffer>) if (!deliver(await ask(piece, 'no'))) return false;
  } catch (err) {
    if (err instanceof MatcherError) throw err;
    end = 'discard';
  } finally {
    stream?.destroy();
  }
  return deliver(await ask(NO_BYTES, end));
}
