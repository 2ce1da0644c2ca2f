import type { CliContext } from '../context';
import { followJob, OUTPUT_CLOSED, type FollowResult } from '../follow';

/** Options of runFollow. */
export interface RunFollowOptions {
  scope?: { task: number; attempt?: number };
  follow: boolean;
  /** `--raw`: log bytes exactly as written even on a terminal. */
  raw?: boolean;
}

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
      reconnectTimeoutMs: ctx.reconnectTimeoutMs(),
      debug: !!ctx.io.env.JOBDECK_DEBUG,
      raw: opts.raw,
    });
  } finally {
    off();
    ctx.io.stdout.off?.('error', onOutError);
  }
  return res.exitCode;
}
