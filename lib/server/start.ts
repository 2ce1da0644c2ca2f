import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpGate, gateUpgrade, refuseUpgrade } from '../auth/gate';
import { listPublicFiles } from '../auth/policy';
import { prepareServerAuth } from '../auth/server';
import { loadConfig } from '../config';
import { closeDatabase, initDatabase } from '../db/client';
import { logger } from '../log';
import { shared } from '../shared';
import { createStore } from '../store';
import { loadApiRouter } from './api-router';
import { findUpgradeRoute } from './upgrade';

/** Hooks subsystems register to start after the database opens and stop before it closes. */
export interface Lifecycle {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Registers a subsystem (monitor, log hub…) to run inside the server. Order is kept. */
export function registerLifecycle(l: Lifecycle): void {
  const list = ((shared().lifecycles as Lifecycle[] | undefined) ??= []);
  if (!list.some((x) => x.name === l.name)) list.push(l);
  shared().lifecycles = list;
}

/** A started server. */
export interface RunningServer {
  url: string;
  server: http.Server;
  /** Stops subsystems (running jobs keep running), closes HTTP and the database. */
  close(): Promise<void>;
}

/** Options for startServer; defaults come from lib/config.ts. */
export interface StartOptions {
  port?: number;
  host?: string;
  /** Next.js dev mode (hot reload). */
  dev?: boolean;
  /** The project folder holding app/ and .next/. */
  dir?: string;
}

/**
 * Starts jobdeck in this process: opens (and migrates) the database, starts the registered
 * subsystems (monitor recovery runs before the first request is accepted), prepares Next.js and
 * listens. `/api/…` requests go to the route handlers through lib/server/api-router.ts (not
 * through Next's pipeline) except in dev mode; everything else to Next. WebSocket upgrades on `/ws/…` go to the routes registered with registerUpgradeRoute;
 * `/_next/…` upgrades go to Next in dev mode; every other upgrade is destroyed.
 *
 * @throws when the database cannot be opened or the port is taken.
 */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const cfg = loadConfig();
  const port = opts.port ?? cfg.port;
  const host = opts.host ?? cfg.host;
  const dir = opts.dir ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const log = logger();
  // The API route modules load (~0.4 s of module loading) while the database opens and the
  // monitor recovers, not after: the time until listening is what a restart's recovery waits for.
  const apiLoading = opts.dev ? null : loadApiRouter(path.join(dir, 'app'));
  apiLoading?.catch(() => undefined);

  // Security first (lib/auth): refuses a non-loopback address without JOBDECK_TOKEN, loads or
  // creates the token — before the database opens, so a refused start touches nothing.
  const auth = prepareServerAuth({ home: cfg.home, host });
  const gate = createHttpGate({ dev: !!opts.dev, publicFiles: listPublicFiles(dir) });

  const db = await initDatabase();
  // One store per database: its bus is how the monitor and the WebSocket hub hear the API's writes.
  shared().store = createStore(db.prisma);
  const lifecycles = (shared().lifecycles as Lifecycle[] | undefined) ?? [];
  for (const l of lifecycles) {
    await l.start();
    log.debug({ subsystem: l.name }, 'started');
  }

  const { default: next } = await import('next');
  const app = next({ dev: !!opts.dev, dir, hostname: host, port });
  const handle = app.getRequestHandler();
  await app.prepare();
  const nextUpgrade = opts.dev ? (app as unknown as { getUpgradeHandler?: () => (req: http.IncomingMessage, socket: unknown, head: Buffer) => void }).getUpgradeHandler?.() : undefined;

  // `/api/…` is served by the route handlers directly (lib/server/api-router.ts); Next serves the
  // pages. In dev mode Next serves both (hot reload of route files).
  const api = apiLoading ? await apiLoading : null;
  const server = http.createServer((req, res) => {
    // Every request passes the auth gate first (token/session, Host, Origin, body cap).
    if (!gate(req, res)) return;
    if (api && req.url?.startsWith('/api/')) {
      void api.serve(req, res);
      return;
    }
    handle(req, res).catch((err: unknown) => {
      log.error({ err, url: req.url }, 'request failed');
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  });
  // Idle keep-alive sockets stay open well past clients' own idle timeouts (undici: 4 s), so a
  // client whose event loop lags never sends a request on a socket the server is closing
  // (ECONNRESET under load); headersTimeout must stay above it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // Set when close() begins: no new WebSocket is accepted while subsystems stop (a client that
  // reconnects during shutdown would otherwise get a fresh stream and hold the stop open).
  let closing = false;
  server.on('upgrade', (req, socket, head) => {
    if (closing) return refuseUpgrade(socket, 503, 'Service Unavailable', 'jobdeck is stopping');
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://x').pathname;
    } catch {
      return refuseUpgrade(socket, 400, 'Bad Request', 'malformed request target');
    }
    if (pathname.startsWith('/_next/') && nextUpgrade) return nextUpgrade(req, socket, head);
    // Every WebSocket is authenticated and Origin-checked before any route sees it.
    if (!gateUpgrade(req, socket)) return;
    const found = findUpgradeRoute(pathname);
    if (found) return found.route.handle(req, socket, head, found.params);
    refuseUpgrade(socket, 404, 'Not Found', `no WebSocket endpoint at ${pathname}`);
  });
  // Next adds its own upgrade listener on the first request; keep ours the only one.
  const origOn = server.on.bind(server);
  server.on = ((event: string, listener: (...args: unknown[]) => void) => (event === 'upgrade' ? server : origOn(event, listener))) as typeof server.on;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const actualPort = typeof addr === 'object' && addr ? addr.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  // The login URL first: whoever waits for "listening" has it already.
  auth.announce(log, actualPort);
  log.info({ url, database: db.kind }, `jobdeck listening on ${url} (database: ${db.kind})`);

  let closed = false;
  return {
    url,
    server,
    close: async () => {
      if (closed) return;
      closed = true;
      closing = true;
      for (const l of [...lifecycles].reverse()) await l.stop().catch((err: unknown) => log.error({ err, subsystem: l.name }, 'stop failed'));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
      await app.close?.().catch(() => undefined);
      await closeDatabase();
      shared().store = undefined;
    },
  };
}
