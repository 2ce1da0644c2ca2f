/**
 * jobdeck's server: one Node process running the Next.js handler, the WebSocket upgrades and
 * the background monitor. Start with `npm start` (bin/server.mjs: its bundle when fresh, else this
 * file under tsx; `node --import tsx server.ts` runs the sources directly).
 * SIGTERM / SIGINT stop the server cleanly; running jobs keep running and are re-adopted by the
 * next start.
 */
import { setting } from './lib/config';
import { announceListening, holdLogUntilListening, logger } from './lib/log';
import { startServer } from './lib/server/start';
import { applyV8Flags, collectStartupGarbage, missingNodeFlags, STARTUP_GC_DELAY_MS } from './lib/server/v8-flags';

// Not on a terminal, the first lines are plain "listening" and login lines (lib/log.ts).
holdLogUntilListening();
const log = logger();
try {
  const flags = applyV8Flags();
  if (flags.length) log.info({ flags }, 'V8 flags applied');
  const missing = missingNodeFlags();
  if (missing.length) log.info({ missing }, `node was started without ${missing.join(' ')} (npm start passes it; NODE_OPTIONS may): the server will use ~40 MB more memory`);
} catch (err) {
  announceListening([]);
  log.fatal({ err }, (err as Error).message);
  process.exit(1);
}
startServer({ dev: setting('JOBDECK_DEV') }).then(
  (srv) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'stopping (running jobs keep running)');
      srv.close().then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'stop failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    // Start-up's garbage, once the server is up (lib/server/v8-flags.ts; ~10–15 MB of idle RSS).
    setTimeout(() => {
      if (stopping) return;
      const ms = collectStartupGarbage();
      log.debug({ ms: Math.round(ms) }, "start-up's garbage collected");
    }, STARTUP_GC_DELAY_MS).unref();
  },
  (err: unknown) => {
    announceListening([]);
    log.fatal({ err }, `jobdeck failed to start: ${(err as Error).message}`);
    process.exit(1);
  },
);
