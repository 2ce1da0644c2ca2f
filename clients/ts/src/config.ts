/**
 * Where the client finds its server and token — the rules the `jobdeck` CLI follows too
 * (docs/cli.md; the CLI's --url/--token come first):
 *
 * - Server: the `url` option, else `JOBDECK_URL`, else the local server
 *   `http://${HOST or 127.0.0.1}:${PORT or 3000}` (the variables `jobdeck server` listens on; a
 *   wildcard HOST such as 0.0.0.0 or :: is reached on 127.0.0.1). No scheme: `http://`.
 * - Token: the `token` option, else `JOBDECK_TOKEN`, else the local server's token file
 *   `$JOBDECK_HOME/token` (default `~/.jobdeck/token`), else none.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError } from './errors';

/** The environment variables read (a subset of process.env). */
export type Env = Record<string, string | undefined>;

/** Where the token came from: the option (`flag`), `JOBDECK_TOKEN`, the token file, or nowhere (the file looked for). */
export type TokenSource = { from: 'flag' } | { from: 'env' } | { from: 'file'; path: string } | { from: 'none'; path: string };

/**
 * The server's base URL (no trailing slash) from `url`, `JOBDECK_URL`, `HOST`/`PORT`. `flag` names
 * the option in errors (the CLI's `--url`).
 * @throws BadRequestError when the value is not an http(s) URL.
 */
export function resolveUrl(url: string | undefined, env: Env = process.env, flag = 'url'): string {
  let raw = url?.trim() || env.JOBDECK_URL?.trim();
  const from = url?.trim() ? flag : 'JOBDECK_URL';
  if (!raw) {
    let host = env.HOST?.trim() || '127.0.0.1';
    if (host === '0.0.0.0' || host === '::' || host === '[::]') host = '127.0.0.1';
    if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
    return validate(`http://${host}:${env.PORT?.trim() || '3000'}`, 'HOST/PORT');
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) raw = `http://${raw}`;
  return validate(raw, from);
}

function validate(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new BadRequestError(`${from}: not a URL: "${raw}"`, 'configuration');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new BadRequestError(`${from}: expected an http:// or https:// URL, got "${raw}"`, 'configuration');
  return u.toString().replace(/\/+$/, '');
}

/** The local server's token file: `$JOBDECK_HOME/token`, default `~/.jobdeck/token`. */
export function localTokenPath(env: Env = process.env): string {
  return path.join(path.resolve(env.JOBDECK_HOME || path.join(os.homedir(), '.jobdeck')), 'token');
}

/** The trimmed contents of the local token file, or null when it is missing, empty or unreadable. */
export function readLocalToken(env: Env = process.env): string | null {
  try {
    const t = readFileSync(localTokenPath(env), 'utf8').trim();
    return t.length > 0 ? t : null;
  } catch {
    return null;
  }
}

/** The token rule given the local file's token (`local`): `given`, else `JOBDECK_TOKEN`, else `local`, else none. */
function tokenFrom(given: string | undefined, env: Env, local: string | null | undefined): { token: string | undefined; source: TokenSource } {
  if (given?.trim()) return { token: given.trim(), source: { from: 'flag' } };
  if (env.JOBDECK_TOKEN?.trim()) return { token: env.JOBDECK_TOKEN.trim(), source: { from: 'env' } };
  const file = localTokenPath(env);
  if (local?.trim()) return { token: local.trim(), source: { from: 'file', path: file } };
  return { token: undefined, source: { from: 'none', path: file } };
}

/** The token and where it came from: `token`, else `JOBDECK_TOKEN`, else the local token file, else none. */
export function resolveTokenSync(token: string | undefined, env: Env = process.env): { token: string | undefined; source: TokenSource } {
  return tokenFrom(token, env, token?.trim() || env.JOBDECK_TOKEN?.trim() ? null : readLocalToken(env));
}

/**
 * resolveTokenSync with the local token file read by `readLocal` (its errors count as "no
 * token"; the CLI passes the server's own reader).
 */
export async function resolveTokenSource(
  token: string | undefined,
  env: Env = process.env,
  readLocal: (home?: string) => Promise<string | null | undefined> | string | null | undefined = () => readLocalToken(env),
): Promise<{ token: string | undefined; source: TokenSource }> {
  let local: string | null | undefined = null;
  if (!token?.trim() && !env.JOBDECK_TOKEN?.trim()) {
    try {
      local = await readLocal(env.JOBDECK_HOME || undefined);
    } catch {
      /* unreadable: no token */
    }
  }
  return tokenFrom(token, env, local);
}

/** `~/…` for a path under the home folder (what a user would type), else the path. */
export function displayPath(p: string, home: string = os.homedir()): string {
  return home && (p === home || p.startsWith(`${home}${path.sep}`)) ? `~${p.slice(home.length)}` : p;
}

/**
 * What to say when the server refuses the token (401): where it came from — "no token found at
 * ~/.jobdeck/token (set JOBDECK_TOKEN or JOBDECK_HOME)", "token from $JOBDECK_TOKEN refused", …
 * `flag` names the option (`--token` in the CLI).
 */
export function tokenRefusedHint(source: TokenSource | undefined, flag = '--token'): string {
  switch (source?.from) {
    case 'flag':
      return `token from ${flag} refused`;
    case 'env':
      return 'token from $JOBDECK_TOKEN refused';
    case 'file':
      return `token from ${displayPath(source.path)} refused (that server uses another token: set JOBDECK_TOKEN, or JOBDECK_HOME to its data folder)`;
    case 'none':
      return `no token found at ${displayPath(source.path)} (set JOBDECK_TOKEN or JOBDECK_HOME)`;
    default:
      return `token refused (set ${flag} or JOBDECK_TOKEN)`;
  }
}
