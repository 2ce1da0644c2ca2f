import http from 'node:http';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { bodyLimitFor, bodyLimitSettings, type BodyLimitSettings } from '../api/body-limits';
import { createHttpGate, gateUpgrade, METRICS_PATH, refuseUpgrade } from '../auth/gate';
import { listPublicFiles } from '../auth/policy';
import { prepareServerAuth } from '../auth/server';
import type { AuthState } from '../auth/state';
import { isolationFromEnv, jobApiUrl, loadConfig, type Config } from '../config';
import { openDatabase } from '../db/client';
import { checkDataFolder, databaseLabel } from '../db/identity';
import { createExecutors } from '../executors';
import { announceListening, logger } from '../log';
import { createStore } from '../store';
import { leaseMsFromEnv, monitorSettingsFromEnv } from '../monitor/config';
import { hostIdentity, newServerId } from '../monitor/lease';
import { createMonitor } from '../monitor/monitor';
import type { RunAsOptions } from '../monitor/types';
import { prepareDataFolderModes, settleAutoIsolation } from './data-modes';
import { attemptTokens, isolationMode } from './isolation';
import { scheduleSettingsFromEnv } from '../jobs/schedule';
import { ScheduleLoop } from './schedules';
import { WsHub, wsRoutes } from '../ws';
import { projectRoot } from '../project-root';
import { loadApiRouter } from './api-router';
import { createMetrics } from './metrics';
import { noteServerStart, noteServerStop } from './history';
import { NotifyRelay } from './relay';
import { publishServices, unpublishServices, type Services } from './services';
import { findUpgradeRoute, type UpgradeRoute } from './upgrade';
import { nextApp, type NextApp, type NextUpgrade } from './next-app';

/** A started server. */
export interface RunningServer {
  url: string;
  server: http.Server;
  /** What the server is made of (also what route handlers read through services()). */
  services: Services;
  /** Stops the hub and the monitor (running jobs keep running), closes HTTP and the database. */
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
 * Builds the services after the auth check, in dependency order — database, executors, monitor,
 * WebSocket hub — and starts the monitor (its start-up recovery, awaited). On a failure, what was
 * built is stopped and closed again before the error is rethrown.
 * @throws what openDatabase() or the monitor's start throws; Error naming the variable for a
 *   malformed JOBDECK_* monitor setting.
 */
async function startServices(config: Config, log: Logger, auth: AuthState, bodyLimits: BodyLimitSettings, runAs: RunAsOptions): Promise<Services> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl });
  log.info({ database: db.kind, migrations: db.migrations.length }, 'database open');
  try {
    // Before anything reads a job: this folder's attempts must be this database's.
    await checkDataFolder(db.prisma, config.home, databaseLabel(config.databaseUrl, path.join(config.home, 'db')));
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  // One store per database: its bus is how the monitor and the WebSocket hub hear the API's writes.
  const store = createStore(db.prisma);
  // Users and personal tokens, before the first request is checked against them.
  await auth.directory.reload(store);
  // Attempts' own tokens authenticate from their creation and stop at their attempt's end.
  store.bus.on('change', attemptTokens(store, auth));
  auth.directory.start(store, (err) => log.warn({ err }, 'reading users and tokens failed; the last read holds'));
  let built: Partial<Pick<Services, 'monitor' | 'ws' | 'relay' | 'metrics'>> = {};
  try {
    const executors = createExecutors();
    // The local executor now: it says once how attempts are held to their resources (control
    // groups or not) and refuses a malformed JOBDECK_LOCAL_GPUS or JOBDECK_CGROUPS, or a container
    // runtime (JOBDECK_CONTAINER_RUNTIME) that does not answer, before the port opens.
    executors.get('local');
    const settings = monitorSettingsFromEnv();
    // PostgreSQL may be shared by several servers: each owns its jobs by lease (docs/design.md
    // "Replicas"). PGlite has one holder (lib/db/lock.ts): no leases, no cost.
    const lease = db.kind === 'postgresql' ? { server: { id: newServerId(), host: hostname(), hostId: hostIdentity(), pid: process.pid }, leaseMs: leaseMsFromEnv() } : undefined;
    if (lease) log.info({ serverId: lease.server.id, hostId: lease.server.hostId }, `server id ${lease.server.id}`);
    const monitor = createMonitor({ ...settings, db: db.prisma, store, executor: (name) => executors.get(name), lease, runAs });
    // The other servers' writes on this server's bus, and this one's on theirs.
    const relay = lease && config.databaseUrl ? new NotifyRelay(config.databaseUrl, store, lease.server.id, log) : null;
    built = { monitor, relay };
    await relay?.start();
    const ws = new WsHub({ store, auth });
    // Listening to the bus before the monitor starts: the recovery's writes count too.
    const metrics = createMetrics({ store, monitor, ws });
    built = { monitor, ws, relay, metrics };
    // The restart in each unfinished job's history, before the recovery's own entries.
    await noteServerStart(store, log, lease ? { serverId: lease.server.id, leaseMs: lease.leaseMs } : undefined);
    await monitor.start();
    log.debug({ subsystem: 'monitor' }, 'started');
    // Every server looks for due schedules; the fire's guarded write makes each time fire once.
    const schedules = new ScheduleLoop({ store, settings: scheduleSettingsFromEnv(process.env), quotas: settings.quotas, serverId: lease?.server.id ?? null, log });
    schedules.start();
    return { config, log, auth, db, store, executors, settings, monitor, ws, relay, metrics, bodyLimits, schedules, isolation: runAs.isolation, replicas: lease ? { serverId: lease.server.id, leaseMs: lease.leaseMs } : null };
  } catch (err) {
    built.metrics?.close();
    await built.ws?.stop().catch(() => undefined);
    await built.monitor?.stop().catch(() => undefined);
    await built.relay?.stop().catch(() => undefined);
    auth.directory.stop();
    await db.close().catch(() => undefined);
    throw err;
  }
}

/** Stops what startServices() started, in reverse order (the database stays open). */
async function stopServices(s: Services): Promise<void> {
  await s.schedules.stop().catch((err: unknown) => s.log.error({ err, subsystem: 'schedules' }, 'stop failed'));
  s.metrics.close();
  s.auth.directory.stop();
  await s.ws.stop().catch((err: unknown) => s.log.error({ err, subsystem: 'ws' }, 'stop failed'));
  await s.monitor.stop().catch((err: unknown) => s.log.error({ err, subsystem: 'monitor' }, 'stop failed'));
  await s.relay?.stop().catch((err: unknown) => s.log.error({ err, subsystem: 'relay' }, 'stop failed'));
}

/**
 * Dispatches WebSocket upgrades: refused while stopping; `/_next/…` to Next in dev mode; every
 * other one passes the auth gate, then goes to its route, or is refused with 404. Next's own
 * `upgrade` listener (added on its first request) is kept off the server.
 */
function dispatchUpgrades(server: http.Server, auth: AuthState, routes: readonly UpgradeRoute[], closing: () => boolean, nextUpgrade: NextUpgrade | undefined): void {
  server.on('upgrade', (req, socket, head) => {
    if (closing()) return refuseUpgrade(socket, 503, 'Service Unavailable', 'jobdeck is stopping');
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://x').pathname;
    } catch {
      return refuseUpgrade(socket, 400, 'Bad Request', 'malformed request target');
    }
    if (pathname.startsWith('/_next/') && nextUpgrade) return nextUpgrade(req, socket, head);
    // Every WebSocket is authenticated and Origin-checked before any route sees it.
    const found = findUpgradeRoute(routes, pathname);
    const caller = gateUpgrade(auth, req, socket, found !== null);
    if (!caller) return;
    if (found) return found.route.handle(req, socket, head, found.params, caller);
    refuseUpgrade(socket, 404, 'Not Found', `no WebSocket endpoint at ${pathname}`);
  });
  const origOn = server.on.bind(server);
  server.on = ((event: string, listener: (...args: unknown[]) => void) => (event === 'upgrade' ? server : origOn(event, listener))) as typeof server.on;
}

/**
 * Starts jobdeck in this process: checks the auth configuration, builds and starts the services
 * (the monitor's recovery runs before the first request is accepted), publishes them for the
 * route handlers, checks the dashboard's build (Next.js itself loads on the first page request:
 * lib/server/next-app.ts) and listens; requests and upgrades are routed as docs/design.md §9,
 * "Wiring and dependencies" says.
 *
 * @throws AuthConfigError for an unsafe binding or a malformed token setting (nothing opened);
 *   when the database cannot be opened, the monitor cannot start, or the port is taken; Error
 *   when another jobdeck server already runs in this process.
 */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const cfg = loadConfig();
  const port = opts.port ?? cfg.port;
  const host = opts.host ?? cfg.host;
  const dir = opts.dir ?? projectRoot();
  const log = logger();
  // The API route modules load (~0.4 s of module loading) while the database opens and the
  // monitor recovers, not after: the time until listening is what a restart's recovery waits for.
  const apiLoading = opts.dev ? null : loadApiRouter(path.join(dir, 'app'));
  apiLoading?.catch(() => undefined);

  // Security first (lib/auth): refuses a non-loopback address without JOBDECK_TOKEN, loads or
  // creates the token — before the database opens, so a refused start touches nothing.
  const auth = prepareServerAuth({ home: cfg.home, host });

  // Read before anything opens: a malformed limit refuses the start, naming its variable.
  const bodyLimits = bodyLimitSettings();
  // As whom jobs run (docs/design.md §16): decided, and the data folder's modes made to fit it,
  // before the database opens — a refused start touches nothing else.
  const isolation = await settleAutoIsolation(cfg.home, isolationFromEnv());
  const modeWarnings = prepareDataFolderModes(cfg.home, isolation);
  // The URL attempts call back: known now unless the port is chosen at listen (PORT=0).
  const api = { url: port || process.env.JOBDECK_URL ? jobApiUrl(host, port) : null };
  const s = await startServices(cfg, log, auth.result.state, bodyLimits, { isolation, api });
  for (const w of modeWarnings) log.warn(w);
  log.info({ isolation: isolationMode(isolation), runAccount: isolation.on ? isolation.runAccount : undefined }, isolation.why);
  if (!isolation.on && isolation.serverUid === 0) {
    log.warn(isolation.singleUser ? "the first admin's jobs run as root (single-user): isolation could not be turned on, see the line above" : 'jobs run as root: JOBDECK_ISOLATION=off on a jobdeck that runs as root gives every user who may submit a root shell');
  }
  // Set when close() begins: no new WebSocket is accepted while the services stop (a client that
  // reconnects during shutdown would otherwise get a fresh stream and hold the stop open).
  let closing = false;
  let server: http.Server | undefined;
  let app: NextApp | undefined;
  try {
    // The gate audits logins through the login URL: it needs the store.
    const gate = createHttpGate({ auth: auth.result.state, store: s.store, dev: !!opts.dev, publicFiles: listPublicFiles(dir), bodyLimit: (method, pathname) => bodyLimitFor(method, pathname, bodyLimits) });
    publishServices(s);
    app = await nextApp(dir, host, port, !!opts.dev);
    // `/api/…` is served by the route handlers directly (lib/server/api-router.ts); Next serves
    // the pages. In dev mode Next serves both (hot reload of route files).
    const api = apiLoading ? await apiLoading : null;
    const handle = app.handle;
    server = http.createServer((req, res) => {
      // Every request passes the auth gate first (token/session, Host, Origin, body cap).
      if (!gate(req, res)) return;
      if (req.url === METRICS_PATH || req.url?.startsWith(`${METRICS_PATH}?`)) {
        void s.metrics.serve(req, res);
        return;
      }
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
    dispatchUpgrades(server, s.auth, wsRoutes(s.ws), () => closing, app.upgrade);
    await listen(server, port, host);
  } catch (err) {
    server?.close();
    await app?.close().catch(() => undefined);
    await stopServices(s);
    await s.db.close();
    unpublishServices(s);
    throw err;
  }
  const addr = server.address();
  const actualPort = typeof addr === 'object' && addr ? addr.port : port;
  api.url ??= jobApiUrl(host, actualPort);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  // The login URL first: whoever waits for "listening" has it already.
  const login = auth.announce(log, actualPort);
  const listening = `jobdeck listening on ${url} (database: ${s.db.kind})`;
  log.info({ url, database: s.db.kind }, listening);
  // Not on a terminal, a person reads these two lines first, plain, then the JSON logs; the
  // first start's login URL (it carries the token) is printed plain on a terminal too.
  announceListening(login ? [listening, login.line] : [listening], login?.secret ? [login.line] : []);

  const srv = server;
  const next = app;
  let closed = false;
  return {
    url,
    server: srv,
    services: s,
    close: async () => {
      if (closed) return;
      closed = true;
      closing = true;
      await noteServerStop(s.store, s.log, s.replicas ?? undefined);
      await stopServices(s);
      await new Promise<void>((resolve) => {
        srv.close(() => resolve());
        srv.closeAllConnections?.();
      });
      await next.close().catch(() => undefined);
      await s.db.close().catch(() => undefined);
      unpublishServices(s);
    },
  };
}

/**
 * Listens on `host:port` with keep-alive timeouts set. Idle keep-alive sockets stay open well
 * past clients' own idle timeouts (undici: 4 s), so a client whose event loop lags never sends a
 * request on a socket the server is closing (ECONNRESET under load); headersTimeout must stay
 * above it.
 * @throws the listen error (EADDRINUSE…).
 */
function listen(server: http.Server, port: number, host: string): Promise<void> {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
