import { isIP } from 'node:net';
import { ConfigError, setting, type Env, type SettingOf, type VariableName } from '../config';

/**
 * Which listen addresses are safe without an explicit token: loopback only. Ray's job API
 * listened on all interfaces without authentication and was exploited in the wild
 * (CVE-2023-48022, "ShadowRay"); jobdeck runs the commands it is given, so it refuses to do that.
 */

/**
 * True for loopback listen addresses: `localhost` (and `*.localhost`), 127.0.0.0/8, `::1`,
 * `::ffff:127.x.x.x`. False for `0.0.0.0`, `::`, LAN/public addresses and any other host name
 * (a name may resolve to anything).
 */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const kind = isIP(h);
  if (kind === 4) return h.startsWith('127.');
  if (kind === 6) {
    if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^(?:::|(?:0{1,4}:){5})ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return !!mapped && mapped[1].startsWith('127.');
  }
  return false;
}

/** Environment variables (process.env or a plain object in tests). */
export type { Env } from '../config';

/** Thrown when jobdeck must not start: unsafe binding or a malformed token setting. */
export class AuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

/**
 * A setting of the auth modules (lib/config.ts `setting`), its ConfigError an AuthConfigError:
 * jobdeck must not start with it.
 */
export function authSetting<N extends VariableName>(name: N, env: Env): SettingOf<N> {
  try {
    return setting(name, env);
  } catch (err) {
    throw err instanceof ConfigError ? new AuthConfigError(err.message) : err;
  }
}

/** True when the operator configured the token explicitly (a non-empty JOBDECK_TOKEN). */
export function hasExplicitToken(env: Env = process.env): boolean {
  return setting('JOBDECK_TOKEN', env) !== null;
}

/**
 * Refuses a non-loopback listen address unless the token is configured explicitly
 * (JOBDECK_TOKEN). A generated token is not enough there: it is printed in a log the operator
 * may never read, so nobody consciously decided who holds it.
 *
 * @throws AuthConfigError saying why and what to do.
 */
export function assertSafeBinding(host: string, env: Env = process.env): void {
  if (isLoopbackHost(host) || hasExplicitToken(env)) return;
  throw new AuthConfigError(
    `refusing to listen on ${host}: it is not a loopback address and no token is configured. ` +
      `Anyone who can reach this port could run any command as this OS user (see SECURITY.md). ` +
      `Either set JOBDECK_TOKEN to a long random secret (e.g. JOBDECK_TOKEN=$(openssl rand -hex 32)) ` +
      `and give it only to the people who may run jobs, or listen on loopback only (unset HOST, or HOST=127.0.0.1) ` +
      `and reach jobdeck through an SSH tunnel or a TLS proxy.`,
  );
}
