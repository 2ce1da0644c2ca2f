import type { Logger } from 'pino';

/**
 * Process-wide singletons. server.ts (run by tsx) and the Next.js route bundles each load their
 * own copy of every module, so a module-level singleton would exist twice; keeping them on
 * `globalThis` gives both sides one object (ENVIRONMENT.md, "Next.js route handlers and the
 * custom server share a process, not modules").
 */
export interface Shared {
  logger?: Logger;
  /** The open database (lib/db/client.ts), or the promise of it while opening. */
  db?: Promise<import('./db/client').Database>;
  /** The store handle over the open database (lib/store createStore), set with it by lib/server/start.ts. */
  store?: import('./store').Store;
  /** Anything else a subsystem keeps process-wide (monitor, log hub, auth), by name. */
  [key: string]: unknown;
}

declare global {
  var __jobdeck: Shared | undefined;
}

/** Returns the process-wide singleton bag, creating it on first use. */
export function shared(): Shared {
  return (globalThis.__jobdeck ??= {});
}
