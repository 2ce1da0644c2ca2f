import { setting } from '../../config';
import type { CliContext } from '../context';
import { followJob, OUTPUT_CLOSED, type FollowResult } from '../follow';

/** Options of runFollow. */
export interface RunFollowOptions {
  scope?: { task: number; attempt?: number };
  follow: boolean;
  /** `--raw`: log bytes exactly as written even on a terminal. */
  raw?: boolean;
  /** `--reconnect-timeout`: how long to keep reconnecting to a lost server (ms). */
  reconnectTimeoutMs?: number;
  /** `--rank K`: only rank K's log of multi-node attempts. */
  rank?: number;
  /** `--timestamps`: each log line prefixed with the ISO time it was written. */
  timestamps?: boolean;
}

/** The `--reconnect-timeout` option of `logs` and `launch` (docs/cli.md, "Dropped connections"). */
export const RECONNECT_TIMEOUT_OPTION = ['--reconnect-timeout <duration>', 'keep reconnecting to a lost or restarting server this long before giving up (exit 5): 300 (seconds), 90s, 10m… (default 5m, or $JOBDECK_RECONNECT_TIMEOUT_MS)'] as const;

/**
 * Follows a job for `launch` and `logs`: wires Ctrl-C (and a closed stdout, e.g. `| head`) to
 * "stop following" and answers the exit code (lib/cli/exit-codes.ts).
 */
export async function runFollow(ctx: CliContext, jobId: number, opts: RunFollowOptions): Promise<number> {
  const conn = await ctx.connection();
  const ac = new AbortController();
  const off = ctx.io.onInterrupt(() => ac.abort());
  const onOutError = () => ac.abort(OUTPUT_CLOSED);
  ctx.io.stdout.on?.('error', onOutError);
  let res: FollowResult;
  try {
    res = await followJob({
      conn,
      jobId,
      scope: opts.scope,
      follow: opts.follow,
      stdout: ctx.io.stdout,
      stderr: ctx.io.stderr,
      colors: ctx.errColors,
      signal: ac.signal,
      reconnectTimeoutMs: opts.reconnectTimeoutMs ?? ctx.reconnectTimeoutMs(),
      debug: setting('JOBDECK_DEBUG', ctx.io.env) !== null,
      raw: opts.raw,
      rank: opts.rank,
      timestamps: opts.timestamps,
    });
  } finally {
    off();
    ctx.io.stdout.off?.('error', onOutError);
  }
  return res.exitCode;
}
