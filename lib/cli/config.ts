/**
 * Where the CLI finds its server and token.
 *
 * - Server address: `--url`, else `JOBDECK_URL`, else the local server
 *   `http://${HOST or 127.0.0.1}:${PORT or 3000}` (the same variables `jobdeck server` and
 *   `npm start` listen on; a wildcard HOST such as 0.0.0.0 or :: is reached on 127.0.0.1).
 * - Token: `--token`, else `JOBDECK_TOKEN`, else the local server's token file in
 *   `$JOBDECK_HOME` (read with lib/auth readLocalToken), else none.
 */
import { readLocalToken } from '../auth/tokens';
import { usageError } from './errors';

/** The environment variables the CLI reads (documented in --help and docs/cli.md). */
export const CLI_ENV_HELP: readonly [string, string][] = [
  ['JOBDECK_URL', 'server address (default http://127.0.0.1:3000, or http://$HOST:$PORT when set)'],
  ['JOBDECK_TOKEN', 'API token (default: the local server token file in $JOBDECK_HOME)'],
  ['JOBDECK_HOME', 'data folder of the local server (default ~/.jobdeck); `jobdeck server` uses it too'],
  ['HOST, PORT', 'where `jobdeck server` listens (and the default address of the other commands)'],
  ['JOBDECK_RECONNECT_TIMEOUT_MS', 'how long to keep retrying a lost server: logs/launch follow (then exit 5) and retried requests (then exit 6); default 60000'],
  ['NO_COLOR, FORCE_COLOR', 'turn colours off / on (by default only on a terminal)'],
];

/** What a command needs to talk to the server. */
export interface Connection {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:3000`. */
  url: string;
  token: string | undefined;
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

/**
 * The token: `--token`, else `JOBDECK_TOKEN`, else `readLocal()` (the local server's token
 * file), else undefined. `readLocal` errors (no file, unreadable) count as "no token".
 */
export async function resolveToken(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  readLocal: (home?: string) => Promise<string | null | undefined> | string | null | undefined = defaultReadLocalToken,
): Promise<string | undefined> {
  const t = opts.token?.trim() || env.JOBDECK_TOKEN?.trim();
  if (t) return t;
  try {
    const local = await readLocal(env.JOBDECK_HOME || undefined);
    return local?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Reads the local server's token file (lib/auth/tokens readLocalToken; null when none). */
function defaultReadLocalToken(home?: string): string | null {
  return readLocalToken(home);
}

/** Resolves the full connection from global options and the environment. */
export async function resolveConnection(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  return { url: resolveUrl(opts, env), token: await resolveToken(opts, env) };
}
