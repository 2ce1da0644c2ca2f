/**
 * The monitor as a server subsystem: registered as a lifecycle (lib/server/start.ts), so it
 * starts after the database opens and BEFORE the server accepts requests (its start() runs the
 * start-up recovery), and stops on SIGTERM without touching running attempts (the next start
 * re-adopts them). The instance lives on shared() (lib/monitor/handle.ts) so route handlers see it.
 *
 * Exposes, for other code: monitorState() (GET /api/monitor) and wakeMonitor(jobId?).
 */
import { getDatabase } from '../db';
import { getExecutor } from '../executors';
import { registerLifecycle } from '../server/start';
import { shared } from '../shared';
import { processMonitor, setProcessMonitor } from './handle';
import { createMonitor, type Monitor } from './monitor';

export { monitorState, wakeMonitor, type MonitorState } from './handle';
export { createMonitor, type Clock, type Monitor, type MonitorHooks, type MonitorOptions, type StepPhase, type WriteContext } from './monitor';
export { isTransientDbError, TransientDatabaseError } from './errors';
export { monitorSettingsFromEnv, type MonitorSettings } from './config';

registerLifecycle({
  name: 'monitor',
  async start() {
    await getDatabase();
    const store = shared().store;
    if (!store) throw new Error('monitor: no store is open (lib/server/start.ts builds it with the database)');
    const m = createMonitor({ store, executor: (name) => getExecutor(name) });
    setProcessMonitor(m);
    try {
      await m.start();
    } catch (err) {
      setProcessMonitor(undefined);
      await m.stop();
      throw err;
    }
  },
  async stop() {
    const m = processMonitor() as Monitor | undefined;
    setProcessMonitor(undefined);
    await m?.stop();
  },
});
