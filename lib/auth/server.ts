import type { Logger } from 'pino';
import { type Env, assertSafeBinding } from './binding';
import { LOGIN_PATH } from './policy';
import { OIDC_CALLBACK_PATH } from './oidc-config';
import { type LoadAuthResult, loadAuth } from './state';
import { tokenPath } from './tokens';

/**
 * What the server does with authentication at start (called from lib/server/start.ts before the
 * database opens, so a refused start touches nothing).
 */

/** Result of prepareServerAuth(). */
export interface ServerAuth {
  result: LoadAuthResult;
  /**
   * Logs how to log in (or why no one can), never with the token in it; call once the server
   * listens and its port is known. Answers the line a person reads (plain, first); `secret`: it
   * carries the admin token (the first start's login URL) and must go to the terminal or stdout
   * only, never into a log line.
   */
  announce(log: Logger, port: number): { line: string; secret: boolean } | null;
}

/** The host to put in a URL for a listen address: wildcards become loopback, IPv6 bracketed. */
export function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '' ) return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The login URL for a listen address/port; with the token when given (Jupyter-style). */
export function loginUrl(host: string, port: number, token: string | null): string {
  const base = `http://${displayHost(host)}:${port}${LOGIN_PATH}`;
  return token ? `${base}?token=${encodeURIComponent(token)}` : base;
}

/**
 * Refuses unsafe configurations, loads (or generates) the token, and returns the auth state
 * (`result.state`, for the server's services) and how to announce the login URL.
 *
 * @param opts.home data folder; opts.host listen address.
 * @throws AuthConfigError when listening on a non-loopback address without JOBDECK_TOKEN, or when
 *   a token setting is malformed — the message says why and what to do.
 */
export function prepareServerAuth(opts: { home: string; host: string; env?: Env }): ServerAuth {
  const env = opts.env ?? process.env;
  assertSafeBinding(opts.host, env);
  const result = loadAuth({ generate: true, home: opts.home, host: opts.host, env });
  return {
    result,
    announce(log, port) {
      for (const w of result.warnings) log.warn(w);
      const s = result.state;
      if (s.oidc) {
        // What the operator registers at the provider (the callback under the public base URL).
        const base = s.oidc.baseUrl ?? `http://${displayHost(opts.host)}:${port}`;
        log.info({ issuer: s.oidc.issuer, redirectUri: `${base}${OIDC_CALLBACK_PATH}` }, `single sign-on with ${s.oidc.issuer}; its redirect URI is ${base}${OIDC_CALLBACK_PATH}`);
      }
      if (!s.tokenHash) {
        const line = 'no token is configured: every API request and WebSocket will be refused';
        log.error(line);
        return { line, secret: false };
      }
      const bare = loginUrl(opts.host, port, null);
      if (result.loginToken && result.generated) {
        // The first start: the URL that logs in, once, on stdout — never in the JSON log, which
        // is kept and shipped where the token file's mode 0600 does not reach.
        log.info({ loginUrl: bare, tokenFile: tokenPath(s.home), generated: true }, `created an admin token in ${tokenPath(s.home)}; the login URL with it is printed once, on stdout`);
        return { line: `created an admin token in ${tokenPath(s.home)}; to log in, open ${loginUrl(opts.host, port, result.loginToken)}`, secret: true };
      }
      const how = s.source === 'env' ? 'the token from JOBDECK_TOKEN' : result.loginToken ? `the token in ${tokenPath(s.home)}` : `the token whose sha256 is in ${s.home}`;
      const line = `to log in, open ${bare} and paste ${how}`;
      log.info({ loginUrl: bare }, line);
      return { line, secret: false };
    },
  };
}
