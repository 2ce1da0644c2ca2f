/**
 * Where the CLI finds its server and token.
 *
 * - Server address: `--url`, else `JOBDECK_URL`, else the local server
 *   `http://${HOST or 127.0.0.1}:${PORT or 3000}` (the same variables `jobdeck server` and
 *   `npm start` listen on; a wildcard HOST such as 0.0.0.0 or :: is reached on 127.0.0.1).
 * - Token: `--token`, else `JOBDECK_TOKEN`, else the local server's token file in
 *   `$JOBDECK_HOME` (read with lib/config.ts readLocalToken), else none.
 *
 * The rules are the client library's (clients/ts/src/config.ts), which library users get too.
 */
import os from 'node:os';
import {
  BadRequestError,
  displayPath as libDisplayPath,
  localTokenPath as libLocalTokenPath,
  resolveTokenSource as libResolveTokenSource,
  resolveUrl as libResolveUrl,
  tokenRefusedHint as libTokenRefusedHint,
  type TokenSource,
} from '../../clients/ts/src';
import { ConfigError, readLocalToken, setting, type Env, type SettingOf, type VariableName } from '../config';
import { usageError } from './errors';

export type { TokenSource };

/** The environment variables the CLI reads (documented in --help and docs/cli.md). */
export const CLI_ENV_HELP: readonly [string, string][] = [
  ['JOBDECK_URL', 'server address (default http://127.0.0.1:3000, or http://$HOST:$PORT when set)'],
  ['JOBDECK_TOKEN', 'API token (default: the local server token file in $JOBDECK_HOME)'],
  ['JOBDECK_HOME', 'data folder of the local server (default ~/.jobdeck); `jobdeck server` uses it too'],
  ['HOST, PORT', 'where `jobdeck server` listens (and the default address of the other commands)'],
  ['JOBDECK_RECONNECT_TIMEOUT_MS', 'how long to keep retrying a lost server (ms): logs/launch follow (default 300000 = 5 min, then exit 5; --reconnect-timeout wins) and retried requests (default 60000, then exit 6)'],
  ['NO_COLOR, FORCE_COLOR', 'turn colours off / on (by default only on a terminal)'],
];

/**
 * A setting the CLI reads (lib/config.ts `setting`), its ConfigError a usage error (exit 2).
 * @throws CliError USAGE naming the variable when its value is malformed.
 */
export function cliSetting<N extends VariableName>(name: N, env: Env = process.env): SettingOf<N> {
  try {
    return setting(name, env);
  } catch (err) {
    throw err instanceof ConfigError ? usageError(err.message) : err;
  }
}

/** What a command needs to talk to the server. */
export interface Connection {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:3000`. */
  url: string;
  token: string | undefined;
  /** Where `token` came from (absent: unknown, e.g. a connection built by a test). */
  tokenSource?: TokenSource;
}

/** Global options as commander parses them. */
export interface GlobalOptions {
  url?: string;
  token?: string;
}

/**
 * The server's base URL from `--url`, `JOBDECK_URL`, `HOST`/`PORT` (the client library's rule,
 * clients/ts/src/config.ts).
 * @throws CliError (USAGE) when the value is not an http(s) URL.
 */
export function resolveUrl(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return libResolveUrl(opts.url, env, '--url');
  } catch (err) {
    if (err instanceof BadRequestError) throw usageError(err.message);
    throw err;
  }
}

/** `~/…` for a path under the home folder (what a user would type), else the path. */
export function displayPath(p: string, home: string = os.homedir()): string {
  return libDisplayPath(p, home);
}

/** The local server's token file the CLI reads: `$JOBDECK_HOME/token`, default `~/.jobdeck/token`. */
export function localTokenPath(env: NodeJS.ProcessEnv = process.env): string {
  return libLocalTokenPath(env);
}

/**
 * The token and where it came from: `--token`, else `JOBDECK_TOKEN`, else `readLocal()` (the
 * local server's token file), else none. `readLocal` errors (no file, unreadable) count as "no
 * token".
 */
export function resolveTokenSource(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  readLocal: (home?: string) => Promise<string | null | undefined> | string | null | undefined = defaultReadLocalToken,
): Promise<{ token: string | undefined; source: TokenSource }> {
  return libResolveTokenSource(opts.token, env, readLocal);
}

/**
 * The token: `--token`, else `JOBDECK_TOKEN`, else `readLocal()` (the local server's token
 * file), else undefined (resolveTokenSource without the source).
 */
export async function resolveToken(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  readLocal: (home?: string) => Promise<string | null | undefined> | string | null | undefined = defaultReadLocalToken,
): Promise<string | undefined> {
  return (await resolveTokenSource(opts, env, readLocal)).token;
}

/**
 * What to tell a user whose token the server refused (401/403): where the CLI looked —
 * "no token found at ~/.jobdeck/token (set JOBDECK_TOKEN or JOBDECK_HOME)", "token from
 * $JOBDECK_TOKEN refused", …
 */
export function tokenRefusedHint(source: TokenSource | undefined): string {
  return libTokenRefusedHint(source, '--token');
}

/** Reads the local server's token file (lib/config.ts readLocalToken; null when none). */
function defaultReadLocalToken(home?: string): string | null {
  return readLocalToken(home);
}

/** Resolves the full connection from global options and the environment. */
export async function resolveConnection(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const { token, source } = await resolveTokenSource(opts, env);
  return { url: resolveUrl(opts, env), token, tokenSource: source };
}
