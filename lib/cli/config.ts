/**
 * Where the CLI finds its server and token.
 *
 * - Server address: `--url`, else `JOBDECK_URL`, else the local server
 *   `http://${HOST or 127.0.0.1}:${PORT or 3000}` (the same variables `jobdeck server` and
 *   `npm start` listen on; a wildcard HOST such as 0.0.0.0 or :: is reached on 127.0.0.1).
 * - Token: `--token`, else `JOBDECK_TOKEN`, else the local server's token file in
 *   `$JOBDECK_HOME` (read with lib/config.ts readLocalToken), else none.
 */
import os from 'node:os';
import path from 'node:path';
import { readLocalToken, TOKEN_FILE } from '../config';
import { usageError } from './errors';

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
 * Where the token came from: `--token`, `JOBDECK_TOKEN`, the local token file (its path), or
 * nowhere (the file that was looked for). Told when the server refuses the token.
 */
export type TokenSource = { from: 'flag' } | { from: 'env' } | { from: 'file'; path: string } | { from: 'none'; path: string };

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
 * The server's base URL from `--url`, `JOBDECK_URL`, `HOST`/`PORT`.
 * @throws CliError (USAGE) when the value is not an http(s) URL.
 */
export function resolveUrl(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): string {
  let raw = opts.url?.trim() || env.JOBDECK_URL?.trim();
  const from = opts.url?.trim() ? '--url' : 'JOBDECK_URL';
  if (!raw) {
    let host = env.HOST?.trim() || '127.0.0.1';
    if (host === '0.0.0.0' || host === '::' || host === '[::]') host = '127.0.0.1';
    if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
    const port = env.PORT?.trim() || '3000';
    raw = `http://${host}:${port}`;
    return validate(raw, 'HOST/PORT');
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) raw = `http://${raw}`;
  return validate(raw, from);
}

function validate(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw usageError(`${from}: not a URL: "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usageError(`${from}: expected an http:// or https:// URL, got "${raw}"`);
  return u.toString().replace(/\/+$/, '');
}

/** `~/…` for a path under the home folder (what a user would type), else the path. */
export function displayPath(p: string, home: string = os.homedir()): string {
  return home && (p === home || p.startsWith(`${home}${path.sep}`)) ? `~${p.slice(home.length)}` : p;
}

/** The local server's token file the CLI reads: `$JOBDECK_HOME/token`, default `~/.jobdeck/token`. */
export function localTokenPath(env: NodeJS.ProcessEnv = process.env): string {
  const home = path.resolve(env.JOBDECK_HOME || path.join(os.homedir(), '.jobdeck'));
  return path.join(home, TOKEN_FILE);
}

/**
 * The token and where it came from: `--token`, else `JOBDECK_TOKEN`, else `readLocal()` (the
 * local server's token file), else none. `readLocal` errors (no file, unreadable) count as "no
 * token".
 */
export async function resolveTokenSource(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  readLocal: (home?: string) => Promise<string | null | undefined> | string | null | undefined = defaultReadLocalToken,
): Promise<{ token: string | undefined; source: TokenSource }> {
  const flag = opts.token?.trim();
  if (flag) return { token: flag, source: { from: 'flag' } };
  const fromEnv = env.JOBDECK_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, source: { from: 'env' } };
  const file = localTokenPath(env);
  try {
    const local = (await readLocal(env.JOBDECK_HOME || undefined))?.trim();
    if (local) return { token: local, source: { from: 'file', path: file } };
  } catch {
    /* unreadable: no token */
  }
  return { token: undefined, source: { from: 'none', path: file } };
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
  switch (source?.from) {
    case 'flag':
      return 'token from --token refused';
    case 'env':
      return 'token from $JOBDECK_TOKEN refused';
    case 'file':
      return `token from ${displayPath(source.path)} refused (that server uses another token: set JOBDECK_TOKEN, or JOBDECK_HOME to its data folder)`;
    case 'none':
      return `no token found at ${displayPath(source.path)} (set JOBDECK_TOKEN or JOBDECK_HOME)`;
    default:
      return 'token refused (set --token or JOBDECK_TOKEN)';
  }
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
