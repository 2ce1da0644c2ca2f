/**
 * The services of a running jobdeck server, and the one process-wide slot that holds them.
 * startServer() (lib/server/start.ts) builds them and publishes them here; only the route
 * handlers of app/api read the slot, because Next.js loads them as its own module copies, which
 * share globalThis with the server but not its modules (docs/design.md §9, "Wiring and
 * dependencies"). Type-only imports: a route bundle that reads the slot loads none of the
 * services' modules.
 */
import type { Logger } from 'pino';
import type { BodyLimitSettings } from '../api/body-limits';
import type { AuthState } from '../auth/state';
import type { Config, Isolation } from '../config';
import type { Database } from '../db/client';
import type { ExecutorRegistry } from '../executors';
import type { MonitorSettings } from '../monitor/config';
import type { Monitor } from '../monitor/monitor';
import type { ReplicaScope } from './history';
import type { NotifyRelay } from './relay';
import type { Store } from '../store';
import type { WsHub } from '../ws/hub';
import type { Metrics } from './metrics';
import type { ScheduleLoop } from './schedules';

/** What a running server is made of, in the order startServer() builds it. */
export interface Services {
  /** The configuration read at start (lib/config.ts). */
  config: Config;
  /** The server's logger (lib/log.ts). */
  log: Logger;
  /** Token hash, session key, allowed origins (lib/auth/state.ts), loaded before anything opens. */
  auth: AuthState;
  /** The open, migrated database (lib/db). */
  db: Database;
  /** The store over that database: every statement, and the bus the monitor and the hub hear (lib/store). */
  store: Store;
  /** The executors by name; the local one owns the attempt launcher (lib/executors). */
  executors: ExecutorRegistry;
  /** The monitor's settings read at start (lib/monitor/config.ts; JOBDECK_* variables). */
  settings: MonitorSettings;
  /** The monitor (started: recovery done before the server listens). */
  monitor: Monitor;
  /** The schedule loop: fires due schedules (lib/server/schedules.ts); its settings and clock serve the schedule routes. */
  schedules: ScheduleLoop;
  /** The WebSocket hub behind /ws/jobs and /ws/jobs/:id (lib/ws). */
  ws: WsHub;
  /** Several servers on one PostgreSQL: the bus relayed over NOTIFY (lib/server/relay.ts); null on one server. */
  relay: NotifyRelay | null;
  /** Several servers on one PostgreSQL: this server's id and lease length (lib/server/history.ts scopes its entries by them); null on one server. */
  replicas: ReplicaScope | null;
  /** The Prometheus metrics behind GET /metrics (lib/server/metrics.ts). */
  metrics: Metrics;
  /** The operator's request body limits (lib/api/body-limits.ts), read at start. */
  bodyLimits: BodyLimitSettings;
  /** As whom jobs run (lib/config.ts isolationFromEnv, docs/design.md §16), read at start. */
  isolation: Isolation;
}

declare global {
  /** The running server's services (see the module comment); undefined when none runs. */
  var __jobdeckServices: Services | undefined;
}

/** Thrown by services() when no jobdeck server runs in this process. */
export class ServerNotStartedError extends Error {
  constructor() {
    super('the jobdeck server has not started in this process: route handlers run inside it (npm start, `jobdeck server`), not under plain `next start`');
    this.name = 'ServerNotStartedError';
  }
}

/**
 * The running server's services.
 * @throws ServerNotStartedError when no server has published them (or it has stopped).
 */
export function services(): Services {
  const s = globalThis.__jobdeckServices;
  if (!s) throw new ServerNotStartedError();
  return s;
}

/** The running server's services, or undefined when none runs in this process. */
export function startedServices(): Services | undefined {
  return globalThis.__jobdeckServices;
}

/**
 * Publishes a server's services (startServer, once they are started).
 * @throws Error when another server's services are published: one server per process.
 */
export function publishServices(s: Services): void {
  if (globalThis.__jobdeckServices && globalThis.__jobdeckServices !== s) throw new Error('a jobdeck server already runs in this process');
  globalThis.__jobdeckServices = s;
}

/** Clears the slot if it holds `s` (the server's close()). */
export function unpublishServices(s: Services): void {
  if (globalThis.__jobdeckServices === s) globalThis.__jobdeckServices = undefined;
}
