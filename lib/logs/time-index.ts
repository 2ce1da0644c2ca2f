import { closeSync, openSync, readSync, statSync, watch, type FSWatcher } from 'node:fs';
import { appendFile, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { timesPath } from '../jobs/paths';
import { localDevice } from './local-fs';
import type { TimeEntry } from './protocol';

/**
 * The time index of attempt logs (docs/design.md §8, "Line times"): beside each log file a
 * sidecar (`run.times`, lib/jobs/paths.ts timesPath) of text lines `<end> <ms>\n`, one per time
 * the log was seen to grow — bytes [previous end, end) of the log were first seen at unix time
 * `ms` (the file's mtime when it is older than the moment of the look, so the time is when the
 * task wrote them, not when jobdeck looked). The server writes it while an attempt runs
 * (LogTimeIndexer, started and stopped by the monitor beside its exit watch), so the index
 * exists whoever watches, local or Slurm (the log on the shared folder). Bounded: at most one
 * entry per indexGapMs(count) — 100 ms for the first 10,000 entries, then coarser — and none past
 * MAX_TIME_ENTRIES (~1 MB of text). Readers (the job stream) read it by byte position like a log.
 */

/** Most entries one log's index holds; past it the log's later bytes share the last time. */
export const MAX_TIME_ENTRIES = 40_000;

/**
 * The least time (ms) between two entries of an index that holds `count` entries: 100 ms up
 * to 10,000 entries, then 1 s, 10 s up to 30,000, 60 s after; Infinity at MAX_TIME_ENTRIES.
 */
export function indexGapMs(count: number): number {
  if (count >= MAX_TIME_ENTRIES) return Infinity;
  if (count < 10_000) return 100;
  if (count < 20_000) return 1_000;
  if (count < 30_000) return 10_000;
  return 60_000;
}

/**
 * Parses sidecar text: complete lines `<end> <ms>` only (a torn last line without its newline is
 * left for later); entries whose end does not grow or whose time goes back are skipped, so the
 * answer is strictly increasing in end and non-decreasing in ms after `last`.
 * @returns the entries and how many bytes of `text` were consumed (through its last newline).
 */
export function parseTimes(text: string, last: TimeEntry | null = null): { entries: TimeEntry[]; consumed: number } {
  const entries: TimeEntry[] = [];
  const nl = text.lastIndexOf('\n');
  if (nl < 0) return { entries, consumed: 0 };
  let prev = last;
  for (const line of text.slice(0, nl).split('\n')) {
    const m = /^([0-9]{1,15}) ([0-9]{1,15})$/.exec(line);
    if (!m) continue;
    const e: TimeEntry = [Number(m[1]), Number(m[2])];
    if (prev && (e[0] <= prev[0] || e[1] < prev[1])) continue;
    entries.push(e);
    prev = e;
  }
  // The index is ASCII: characters are bytes.
  return { entries, consumed: nl + 1 };
}

/**
 * The entry to append when a look at `now` finds the log `size` bytes long with mtime `mtimeMs`,
 * the index holding `count` entries, the last `last`: null when the log did not grow, or when
 * the last entry is too recent (`final` looks — the attempt ended — ignore the gap, not the cap).
 * The time is the mtime, kept within [last time, now] (a remote node's clock may be ahead).
 */
export function nextEntry(size: number, mtimeMs: number, now: number, last: TimeEntry | null, count: number, final = false): TimeEntry | null {
  if (size <= (last?.[0] ?? 0) || count >= MAX_TIME_ENTRIES) return null;
  if (!final && last && now - last[1] < indexGapMs(count)) return null;
  const ms = Math.max(last?.[1] ?? 0, Math.min(Math.floor(mtimeMs), now));
  return [size, ms];
}

/** One log file the indexer follows. */
interface Tracked {
  file: string;
  sidecar: string;
  last: TimeEntry | null;
  count: number;
  /** The sidecar ends without a newline (a torn write): start the next append with one. */
  torn: boolean;
  /** Adopted without an index: bytes the first look finds have no known time (entry ms 0). */
  unknownBefore: boolean;
  loaded: Promise<void>;
  watcher: FSWatcher | null;
  /** The log is on a local file system (its watcher sees every write): polled only rarely while watched. */
  local: boolean;
  /** `local` was decided (on the first look that found the file). */
  localKnown: boolean;
  poll: NodeJS.Timeout | null;
  later: NodeJS.Timeout | null;
  busy: Promise<void> | null;
  again: boolean;
  /** When the last look began (ms): looks are at most one per gap. */
  lastLook: number;
  stopped: boolean;
}

/** Options of a LogTimeIndexer (tests shorten them). */
export interface TimeIndexerOptions {
  /**
   * How often each log is looked at besides fs.watch (ms; default 500) — while it has no watcher,
   * or is on a file system where a watcher may miss writes (a shared cluster folder).
   */
  pollMs?: number;
  /**
   * How often a log on a local file system with a live watcher is looked at anyway (ms; default
   * 30,000): a safety net only, the watcher sees every write there. With 1,000 running attempts
   * the 500 ms poll was 2,000 stat calls a second of the server's steady CPU (bench/README.md).
   */
  watchedPollMs?: number;
  /** Called with errors the indexer survives (a full disk…); default: ignored. */
  onError?: (err: unknown, file: string) => void;
}

/**
 * Writes the time index of the logs of running attempts (see the module comment). track() a log
 * when its attempt is launched or adopted, finish() it when the attempt's end is seen (one last
 * look, then stop), close() when the server stops. Never throws: an index is a convenience, and
 * a log without one (or with a gap) only shows no times.
 */
export class LogTimeIndexer {
  private readonly logs = new Map<string, Tracked>();
  /** finish() calls whose last look is still being written. */
  private readonly finishing = new Set<Promise<void>>();
  private readonly finishingFiles = new Set<string>();
  private readonly pollMs: number;
  private readonly watchedPollMs: number;
  /** Looks begun (each one stat of the log): for tests and diagnostics. */
  looks = 0;
  private readonly onError: (err: unknown, file: string) => void;

  constructor(opts: TimeIndexerOptions = {}) {
    this.pollMs = opts.pollMs ?? 500;
    this.watchedPollMs = opts.watchedPollMs ?? 30_000;
    this.onError = opts.onError ?? (() => undefined);
  }

  /**
   * Starts indexing `file` (idempotent). `fresh`: the attempt was just launched, so whatever the
   * first look finds was written just now; otherwise (an attempt adopted after a restart) bytes
   * found in a log that has no index yet get an entry of time 0 — unknown, shown as no time.
   */
  track(file: string, fresh: boolean): void {
    if (this.logs.has(file)) return;
    const t: Tracked = { file, sidecar: timesPath(file), last: null, count: 0, torn: false, unknownBefore: !fresh, loaded: Promise.resolve(), watcher: null, local: false, localKnown: false, poll: null, later: null, busy: null, again: false, lastLook: 0, stopped: false };
    this.logs.set(file, t);
    // A log just launched has no index yet: reading for one is a failed open per launch.
    t.loaded = fresh ? Promise.resolve() : this.load(t);
    this.schedulePoll(t);
    this.look(t);
  }

  /** The next poll of `t`: soon while no watcher can be trusted with its writes, rarely once one can. */
  private schedulePoll(t: Tracked): void {
    if (t.stopped) return;
    if (t.poll) clearTimeout(t.poll);
    t.poll = setTimeout(
      () => {
        t.poll = null;
        this.look(t);
        this.schedulePoll(t);
      },
      t.watcher && t.local ? this.watchedPollMs : this.pollMs,
    );
    t.poll.unref();
  }

  /** Files being indexed. */
  get size(): number {
    return this.logs.size;
  }

  /** True while `file` is indexed or its last look is being written (it still reads the log's size). */
  isIndexing(file: string): boolean {
    return this.logs.has(file) || this.finishingFiles.has(file);
  }

  /** One last look at `file` (its attempt ended: no gap applies), then stops indexing it. */
  async finish(file: string): Promise<void> {
    const t = this.logs.get(file);
    if (!t) return;
    this.stop(t);
    // Kept until written: close() waits for it, so no index write outlives the server's stop
    // (a caller may remove the attempt's folder right after).
    const last = (async () => {
      await t.loaded;
      await t.busy;
      await this.sample(t, true);
    })();
    this.finishing.add(last);
    this.finishingFiles.add(file);
    try {
      await last;
    } finally {
      this.finishing.delete(last);
      this.finishingFiles.delete(file);
    }
  }

  /** Stops every log (the server stops; running attempts are tracked again on the next start) and waits for the last looks in flight. */
  async close(): Promise<void> {
    const all = [...this.logs.values()];
    for (const t of all) this.stop(t);
    await Promise.all([...all.map((t) => t.busy ?? Promise.resolve()), ...this.finishing]);
  }

  private stop(t: Tracked): void {
    t.stopped = true;
    this.logs.delete(t.file);
    t.watcher?.close();
    t.watcher = null;
    if (t.poll) clearTimeout(t.poll);
    if (t.later) clearTimeout(t.later);
  }

  /** Reads an index left by an earlier server (or an earlier track) so appends continue it. */
  private async load(t: Tracked): Promise<void> {
    try {
      const text = await readFile(t.sidecar, 'utf8');
      const { entries } = parseTimes(text);
      t.count = entries.length;
      t.last = entries.at(-1) ?? null;
      t.torn = text.length > 0 && !text.endsWith('\n');
      t.unknownBefore = false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.onError(err, t.file);
    }
  }

  /**
   * A look, coalesced and paced: one sample at a time per log and at most one per gap (a log
   * written at full speed fires fs.watch constantly; looking more often than entries may be
   * written would only cost the server's event loop), the one asked for meanwhile done after.
   */
  private look(t: Tracked): void {
    if (t.stopped || t.later) return;
    if (t.busy) {
      t.again = true;
      return;
    }
    const gap = indexGapMs(t.count);
    if (gap === Infinity) return;
    const wait = t.lastLook + gap - Date.now();
    if (wait > 0) {
      t.later = setTimeout(() => {
        t.later = null;
        this.look(t);
      }, wait);
      t.later.unref();
      return;
    }
    t.lastLook = Date.now();
    this.looks++;
    t.busy = (async () => {
      await t.loaded;
      await this.sample(t, false);
    })().finally(() => {
      t.busy = null;
      if (t.again) {
        t.again = false;
        this.look(t);
      }
    });
  }

  private async sample(t: Tracked, final: boolean): Promise<void> {
    try {
      if (!t.watcher && !t.stopped) this.watchFile(t);
      const st = await stat(t.file).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
      if (!st) {
        // No log yet: nothing was written before this look, so nothing of it has an unknown time.
        t.unknownBefore = false;
        return;
      }
      if (!t.localKnown) {
        t.localKnown = true;
        t.local = await localDevice(st.dev, path.dirname(t.file));
        // Watched on a local file system: the poll slows down.
        if (t.local && t.watcher) this.schedulePoll(t);
      }
      const now = Date.now();
      const unknown = t.unknownBefore && st.size > 0;
      t.unknownBefore = false;
      const e = unknown ? ([st.size, 0] as TimeEntry) : nextEntry(st.size, st.mtimeMs, now, t.last, t.count, final);
      if (!e) {
        // Grew too soon after the last entry: look again when the gap allows.
        if (!final && st.size > (t.last?.[0] ?? 0)) t.again = true;
        return;
      }
      await appendFile(t.sidecar, `${t.torn ? '\n' : ''}${e[0]} ${e[1]}\n`, { mode: 0o600 });
      t.torn = false;
      t.last = e;
      t.count++;
    } catch (err) {
      this.onError(err, t.file);
    }
  }

  private watchFile(t: Tracked): void {
    try {
      t.watcher = watch(t.file, { persistent: false }, () => this.look(t));
      t.watcher.on('error', () => {
        t.watcher?.close();
        t.watcher = null;
        // No watcher: the poll looks often again (the next look tries a new watcher).
        this.schedulePoll(t);
      });
      // Watched from now on: on a local file system the poll slows down.
      if (t.local) this.schedulePoll(t);
    } catch {
      // Not there yet (or no inotify on this file system): the poll looks until it is.
      t.watcher = null;
    }
  }
}

/** Most bytes of an index one read() takes (the rest comes with the next). */
const READ_MAX = 1 << 20;
/** Reads of a local index up to this many bytes are synchronous (~40 µs); longer ones go off the loop. */
const SYNC_READ_MAX = 64 * 1024;

/**
 * Reads a log's time index by byte position as it grows (the job stream's side): each read()
 * answers the complete entries appended since the last one that cover bytes at or after `from`
 * (the stream's start offset). A missing index (an attempt from before indexes, or not written
 * yet) answers nothing.
 */
export class TimesReader {
  private pos = 0;
  private last: TimeEntry | null = null;
  /** The index is on a local file system (lib/logs/local-fs.ts): stat and small reads go synchronously. */
  private local: boolean | null = null;

  constructor(
    private readonly file: string,
    private readonly from: number,
  ) {}

  /** The entries appended since the last read (covering bytes ≥ `from`). Never throws. */
  async read(): Promise<TimeEntry[]> {
    try {
      if (this.local === null) {
        const dir = path.dirname(this.file);
        this.local = await localDevice((await stat(dir)).dev, dir);
      }
      // An attempt's end is streamed after this read (docs/design.md §8): on a local disk the stat
      // and a small read are microseconds, while two turns of a busy event loop were ~6 ms of the
      // exit → job stream latency (bench/README.md).
      if (this.local) return await this.readLocal();
      const size = (await stat(this.file)).size;
      if (size <= this.pos) return [];
      return await this.readOff(size);
    } catch {
      return [];
    }
  }

  /** The new bytes of an index `size` bytes long, read off the loop. */
  private async readOff(size: number): Promise<TimeEntry[]> {
    const want = Math.min(size - this.pos, READ_MAX);
    const buf = Buffer.alloc(want);
    const fh = await open(this.file, 'r');
    try {
      return this.take(buf.subarray(0, (await fh.read(buf, 0, want, this.pos)).bytesRead));
    } finally {
      await fh.close();
    }
  }

  /** read() on a local file system: a stat, then the new bytes — synchronously while they are few. */
  private async readLocal(): Promise<TimeEntry[]> {
    const size = statSync(this.file).size;
    if (size <= this.pos) return [];
    if (size - this.pos > SYNC_READ_MAX) return this.readOff(size);
    const buf = Buffer.alloc(size - this.pos);
    const fd = openSync(this.file, 'r');
    try {
      return this.take(buf.subarray(0, readSync(fd, buf, 0, buf.length, this.pos)));
    } finally {
      closeSync(fd);
    }
  }

  private take(bytes: Buffer): TimeEntry[] {
    const { entries, consumed } = parseTimes(bytes.toString('latin1'), this.last);
    this.pos += consumed;
    if (entries.length) this.last = entries.at(-1)!;
    return entries.filter((e) => e[0] > this.from);
  }
}
