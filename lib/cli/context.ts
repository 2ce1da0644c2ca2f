/**
 * What every command gets: the process streams (injectable for tests), the environment, the
 * resolved connection and a REST client, colour switches per stream.
 */
import { JobdeckClient } from './client';
import { cliSetting, type Connection, type GlobalOptions, resolveConnection } from './config';
import { colorEnabled, colors, type Colors } from './format';
import type { Sink } from './follow';

/** The process surroundings a command runs in. */
export interface CliIO {
  stdout: Sink & { on?(event: 'error', cb: (err: Error) => void): unknown; off?(event: 'error', cb: (err: Error) => void): unknown };
  stderr: Sink;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Current time (tests pin it). */
  now(): Date;
  /** Subscribes to Ctrl-C; answers an unsubscribe function. */
  onInterrupt(cb: () => void): () => void;
}

/** The real process. */
export function processIO(): CliIO {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    now: () => new Date(),
    onInterrupt(cb) {
      process.on('SIGINT', cb);
      process.on('SIGTERM', cb);
      return () => {
        process.off('SIGINT', cb);
        process.off('SIGTERM', cb);
      };
    },
  };
}

/** Per-invocation context handed to command actions. */
export class CliContext {
  private connP: Promise<Connection> | null = null;
  /** Colours for stdout (tables) and stderr (markers, errors). */
  readonly outColors: Colors;
  readonly errColors: Colors;

  constructor(
    readonly io: CliIO,
    private readonly globals: () => GlobalOptions,
  ) {
    this.outColors = colors(colorEnabled(io.stdout, io.env));
    this.errColors = colors(colorEnabled(io.stderr, io.env));
  }

  /** The server address and token (resolved once). */
  connection(): Promise<Connection> {
    return (this.connP ??= resolveConnection(this.globals(), this.io.env));
  }

  /**
   * A REST client for the resolved connection (the client library's, clients/ts). Idempotent requests whose connection drops are
   * retried for up to JOBDECK_RECONNECT_TIMEOUT_MS (as the follower's reconnects), with a notice
   * on stderr at the first retry of each request.
   */
  async client(): Promise<JobdeckClient> {
    return new JobdeckClient(await this.connection(), {
      env: this.io.env,
      retryTimeoutMs: this.reconnectTimeoutMs(),
      onRetry: (r) => {
        if (r.attempt === 1) this.err(this.errColors.yellow(`⚠ lost the connection to jobdeck (${r.cause}) during ${r.what}; retrying…`));
      },
    });
  }

  /**
   * JOBDECK_RECONNECT_TIMEOUT_MS when set (ms), else undefined (the default).
   * @throws CliError USAGE when it is set and not a number ≥ 1.
   */
  reconnectTimeoutMs(): number | undefined {
    return cliSetting('JOBDECK_RECONNECT_TIMEOUT_MS', this.io.env) ?? undefined;
  }

  /** Writes a line to stdout. */
  out(line = ''): void {
    this.io.stdout.write(`${line}\n`);
  }

  /** Writes a line to stderr. */
  err(line = ''): void {
    this.io.stderr.write(`${line}\n`);
  }
}
