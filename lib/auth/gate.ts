import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { logger } from '../log';
import { appendAudit, FIRST_ADMIN_ID, type AuditEntry, type StoreScope } from '../store';
import { type HeaderGetter, TOKEN_PREFIX_CHARS, bearerToken, checkRequest, credentialExpiry, credentialProblem } from './guard';
import { safeNextPath } from './origin';
import { LOGIN_PATH, PEER_HEADER, type PublicPolicy, isApiPath, isPublicRequest } from './policy';
import { issueSession, sessionSetCookie, viaHttps, type Session } from './session';
import type { AuthState } from './state';
import { verifyToken } from './tokens';

/**
 * The custom server's gates (lib/server/start.ts): every HTTP request and every WebSocket upgrade
 * passes here BEFORE Next.js or a WebSocket route sees it, so pages, route handlers, server
 * actions and sockets are all covered by construction — a new route is protected without doing
 * anything. (Chosen over Next 16's proxy.ts: proxy.ts never sees WebSocket upgrades, and with a
 * proxy Next buffers every request body up to 10 MB — experimental.proxyClientMaxBodySize — which
 * defeats the body cap.)
 */

/** Headers set on every HTTP response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Options of createHttpGate(). */
export interface GateOptions extends PublicPolicy {
  /** The server's authentication state (lib/auth/state.ts loadAuth). */
  auth: AuthState;
  /** Largest request body (bytes) of a request, judged by its Content-Length: the API's one table (lib/api/body-limits.ts). */
  bodyLimit: (method: string, pathname: string) => number;
  /** Where a login through the login URL is audited (`login` / `login.failed`, like every login path). */
  store: StoreScope;
}

/** Node request headers as a HeaderGetter (repeated headers joined with ", "). */
export function nodeHeaders(req: IncomingMessage): HeaderGetter {
  return (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
}

function sendProblem(res: ServerResponse, status: number, title: string, detail: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  res.writeHead(status, {
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...(status === 401 ? { 'www-authenticate': 'Bearer realm="jobdeck"' } : {}),
    ...extra,
  });
  res.end(body);
}

function redirect(res: ServerResponse, location: string, extra: Record<string, string> = {}): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0, ...extra });
  res.end();
}

/** The one path the read-only metrics token opens (lib/server/metrics.ts). */
export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics` with the read-only JOBDECK_METRICS_TOKEN as its bearer token: let through (after
 * the Host check every request gets). Null for anything else — the usual check decides, so the
 * admin token and a session work on /metrics too, and the metrics token works nowhere else.
 */
function metricsVerdict(method: string, pathname: string, headers: HeaderGetter, auth: AuthState): { ok: true } | null {
  if (pathname !== METRICS_PATH || (method !== 'GET' && method !== 'HEAD') || !auth.metricsTokenHash) return null;
  if (!verifyToken(bearerToken(headers('authorization')), auth.metricsTokenHash)) return null;
  const host = checkRequest({ method, headers: (name) => (name === 'authorization' ? undefined : headers(name)) }, { public: true }, auth);
  return host.ok ? { ok: true } : null;
}

/** `http://<Host>` of a request (the Host was checked by then), for resolving `next`. */
function hostOrigin(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  return host ? `http://${host}` : undefined;
}

/**
 * Why a request target is refused, or null: only the origin form (`/path?query`, and `*` for
 * OPTIONS) is served. The absolute form (`GET http://evil.example/x HTTP/1.1`) is what a client
 * sends to a proxy; jobdeck is none, and Next would answer it with a redirect to that host.
 */
export function requestTargetProblem(method: string, target: string): string | null {
  if (target.startsWith('/') || (method === 'OPTIONS' && target === '*')) return null;
  return `the request target must be a path ("${method} /path HTTP/1.1"), got "${target.slice(0, 200)}": jobdeck is not a proxy`;
}

/** `/login?next=<path>` for a page the visitor could not see (drops Next's internal `_rsc`). */
function loginRedirectTarget(url: URL): string {
  const params = new URLSearchParams(url.search);
  params.delete('_rsc');
  const qs = params.toString();
  const next = safeNextPath(`${url.pathname}${qs ? `?${qs}` : ''}`);
  return next === '/' ? LOGIN_PATH : `${LOGIN_PATH}?next=${encodeURIComponent(next)}`;
}

/**
 * `GET /login?token=…` (the URL printed at start, like Jupyter's): a valid token sets the session
 * cookie and redirects (303) to `next` or `/`, so the token leaves the address bar at once; a
 * wrong one redirects to `/login?error=invalid`. Referrer-Policy no-referrer keeps the token out
 * of Referer headers. Audited like every login path (docs/design.md §15): one `login` (the first
 * admin, the token's prefix) or one `login.failed` row, with `detail.via: "url"`, written before
 * the answer.
 */
async function loginWithUrlToken(state: AuthState, store: StoreScope, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const next = safeNextPath(url.searchParams.get('next'), hostOrigin(req));
  const token = url.searchParams.get('token');
  const ip = req.socket.remoteAddress ?? null;
  if (verifyToken(token, state.tokenHash)) {
    const { value } = issueSession(state);
    const admin = state.directory.user(FIRST_ADMIN_ID);
    await auditLogin(store, { action: 'login', userId: FIRST_ADMIN_ID, userName: admin?.name ?? 'admin', tokenPrefix: token!.slice(0, TOKEN_PREFIX_CHARS), ip, detail: { via: 'url' } });
    logger().info({ remote: ip }, 'logged in with the login URL');
    redirect(res, next, { 'set-cookie': sessionSetCookie(state, value, { secure: viaHttps(nodeHeaders(req)('x-forwarded-proto')) }) });
    return;
  }
  await auditLogin(store, { action: 'login.failed', userId: null, userName: '(token)', tokenPrefix: null, ip, detail: { via: 'url' } });
  logger().warn({ remote: ip }, 'login URL with a wrong token');
  redirect(res, `${LOGIN_PATH}?error=invalid${next !== '/' ? `&next=${encodeURIComponent(next)}` : ''}`);
}

/** Appends a login's audit row; a failed append is logged and the login goes on (as lib/api/audit.ts record()). */
async function auditLogin(store: StoreScope, e: AuditEntry): Promise<void> {
  try {
    await appendAudit(store, e);
  } catch (err) {
    logger().error({ err, action: e.action }, 'audit row not written');
  }
}

/** How much of a refused upload is read and discarded before the connection is cut (bytes). */
export const LINGER_BYTES = 64 * 1024 * 1024;
/** How long a refused upload may keep sending before the connection is cut (ms). */
export const LINGER_MS = 5_000;

/**
 * Makes the answer on `res` end its connection gracefully: it says `Connection: close` (so no
 * client sends a next request on a connection about to close, RFC 9112 §9.6), and once it is
 * written the socket only ends its sending side — Node would destroy it, resetting a client
 * still sending its body before it has read the answer. The caller reads the rest of the body
 * and closes the socket (lingerThenCut; the API router's drainThenClose). docs/design.md §9.
 */
export function closeGracefully(res: ServerResponse): void {
  res.setHeader('connection', 'close');
  const socket = res.socket as (Socket & { destroySoon?: () => void }) | null;
  if (socket) socket.destroySoon = () => socket.end();
}

function lingerThenCut(req: IncomingMessage): void {
  let discarded = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  req.on('data', (d: Buffer) => {
    discarded += d.length;
    if (discarded > LINGER_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
}

/**
 * Builds the HTTP gate. Returns a function that either lets a request through (true: hand it to
 * Next) or answers it itself (false):
 * - security headers on every response (nosniff, no framing, no referrer);
 * - a request target not in origin form (`GET http://host/x`) → 400;
 * - a declared body over its route's cap (lib/api/body-limits.ts) → 413 (Connection: close, nothing read);
 * - `GET /login?token=` → log in and redirect;
 * - non-public request without valid credentials → pages: 303 to /login?next=…; API: 401
 *   problem+json; wrong Host / cross-origin → 403.
 */
export function createHttpGate(opts: GateOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    // The client's address is the server's to say (the API router sets it).
    delete req.headers[PEER_HEADER];
    const method = (req.method ?? 'GET').toUpperCase();
    const targetProblem = requestTargetProblem(method, req.url ?? '/');
    if (targetProblem) {
      sendProblem(res, 400, 'Bad Request', targetProblem);
      return false;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://jobdeck.invalid');
    } catch {
      sendProblem(res, 400, 'Bad Request', `malformed request target "${String(req.url).slice(0, 200)}"`);
      return false;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    const maxBody = declared > 0 ? opts.bodyLimit(method, url.pathname) : 0;
    if (Number.isFinite(declared) && declared > maxBody) {
      // Answer before reading a byte of the body. The rest of the upload is discarded as it
      // arrives (never buffered) so the client reads the 413 instead of a connection reset;
      // past LINGER_BYTES or LINGER_MS the connection is cut.
      closeGracefully(res);
      sendProblem(res, 413, 'Payload Too Large', `request body is ${declared} bytes; the limit is ${maxBody} bytes`);
      lingerThenCut(req);
      return false;
    }
    const pathname = url.pathname;
    const headers = nodeHeaders(req);
    const isPublic = isPublicRequest(method, pathname, opts);
    const verdict =
      metricsVerdict(method, pathname, headers, opts.auth) ?? checkRequest({ method, headers }, { public: isPublic, path: pathname === METRICS_PATH ? pathname : undefined }, opts.auth);
    if (verdict.ok && pathname === LOGIN_PATH && (method === 'GET' || method === 'HEAD') && url.searchParams.has('token')) {
      loginWithUrlToken(opts.auth, opts.store, req, res, url).catch((err: unknown) => {
        logger().error({ err }, 'login URL failed');
        if (!res.headersSent) sendProblem(res, 500, 'Internal Server Error', 'the login failed; see the server log');
      });
      return false;
    }
    if (verdict.ok) return true;
    // A scraper is no browser: /metrics answers 401 like the API, never a redirect to the login page.
    if (verdict.status === 401 && !isApiPath(pathname) && pathname !== METRICS_PATH && (method === 'GET' || method === 'HEAD')) {
      redirect(res, loginRedirectTarget(url));
      return false;
    }
    sendProblem(res, verdict.status, verdict.title, verdict.detail);
    return false;
  };
}

/**
 * Refuses a WebSocket upgrade on the raw socket with a real HTTP status line and a short text
 * body (clients show it: `ws` reports "Unexpected server response: 401"), then closes it.
 */
export function refuseUpgrade(socket: Duplex, status: number, title: string, detail: string): void {
  if (socket.destroyed) return;
  const body = `${detail}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      (status === 401 ? 'WWW-Authenticate: Bearer realm="jobdeck"\r\n' : '') +
      '\r\n' +
      body,
  );
  // Do not wait for the client to close its side.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Who opened a WebSocket: the browser session (null for a bearer token, which has none). */
export interface UpgradeCaller {
  session: Session | null;
  /** The personal token it came with; null otherwise. */
  tokenId: number | null;
  /** Its user. */
  userId: number | null;
  /** When its credential ends by itself (ms since epoch): the session's or token's expiry; null: never. */
  expiresAt: number | null;
  /** Why its credential no longer authenticates, or null while it does (guard.ts credentialProblem): asked for as long as the socket is open. */
  problem: () => string | null;
}

/**
 * Checks a WebSocket upgrade like a state-changing request (a socket can do anything a token
 * can): Host, Origin (a cookie-authenticated upgrade must carry a matching Origin — blocks
 * cross-site WebSocket hijacking), then the bearer token or session cookie. Returns who opened
 * it, and how to tell later whether that credential still holds (its socket closes when not), to let it through;
 * otherwise null, having answered 400/401/403 on the socket. `auth`: the server's AuthState.
 * `known`: the path is a WebSocket endpoint, whose rule (lib/auth/rules.ts) is checked too.
 */
export function gateUpgrade(auth: AuthState, req: IncomingMessage, socket: Duplex, known = true): UpgradeCaller | null {
  const targetProblem = requestTargetProblem((req.method ?? 'GET').toUpperCase(), req.url ?? '/');
  if (targetProblem) {
    refuseUpgrade(socket, 400, 'Bad Request', targetProblem);
    return null;
  }
  let pathname = '/';
  try {
    pathname = new URL(req.url ?? '/', 'http://x').pathname;
  } catch {
    // The dispatcher refused a malformed target before.
  }
  // An endpoint that does not exist is authenticated only (the dispatcher answers 404 after).
  const verdict = checkRequest({ method: req.method ?? 'GET', headers: nodeHeaders(req) }, { stateChanging: true, path: known ? pathname : undefined }, auth);
  if (verdict.ok) {
    const identity = verdict.identity;
    return {
      session: identity?.session ?? null,
      tokenId: identity?.tokenId ?? null,
      userId: identity?.user.id ?? null,
      expiresAt: identity ? credentialExpiry(identity, auth) : null,
      problem: () => (identity ? credentialProblem(identity, auth) : null),
    };
  }
  logger().info({ url: req.url?.split('?')[0], status: verdict.status, remote: req.socket.remoteAddress }, `WebSocket upgrade refused: ${verdict.detail}`);
  refuseUpgrade(socket, verdict.status, verdict.title, verdict.detail);
  return null;
}
