import { isLoopbackHost } from './binding';

/**
 * Origin and Host checks (CSRF and DNS-rebinding defences). Pure functions over header values.
 */

/** Methods that change state; everything else (GET, HEAD, OPTIONS) must not. */
export function isStateChanging(method: string): boolean {
  const m = method.toUpperCase();
  return m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS';
}

/** `host[:port]` in lower case, with the default port of `scheme` removed; null if malformed. */
export function normalizeHost(host: string, scheme: 'http:' | 'https:' = 'http:'): string | null {
  try {
    const u = new URL(`${scheme}//${host.trim()}`);
    if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return null;
    return u.host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * True when a browser's `Origin` header names this server: its `host[:port]` equals the request's
 * `Host` header (scheme-independent, so it also holds behind a TLS proxy that keeps the Host
 * header), or it is one of `allowedOrigins` (JOBDECK_ORIGINS, for proxies that rewrite Host).
 * `Origin: null` (sandboxed frames, file: pages, some redirects) never matches.
 *
 * @param origin the Origin header value.
 * @param host the Host header value (absent → only allowedOrigins can match).
 * @param allowedOrigins extra origins, as `scheme://host[:port]`.
 */
export function originMatches(origin: string, host: string | undefined, allowedOrigins: readonly string[] = []): boolean {
  let o: URL;
  try {
    o = new URL(origin.trim());
  } catch {
    return false;
  }
  if (o.protocol !== 'http:' && o.protocol !== 'https:') return false;
  if (allowedOrigins.includes(o.origin.toLowerCase())) return true;
  if (!host) return false;
  const h = normalizeHost(host, o.protocol);
  return h !== null && h === o.host.toLowerCase();
}

/**
 * DNS-rebinding defence (as Jupyter's `allow_remote_access=False`): when jobdeck listens on
 * loopback only, a request's Host must name a loopback address (`localhost`, `*.localhost`,
 * 127.x.x.x, `[::1]`; any port, so SSH port forwards work) or the host of an allowed origin.
 * A page on `evil.example` that re-points its DNS name at 127.0.0.1 sends `Host: evil.example`
 * and is refused before anything runs. No check when listening on other addresses (there the
 * Host is whatever name clients use) or when the Host header is absent (not a browser).
 *
 * @param host the Host header value.
 * @param bindHost the address the server listens on; null when unknown (no check).
 */
export function hostAllowed(host: string | undefined, bindHost: string | null, allowedOrigins: readonly string[] = []): boolean {
  if (!host || !bindHost || !isLoopbackHost(bindHost)) return true;
  const h = normalizeHost(host);
  if (h === null) return false;
  const hostname = new URL(`http://${h}`).hostname;
  if (isLoopbackHost(hostname)) return true;
  return allowedOrigins.some((o) => {
    try {
      return new URL(o).hostname === hostname;
    } catch {
      return false;
    }
  });
}

/** The origin `next` is resolved against when the caller does not know the server's own. */
const PLACEHOLDER_ORIGIN = 'http://jobdeck.invalid';

/** True for a path a browser reads as a path on this origin: one '/', then not '/' or '\\'. */
function isSingleSlashPath(p: string): boolean {
  return p.startsWith('/') && p[1] !== '/' && p[1] !== '\\';
}

/**
 * A safe place to go after logging in: a path on this server (`/jobs/3?x=1#y`), never another
 * site. `next` is resolved with the URL parser against `origin` (the server's origin, e.g.
 * `http://127.0.0.1:8080`; a placeholder when unknown); the result must have that origin, and
 * the path it answers must start with exactly one '/', before and after the parser's
 * normalisation — `/.//evil.example`, `/a/..//evil.example` and `/./\evil.example` all resolve
 * to a path `//evil.example`, which a browser would read as another host. Anything else, the
 * login page itself and the auth API fall back to `/`.
 */
export function safeNextPath(next: string | null | undefined, origin: string = PLACEHOLDER_ORIGIN): string {
  if (!next || !isSingleSlashPath(next)) return '/';
  try {
    const base = new URL(origin);
    const u = new URL(next, base);
    if (u.origin !== base.origin) return '/';
    if (u.pathname === '/login' || u.pathname.startsWith('/api/auth/')) return '/';
    const out = `${u.pathname}${u.search}${u.hash}`;
    return isSingleSlashPath(out) ? out : '/';
  } catch {
    return '/';
  }
}
