import { createHash, createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config';
import { authSetting, AuthConfigError, type Env } from './binding';
import { AuthDirectory } from './directory';
import { type OidcSettings, loadOidcSettings } from './oidc-config';
import {
  MIN_TOKEN_LENGTH,
  TOKEN_FILE,
  TOKEN_HASH_FILE,
  constantTimeEqual,
  ensurePrivateDir,
  generateToken,
  hashToken,
  readPrivateFile,
  writePrivateFile,
} from './tokens';

/** File (in the data folder) with the random secret session cookies are signed with. */
export const SESSION_KEY_FILE = 'session.key';
/** File (in the data folder) listing logged-out sessions until they expire: `<id> <expiresAtMs>`. */
export const REVOKED_SESSIONS_FILE = 'sessions.revoked';
/** Default session lifetime: 7 days (JOBDECK_SESSION_TTL_HOURS overrides, 1–8760). */
export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * The server's authentication state: loaded once at start (loadAuth), kept in the server's
 * services (lib/server/services.ts) and handed to the gates and route handlers. Holds the
 * token's HASH only, never the token.
 */
export interface AuthState {
  /** sha256 of the admin token; null when none is configured (then nothing authenticates). */
  tokenHash: Buffer | null;
  /** Where the token came from. */
  source: 'env' | 'file' | 'none';
  /** HMAC-SHA256 key for session cookies, derived from session.key and the token hash. */
  sessionKey: Buffer;
  /** Session cookie name, unique per data folder (two jobdecks on one host don't clobber). */
  cookieName: string;
  /** Session lifetime (ms). */
  sessionTtlMs: number;
  /** Data folder. */
  home: string;
  /** Logged-out session ids → their expiry (ms since epoch). */
  revoked: Map<string, number>;
  /**
   * Called with a session's id when it is revoked (logout), after the revocation holds: the
   * WebSocket hub closes that session's sockets (lib/ws/hub.ts). Absent: nobody listens.
   */
  onRevoke?: Set<(sessionId: string) => void>;
  /** Users and live personal tokens, in memory (lib/auth/directory.ts). */
  directory: AuthDirectory;
  /** Extra allowed browser origins (`scheme://host[:port]`, lower case) from JOBDECK_ORIGINS. */
  allowedOrigins: string[];
  /** The address the server listens on (for the Host check); null when not known. */
  bindHost: string | null;
  /**
   * sha256 of JOBDECK_METRICS_TOKEN: a read-only token that `GET /metrics` accepts besides the
   * admin token, and no other route (a Prometheus server holds it); null when unset.
   */
  metricsTokenHash?: Buffer | null;
  /** OIDC single sign-on settings (JOBDECK_OIDC_*, lib/auth/oidc-config.ts); null/absent: no SSO. */
  oidc?: OidcSettings | null;
}

/** Options of loadAuth(). */
export interface LoadAuthOptions {
  /** Data folder (default: JOBDECK_HOME). */
  home?: string;
  /** Listen address, for the DNS-rebinding Host check; null/absent → no Host check. */
  host?: string | null;
  env?: Env;
  /** Generate and store a token when none exists (server start: true; lazy loads: false). */
  generate?: boolean;
}

/** What loadAuth() found. */
export interface LoadAuthResult {
  state: AuthState;
  /** True when this call created a new token. */
  generated: boolean;
  /**
   * The plain token, only when it came from (or was just written to) the token file — for the
   * login URL printed at start. Never kept in AuthState. Null for JOBDECK_TOKEN (the operator
   * knows it; it is not echoed into logs).
   */
  loginToken: string | null;
  /** Things the operator should know (printed at start). */
  warnings: string[];
}

function validateToken(token: string, where: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new AuthConfigError(`${where}: the token is ${token.length} characters long; use at least ${MIN_TOKEN_LENGTH} random characters (e.g. $(openssl rand -hex 32))`);
  }
  if (/[\s\x00-\x1f\x7f]/.test(token)) throw new AuthConfigError(`${where}: the token must not contain spaces or control characters`);
}

function parseTtl(env: Env): number {
  const h = authSetting('JOBDECK_SESSION_TTL_HOURS', env);
  return h === null ? DEFAULT_SESSION_TTL_MS : Math.round(h * 3600 * 1000);
}

function parseOrigins(env: Env): string[] {
  const raw = authSetting('JOBDECK_ORIGINS', env);
  if (!raw) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      let u: URL;
      try {
        u = new URL(s);
      } catch {
        throw new AuthConfigError(`JOBDECK_ORIGINS: "${s}" is not a URL; expected e.g. https://jobs.example.com`);
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AuthConfigError(`JOBDECK_ORIGINS: "${s}" must be http:// or https://`);
      return u.origin.toLowerCase();
    });
}

function loadRevoked(file: string, now: number): Map<string, number> {
  const map = new Map<string, number>();
  const text = readPrivateFile(file);
  if (!text) return map;
  for (const line of text.split('\n')) {
    const [id, exp] = line.trim().split(/\s+/);
    const e = Number(exp);
    if (id && Number.isFinite(e) && e > now) map.set(id, e);
  }
  // Rewrite without the expired lines so the file does not grow forever.
  writePrivateFile(file, [...map].map(([id, e]) => `${id} ${e}\n`).join(''));
  return map;
}

/**
 * Reads (and, with `generate`, creates) the token configuration of a data folder. Precedence:
 * JOBDECK_TOKEN (nothing written) → the `token` file (its hash file is refreshed from it) →
 * the `token.sha256` file alone (the plain file was deleted: the server still works, the login
 * URL cannot be printed) → generate a new token (both files, 0600, folder created 0700).
 *
 * @throws AuthConfigError for a too-short token (JOBDECK_TOKEN, the token file, JOBDECK_METRICS_TOKEN) or malformed JOBDECK_SESSION_TTL_HOURS /
 *   JOBDECK_ORIGINS.
 */
export function loadAuth(opts: LoadAuthOptions = {}): LoadAuthResult {
  const env = opts.env ?? process.env;
  const home = opts.home ?? loadConfig(env as NodeJS.ProcessEnv).home;
  const warnings: string[] = [];
  const sessionTtlMs = parseTtl(env);
  const allowedOrigins = parseOrigins(env);
  const tokenFile = path.join(/*turbopackIgnore: true*/ home, TOKEN_FILE);
  const hashFile = path.join(/*turbopackIgnore: true*/ home, TOKEN_HASH_FILE);

  if (ensurePrivateDir(home)) {
    warnings.push(`the data folder ${home} is accessible to other users; consider \`chmod 700 ${home}\` (the token files in it are 0600 either way)`);
  }

  let tokenHash: Buffer | null = null;
  let source: AuthState['source'] = 'none';
  let loginToken: string | null = null;
  let generated = false;

  const oidc = loadOidcSettings(env);
  const metricsToken = authSetting('JOBDECK_METRICS_TOKEN', env);
  if (metricsToken) validateToken(metricsToken, 'JOBDECK_METRICS_TOKEN');
  const metricsTokenHash = metricsToken ? hashToken(metricsToken) : null;

  const envToken = authSetting('JOBDECK_TOKEN', env);
  if (envToken) {
    validateToken(envToken, 'JOBDECK_TOKEN');
    tokenHash = hashToken(envToken);
    source = 'env';
    const fileToken = readPrivateFile(tokenFile)?.trim();
    if (fileToken && !constantTimeEqual(fileToken, envToken)) {
      warnings.push(`${tokenFile} holds a different token than JOBDECK_TOKEN and is not used; a local CLI without JOBDECK_TOKEN would send the wrong one (delete the file)`);
    }
  } else {
    const fileToken = readPrivateFile(tokenFile)?.trim() || null;
    const fileHash = readPrivateFile(hashFile)?.trim() || null;
    if (fileToken) {
      validateToken(fileToken, tokenFile);
      tokenHash = hashToken(fileToken);
      if (fileHash !== tokenHash.toString('hex')) {
        if (fileHash) warnings.push(`${tokenFile} changed since ${hashFile} was written; using the token file (token rotated)`);
        writePrivateFile(hashFile, `${tokenHash.toString('hex')}\n`);
      }
      source = 'file';
      loginToken = fileToken;
    } else if (fileHash) {
      if (!/^[0-9a-f]{64}$/.test(fileHash)) throw new AuthConfigError(`${hashFile}: expected 64 hex digits (a sha256); delete it to generate a new token`);
      tokenHash = Buffer.from(fileHash, 'hex');
      source = 'file';
      warnings.push(`${tokenFile} was removed; the server still accepts the token whose hash is in ${hashFile}, but cannot print a login URL and the local CLI cannot read it`);
    } else if (opts.generate) {
      const token = generateToken();
      writePrivateFile(tokenFile, `${token}\n`);
      tokenHash = hashToken(token);
      writePrivateFile(hashFile, `${tokenHash.toString('hex')}\n`);
      source = 'file';
      loginToken = token;
      generated = true;
    }
  }

  // Session signing secret: random, persistent (sessions survive restarts), 0600.
  const keyFile = path.join(/*turbopackIgnore: true*/ home, SESSION_KEY_FILE);
  let secretHex = readPrivateFile(keyFile)?.trim() ?? '';
  if (!/^[0-9a-f]{64}$/.test(secretHex)) {
    secretHex = randomBytes(32).toString('hex');
    writePrivateFile(keyFile, `${secretHex}\n`);
  }
  const secret = Buffer.from(secretHex, 'hex');
  // Bound to the token: rotating the token invalidates every session cookie.
  const sessionKey = createHmac('sha256', secret)
    .update('jobdeck session v1\0')
    .update(tokenHash ?? randomBytes(32))
    .digest();
  const cookieName = `jobdeck_session_${createHash('sha256').update(secret).digest('hex').slice(0, 8)}`;
  const revoked = loadRevoked(path.join(/*turbopackIgnore: true*/ home, REVOKED_SESSIONS_FILE), Date.now());

  return {
    state: { tokenHash, source, sessionKey, cookieName, sessionTtlMs, home, revoked, onRevoke: new Set(), directory: new AuthDirectory(), allowedOrigins, bindHost: opts.host ?? null, metricsTokenHash, oidc },
    generated,
    loginToken,
    warnings,
  };
}

/**
 * A state under which nothing authenticates (no token, a random session key, no Host check):
 * what a route handler checks against when no jobdeck server runs in its process (route modules
 * served by plain `next start`), so such a process fails closed. Writes nothing.
 */
export function closedAuthState(): AuthState {
  return {
    tokenHash: null,
    source: 'none',
    sessionKey: randomBytes(32),
    cookieName: 'jobdeck_session',
    sessionTtlMs: DEFAULT_SESSION_TTL_MS,
    home: '',
    revoked: new Map(),
    directory: new AuthDirectory(),
    allowedOrigins: [],
    bindHost: null,
  };
}

/**
 * Records a logged-out session until it would have expired (in memory and in the data folder),
 * then tells `state.onRevoke` (its sockets are closed).
 */
export function revokeSessionId(state: AuthState, id: string, expiresAt: number): void {
  state.revoked.set(id, expiresAt);
  const now = Date.now();
  for (const [k, e] of state.revoked) if (e <= now) state.revoked.delete(k);
  const file = path.join(/*turbopackIgnore: true*/ state.home, REVOKED_SESSIONS_FILE);
  try {
    if (!existsSync(file)) writePrivateFile(file, '');
    appendFileSync(file, `${id} ${expiresAt}\n`, { mode: 0o600 });
  } catch {
    // The in-memory revocation still holds until restart; the cookie is cleared client-side too.
  }
  for (const listener of state.onRevoke ?? []) {
    try {
      listener(id);
    } catch {
      // A listener's failure must not undo or hide the logout.
    }
  }
}
