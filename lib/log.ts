import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { setting } from './config';

let instance: Logger | undefined;

/** Most JSON log text held back before the server listens (then it is written out anyway). */
const MAX_HELD_BYTES = 1024 * 1024;
/** JSON log lines held back while `holding` (holdLogUntilListening), in order. */
let held: string[] | null = null;
let heldBytes = 0;

/** Writes held lines out and stops holding. */
function releaseHeld(): void {
  flushTurn();
  const lines = held;
  held = null;
  heldBytes = 0;
  if (lines?.length) process.stdout.write(lines.join(''));
}

/**
 * JSON lines of this turn of the event loop, written together at its end (flushTurn): stdout to
 * a file or a pipe is written synchronously, one system call per write — a job's submit and
 * transitions log a few lines each, and at 50 launches a second their writes alone took ~0.6 ms
 * of the server's thread per job (bench/README.md). Written at once on exit.
 */
let turn: string[] = [];
let turnScheduled = false;

function flushTurn(): void {
  turnScheduled = false;
  if (turn.length === 0) return;
  const lines = turn.join('');
  turn = [];
  process.stdout.write(lines);
}

/** The JSON destination: stdout (a turn's lines at a time), or the hold buffer while the server starts. */
const jsonOut = {
  write(line: string): void {
    if (!held) {
      turn.push(line);
      if (!turnScheduled) {
        turnScheduled = true;
        setImmediate(flushTurn).unref();
      }
      return;
    }
    held.push(line);
    heldBytes += line.length;
    if (heldBytes > MAX_HELD_BYTES) releaseHeld();
  },
};

/**
 * Every module copy's flushTurn (a Next route bundle carries its own copy of this module), run by
 * one exit listener per process — one listener per copy would pass Node's limit of 10 and warn.
 */
const FLUSHES = Symbol.for('jobdeck.log.flushes');
const registry = globalThis as { [FLUSHES]?: Set<() => void> };
if (!registry[FLUSHES]) {
  const flushes = new Set<() => void>();
  registry[FLUSHES] = flushes;
  process.on('exit', () => flushes.forEach((f) => f()));
}
registry[FLUSHES].add(flushTurn);

/**
 * Holds the JSON log lines back until announceListening() (or the process exits), so that when
 * stdout is not a terminal the server's first lines are plain text a person reads: where it
 * listens and how to log in. No effect with pretty output (already readable as it comes).
 */
export function holdLogUntilListening(): void {
  if (wantsPretty() || held) return;
  held = [];
  process.once('exit', releaseHeld);
}

/**
 * The server listens: with JSON output, `lines` are written as plain text first, then the JSON
 * lines held since holdLogUntilListening(); with pretty output nothing more is written (the
 * logger already said it) but the `unlogged` lines — those the logger was not given (a secret:
 * the first start's login URL), written plain in either case. Also call it (with no lines)
 * before exiting on a failed start.
 */
export function announceListening(lines: readonly string[], unlogged: readonly string[] = []): void {
  flushTurn();
  if (held === null) {
    if (unlogged.length) process.stdout.write(unlogged.map((l) => `${l}\n`).join(''));
    return;
  }
  if (lines.length) process.stdout.write(lines.map((l) => `${l}\n`).join(''));
  releaseHeld();
}

/** Pretty output: JOBDECK_LOG_PRETTY=1, or stdout is a terminal (unless JOBDECK_LOG_PRETTY=0). */
function wantsPretty(): boolean {
  const wanted = setting('JOBDECK_LOG_PRETTY');
  return wanted !== null ? wanted === '1' : !!process.stdout.isTTY;
}

/**
 * The structured logger (pino), created on first use from the environment. JSON lines by
 * default (held back while the server starts: holdLogUntilListening); pretty, coloured lines
 * when stdout is a terminal or `JOBDECK_LOG_PRETTY=1`. Level from
 * `JOBDECK_LOG_LEVEL` (default info; `silent` in tests unless set). Uses a synchronous pretty
 * stream, not a worker transport, so it works the same inside Next.js route bundles and the
 * custom server. It is configuration, not state: a route bundle's own module copy makes an
 * identical logger writing to the same stdout (docs/design.md §9, "Wiring and dependencies").
 */
export function logger(): Logger {
  return (instance ??= createLogger());
}

function createLogger(): Logger {
  const level = setting('JOBDECK_LOG_LEVEL') ?? (process.env.VITEST ? 'silent' : 'info');
  const opts = { level, base: { pid: process.pid }, name: 'jobdeck' };
  if (wantsPretty()) {
    return pino(opts, pretty({ colorize: !!process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', sync: true }));
  }
  return pino(opts, jsonOut);
}
