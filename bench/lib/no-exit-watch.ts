/**
 * Server preload for the latency baseline (`node --import tsx --import ./bench/lib/no-exit-watch.ts
 * server.ts`), used only while the monitor has no switch of its own for it (the knob the bench
 * asks for: JOBDECK_EXIT_WATCH=0). It installs the process-wide local executor before the
 * server starts (lib/executors getExecutor() keeps it on shared().executors) with a watch() that
 * never notifies — so the monitor learns of an exit only from its reconcile pass every
 * JOBDECK_RECONCILE_MS: pure polling, as Ray's job monitor works. Everything else is the real
 * executor.
 */
import type { Executor } from '../../lib/executors/types';
import { createLocalExecutor } from '../../lib/executors/local';
import { shared } from '../../lib/shared';

const real = createLocalExecutor();
const bag = ((shared().executors as Record<string, Executor> | undefined) ??= {});
bag.local = { ...real, watch: () => () => undefined };
