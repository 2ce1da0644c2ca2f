import { createLocalExecutor } from './local/executor';
import { createSlurmExecutor } from './slurm/executor';
import type { ExecutorKind } from '../jobs/executor-kinds';
import type { Executor } from './types';

export type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

/**
 * Factories of the executor kinds (lib/jobs/executor-kinds.ts), by the name stored on
 * Attempt.executor: one per kind, so a kind added to that table without a factory here does not
 * compile. Another backend adds its kind there and one line here.
 */
const FACTORIES: Record<ExecutorKind, () => Executor> = {
  local: () => createLocalExecutor(),
  slurm: () => createSlurmExecutor(),
};

/**
 * The executors of one server, by name: each created on first use and then the same instance —
 * the local one knows which attempts this process is the parent of, and owns the attempt
 * launcher process (lib/executors/local/launcher.ts). The server makes one registry at start
 * (lib/server/start.ts) and hands it to the monitor and the API.
 */
export interface ExecutorRegistry {
  /**
   * The executor named `name` ("local", "slurm").
   * @throws Error for an unknown name (the message lists the known ones).
   */
  get(name: string): Executor;
  /** Every name get() accepts. */
  names(): string[];
}

/** Creates an executor registry (nothing is created until get()). */
export function createExecutors(factories: Record<string, () => Executor> = FACTORIES): ExecutorRegistry {
  const made = new Map<string, Executor>();
  const names = () => Object.keys(factories);
  return {
    names,
    get(name) {
      let ex = made.get(name);
      if (ex) return ex;
      const factory = Object.hasOwn(factories, name) ? factories[name] : undefined;
      if (!factory) throw new Error(`unknown executor "${name}" (known: ${names().join(', ')})`);
      ex = factory();
      made.set(name, ex);
      return ex;
    },
  };
}
