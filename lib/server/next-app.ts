import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { setting } from '../config';
import { logger } from '../log';
import { missingBuildProblem } from '../project-root';

/** Next.js's upgrade handler (dev: hot reload over a WebSocket). */
export type NextUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

/** The dashboard's pages as the server uses them: a request handler, an upgrade handler (dev), close(). */
export interface NextApp {
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  upgrade?: NextUpgrade;
  close(): Promise<void>;
}

/**
 * The pages of the dashboard (Next.js) for this folder.
 *
 * Production: Next.js is loaded and prepared on the first request it serves, not at start — the
 * same choice as `preloadEntriesOnStart: false` in next.config.mjs, one level up. A start costs
 * ~0.3 s less CPU (a third of a start on PostgreSQL) and ~10 MB less memory, and a server only
 * asked through the API, the CLI or the clients never loads it; the first page after a start
 * waits for it once (bench/README.md "Measured choices"). The build is checked here, at start, so
 * a server without one still refuses to start, naming what to run.
 *
 * Dev (`--dev`): prepared at once — it serves the API routes too, and its upgrade handler carries
 * hot reload.
 * @throws Error at start when the production build is missing (no BUILD_ID in JOBDECK_NEXT_DIST).
 */
export async function nextApp(dir: string, host: string, port: number, dev: boolean): Promise<NextApp> {
  if (dev) return prepareNext(dir, host, port, true);
  const missing = missingBuildProblem(dir, setting('JOBDECK_NEXT_DIST'));
  if (missing) throw new Error(missing);
  let prepared: Promise<NextApp> | undefined;
  const ready = (): Promise<NextApp> => {
    if (!prepared) {
      const started = performance.now();
      prepared = prepareNext(dir, host, port, false).then(
        (app) => {
          logger().info({ ms: Math.round(performance.now() - started) }, 'dashboard pages loaded (first page request since start)');
          return app;
        },
        (err: unknown) => {
          // The next page request tries again.
          prepared = undefined;
          throw err;
        },
      );
    }
    return prepared;
  };
  return {
    handle: async (req, res) => (await ready()).handle(req, res),
    close: async () => {
      const app = await prepared?.catch(() => undefined);
      await app?.close();
    },
  };
}

async function prepareNext(dir: string, host: string, port: number, dev: boolean): Promise<NextApp> {
  const { default: next } = await import('next');
  const app = next({ dev, dir, hostname: host, port });
  const handle = app.getRequestHandler();
  await app.prepare();
  const upgrade = dev ? (app as unknown as { getUpgradeHandler?: () => NextUpgrade }).getUpgradeHandler?.() : undefined;
  return { handle: (req, res) => handle(req, res), upgrade, close: async (): Promise<void> => void (await app.close?.()) };
}
