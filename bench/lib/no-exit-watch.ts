/**
 * Server preload for the latency baseline (`node --import tsx --import ./bench/lib/no-exit-watch.ts
 * server.ts`), used only while the monitor has no switch of its own for it (the knob the bench
 * asks for: JOBDECK_EXIT_WATCH=0). It installs the process-wide local executor before the
 * server starts (lib/executors getExecutor() keeps it on shared().executors) whose watch()
 * throws — the monitor then treats the attempt as unwatched ("relying on the reconcile pass") and
 * steps the job on every reconcile pass (a watch that merely never fired would leave the job to
 * the every-10th-pass safety net). So the monitor learns of an exit only from its pass every
 * JOBDECK_RECONCILE_MS: pure polling, as Ray's job monitor works. Everything else is the real
 * executor.
 */
import type { Executor } from '../../lib/executors/types';
import { createLocalExecutor } from '../../lib/executors/local';
import { shared } from '../../lib/shared';

const real = createLocalExecutor();
const bag = ((shared().executors as Record<string, Executor> | undefined) ??= {});
bag.local = {
  ...real,
  watch: () => {
    throw new Error('exit notifications are disabled for the polling baseline (bench/lib/no-exit-watch.ts)');
  },
};
