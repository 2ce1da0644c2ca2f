import { spawn, spawnSync } from 'node:child_process';
import { gzPathOf, openLog } from './source';

/**
 * Search across log files (docs/design.md "Log search"): ripgrep (`rg --json`, Debian's
 * `ripgrep`) when it is installed, else a streaming scan in Node — neither reads a file whole.
 * Matches come as they are found, each with its file, 1-based line number and the line's text
 * (cut at {@link MAX_MATCH_TEXT} characters); the search stops at `maxResults`, at `maxMs`, or
 * when `signal` aborts (rg is killed).
 *
 * A pattern is a literal string unless `regex` (rg's Rust syntax; the Node scan takes it as a
 * JavaScript RegExp: the common subset — classes, alternation, anchors, repetition — means the
 * same). Log files hold the attempt's bytes as written (the stream's framing is on the wire
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
      let buf = '';
      let stderr = '';
      const kill = () => child.kill('SIGKILL');
      signal.addEventListener('abort', kill);
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0 && !signal.aborted) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.startsWith('{"type":"match"')) continue;
          const m = JSON.parse(line) as { data: { path: { text?: string }; line_number: number; lines: { text?: string; bytes?: string } } };
          const p = m.data.path.text;
          const hit = p === undefined ? undefined : byPath.get(p);
          if (hit === undefined) continue;
          if ((reportedAs.get(hit.log) ?? p) !== p) continue;
          reportedAs.set(hit.log, p!);
          const raw = m.data.lines.text ?? Buffer.from(m.data.lines.bytes ?? '', 'base64').toString('utf8');
          emit({ key: hit.key, line: m.data.line_number, ...cutText(raw.replace(/\r?\n$/, '')) });
        }
        // A very long line arrives in pieces: keep only what the text needs plus the JSON around it.
        if (buf.length > 64 * 1024 * 1024) kill();
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

async function viaNode<K>(files: readonly GrepFile<K>[], opts: GrepOptions, signal: AbortSignal, emit: (m: GrepMatch<K>) => void): Promise<void> {
  const re = opts.regex ? new RegExp(opts.pattern, opts.ignoreCase ? 'i' : '') : null;
  const needle = opts.ignoreCase ? opts.pattern.toLowerCase() : opts.pattern;
  const test = (line: string) => (re ? re.test(line) : (opts.ignoreCase ? line.toLowerCase() : line).includes(needle));
  for (const f of files) {
    if (signal.aborted) return;
    await scanFile(f, test, signal, emit);
  }
}

/** Reads one log in 1 MiB pieces, line by line; a line longer than a piece is kept in parts up to what matching needs. */
async function scanFile<K>(f: GrepFile<K>, test: (line: string) => boolean, signal: AbortSignal, emit: (m: GrepMatch<K>) => void): Promise<void> {
  let carry = '';
  let line = 0;
  let stream;
  try {
    const src = await openLog(f.path, { sequential: true });
    if (!src) return;
    stream = src.stream(await src.size());
    stream.setEncoding('utf8');
    for await (const piece of stream as AsyncIterable<string>) {
      if (signal.aborted) break;
      const text = carry + piece;
      let start = 0;
      let nl;
      while ((nl = text.indexOf('\n', start)) >= 0) {
        line++;
        const l = text.slice(start, nl);
        if (test(l)) emit({ key: f.key, line, ...cutText(l.replace(/\r$/, '')) });
        start = nl + 1;
      }
      carry = text.slice(start);
    }
    if (carry && !signal.aborted) {
      line++;
      if (test(carry)) emit({ key: f.key, line, ...cutText(carry) });
    }
  } catch {
    // A log removed or unreadable meanwhile: nothing to report from it.
  } finally {
    stream?.destroy();
  }
}
