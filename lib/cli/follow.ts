/**
 * Follows a job over its WebSocket stream (`/ws/jobs/:id`, lib/logs/protocol.ts) and writes what
 * FollowRenderer makes of it: log bytes to stdout, markers to stderr. The bytes are exact unless
 * stdout is a terminal: then escape sequences other than colours are removed
 * (lib/cli/terminal-safe.ts; `raw` keeps them).
 *
 * The stream itself is the client library's (clients/ts/src/stream.ts): it survives a dropped
 * connection, reconnecting with backoff and resuming from the renderer's position (last task,
 * attempt and byte offset received), so nothing is lost and nothing is printed twice; after
 * `reconnectTimeoutMs` (5 min by default) without getting through it gives up and this says so
 * (STOPPED_FOLLOWING). A server that said it is restarting is knocked on at least once a second
 * (docs/cli.md, "Dropped connections"). Respects stdout backpressure (the socket pauses until
 * `drain`). Ctrl-C (the `signal`) stops following; the job keeps running.
 */
import { isTerminal } from '../jobs/status';
import {
  DEAD_AFTER_MS,
  DEFAULT_FOLLOW_RECONNECT_MS,
  HELLO_WITHIN_MS,
  JobdeckError,
  LogsRemovedError,
  PING_AFTER_MS,
  ReconnectPlan,
  RESTART_BACKOFF_MAX_MS,
  RESTART_CLOSE_CODES,
  UnreachableError,
  followStream,
  streamUrl,
  type Attempt as StreamAttempt,
  type StreamConsumer,
} from '../../clients/ts/src';
import { tokenRefusedHint, type Connection } from './config';
import { CliError } from './errors';
import { EXIT, exitCodeForStatus } from './exit-codes';
import { type Colors } from './format';
import { finalLine, FollowRenderer, type FollowOutcome, type Output } from './follow-render';
import { cliErrorOf, unreachableMessage } from './client';

export { DEAD_AFTER_MS, DEFAULT_FOLLOW_RECONNECT_MS, HELLO_WITHIN_MS, PING_AFTER_MS, ReconnectPlan, RESTART_BACKOFF_MAX_MS, RESTART_CLOSE_CODES, streamUrl };

/** How one connection ended (the library's; a fatal one carries its error). */
export type Attempt = StreamAttempt;

/** A writable the follower writes to (process.stdout / stderr, or a test sink). */
export interface Sink {
  write(chunk: string | Uint8Array): boolean;
  once(event: 'drain', cb: () => void): unknown;
  isTTY?: boolean;
}

/** Options of followJob. */
export interface FollowOptions {
  conn: Connection;
  jobId: number;
  scope?: { task: number; attempt?: number };
  /** false = `--no-follow`: print what exists and stop. */
  follow: boolean;
  stdout: Sink;
  stderr: Sink;
  colors: Colors;
  /** Aborted by Ctrl-C: stop following (exit STOPPED_FOLLOWING). */
  signal?: AbortSignal;
  /** Give up reconnecting after this many ms without a working connection (default DEFAULT_FOLLOW_RECONNECT_MS). */
  reconnectTimeoutMs?: number;
  /** Prints each connection and how it ended to stderr (JOBDECK_DEBUG). */
  debug?: boolean;
  /** Write the log bytes exactly even when stdout is a terminal (`--raw`). */
  raw?: boolean;
  /** Only this rank's log of multi-node attempts (`--rank K`); default every rank's, prefixed. */
  rank?: number;
  /** Prefix each log line with the ISO time it was written (`--timestamps`). */
  timestamps?: boolean;
}

/** What followJob ended with. */
export interface FollowResult {
  exitCode: number;
  outcome: FollowOutcome;
  /** How many times it connected (1 = no reconnect). */
  connections: number;
}

/** Abort reason meaning "stdout was closed" (e.g. `jobdeck logs 7 | head`): stop without a word. */
export const OUTPUT_CLOSED = 'output-closed';

/** The renderer as the stream's consumer: its outputs written, the socket paused while stdout is full. */
function rendererConsumer(r: FollowRenderer, opts: FollowOptions): StreamConsumer {
  const write = (outs: Output[]): void | Promise<void> => {
    let blocked = false;
    for (const o of outs) {
      const ok = o.to === 'out' ? opts.stdout.write(o.data) : opts.stderr.write(o.text);
      if (!ok && o.to === 'out') blocked = true;
    }
    if (blocked) return new Promise<void>((resolve) => opts.stdout.once('drain', resolve));
  };
  return {
    position: () => r.position(),
    since: () => r.since(),
    get done() {
      return r.done;
    },
    message: (msg) => write(r.message(msg)),
    chunk: (c) => write(r.chunk(c)),
    // Lines held for their time (--timestamps) go out once they waited long enough.
    tick: () => void write(r.tick()),
  };
}

/**
 * Follows job `jobId` until the end (or the scope's end), Ctrl-C, or giving up on a lost server.
 * @throws CliError NOT_FOUND (no such job), UNAUTHORIZED, UNREACHABLE (never connected),
 *   INTERNAL (protocol error). Stopping early is not thrown: it answers exitCode STOPPED_FOLLOWING.
 */
export async function followJob(opts: FollowOptions): Promise<FollowResult> {
  const sameTerminal = !!opts.stdout.isTTY && !!opts.stderr.isTTY;
  const terminalSafe = !!opts.stdout.isTTY && !opts.raw;
  const r = new FollowRenderer({ jobId: opts.jobId, scope: opts.scope, follow: opts.follow, colors: opts.colors, sameTerminal, terminalSafe, rank: opts.rank, timestamps: opts.timestamps });
  const c = opts.colors;
  let warned = false;
  let connections = 0;
  let end;
  try {
    end = await followStream(
      {
        url: opts.conn.url,
        token: opts.conn.token,
        tokenHint: tokenRefusedHint(opts.conn.tokenSource),
        jobId: opts.jobId,
        follow: opts.follow,
        rank: opts.rank,
        signal: opts.signal,
        reconnectTimeoutMs: opts.reconnectTimeoutMs ?? DEFAULT_FOLLOW_RECONNECT_MS,
        onHello: (at) => {
          if (!warned) return;
          warned = false;
          opts.stderr.write(`${c.dim(`↻ reconnected to jobdeck; resuming at task ${at.task}, attempt ${at.attempt}, byte ${at.offset}`)}\n`);
        },
        onAttempt: (url, res) => {
          connections++;
          if (opts.debug) opts.stderr.write(`[jobdeck debug] ${url} → ${JSON.stringify(res.kind === 'fatal' ? { kind: 'fatal', message: res.error.message } : res)}\n`);
        },
        onDropped: (res, wait, plan) => {
          if (opts.debug) opts.stderr.write(`[jobdeck debug] next try in ${wait} ms${plan.restarting ? ' (the server is restarting)' : ''}\n`);
          if (res.progressed) warned = false;
          if (!warned && (!res.progressed || plan.restarting)) {
            warned = true;
            const why = plan.restarting ? `: the server is restarting; reconnecting for up to ${formatWait(plan.timeoutMs)}…` : ` (${res.reason}); reconnecting…`;
            opts.stderr.write(`${c.yellow(`⚠ lost the connection to jobdeck${why}`)}\n`);
          }
        },
      },
      rendererConsumer(r, opts),
    );
  } catch (err) {
    if (err instanceof LogsRemovedError) return logsGone(opts, r, err.message, connections);
    // Refused at the very first try: nobody listens there.
    if (err instanceof UnreachableError) throw new CliError(unreachableMessage(opts.conn.url), EXIT.UNREACHABLE);
    if (err instanceof JobdeckError) throw cliErrorOf(err, opts.conn);
    throw err;
  }
  if (end.kind === 'aborted') return stopFollowing(opts, r, '', end.connections);
  if (end.kind === 'gave-up') return stopFollowing(opts, r, ` (lost the connection to ${opts.conn.url} for ${Math.round(end.timeoutMs / 1000)} s: ${end.reason})`, end.connections);
  const outcome = r.outcome();
  const exitCode = !opts.follow ? EXIT.OK : outcome.terminal && outcome.status ? exitCodeForStatus(outcome.status) : EXIT.OK;
  return { exitCode, outcome, connections: end.connections };
}

/** "5 min", "90 s" — a reconnect limit as the user reads it. */
function formatWait(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

/** Ends a follow early (Ctrl-C, closed stdout, server lost): flushes, says so, answers STOPPED_FOLLOWING. */
function stopFollowing(opts: FollowOptions, r: FollowRenderer, why: string, connections: number): FollowResult {
  // A closed stdout (`| head`) ends quietly, like any Unix filter; Ctrl-C and giving up say so
  // (after a colour reset the log may owe the terminal).
  if (opts.signal?.reason !== OUTPUT_CLOSED) {
    for (const o of r.flush()) if (o.to === 'out') opts.stdout.write(o.data);
    const ended = r.jobSummary() && isTerminal('job', r.jobSummary()!.status);
    const tail = ended
      ? `Stopped following job ${opts.jobId}${why}.`
      : `Stopped following job ${opts.jobId}${why}; it keeps running (\`jobdeck logs ${opts.jobId}\` follows it again, \`jobdeck cancel ${opts.jobId}\` stops it).`;
    opts.stderr.write(`\n${opts.colors.yellow(tail)}\n`);
  }
  return { exitCode: EXIT.STOPPED_FOLLOWING, outcome: r.outcome(), connections };
}

/**
 * The job's logs were removed by the retention policy (docs/design.md "Retention"): says so, then
 * the job's final status as the stream's hello told it, and answers OK — SkyPilot's `sky jobs
 * logs` of a job whose logs are gone does the same: there is nothing wrong to report.
 */
function logsGone(opts: FollowOptions, r: FollowRenderer, message: string, connections: number): FollowResult {
  for (const o of r.flush()) if (o.to === 'out') opts.stdout.write(o.data);
  opts.stderr.write(`${logsGoneLines(opts.jobId, message, r.jobSummary()?.status ?? null, opts.colors).join('\n')}\n`);
  return { exitCode: EXIT.OK, outcome: r.outcome(), connections };
}

/** What `jobdeck logs` prints for a job whose logs are gone: the server's message, then its final status. */
export function logsGoneLines(jobId: number, message: string, status: string | null, c: Colors): string[] {
  const said = message.startsWith(`job ${jobId}`) ? message : `job ${jobId}: ${message}`;
  return [c.yellow(`${said}; nothing to show.`), status ? finalLine(`Job ${jobId}`, status, c) : `Job ${jobId}: status unknown`];
}
