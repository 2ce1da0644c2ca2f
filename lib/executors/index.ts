import { shared } from '../shared';
import { createLocalExecutor } from './local';
import { createSlurmExecutor } from './slurm';
import type { Executor } from './types';

export type { AttemptHandle, ExitListener, Executor, LaunchRequest, ProbeResult } from './types';

/**
 * Factories of the known executors, by the name stored on Attempt.executor. Another backend
 * (Slurm) adds one line here.
 */
const FACTORIES: Record<string, () => Executor> = {
  local: () => createLocalExecutor(),
  slurm: () => createSlurmExecutor(),
};

/** Names getExecutor() accepts. */
export function executorNames(): string[] {
  return Object.keys(FACTORIES);
}

/**
 * The process-wide executor named `name` ("local"), created on first use and kept on
 * `shared()` (so server.ts and the route bundles share one instance — and with it the knowledge
 * of which attempts this process is the parent of).
 * @throws Error for an unknown name.
 */
export function getExecutor(name: string): Executor {
  const factory = Object.hasOwn(FACTORIES, name) ? FACTORIES[name] : undefined;
  if (!factory) throw new Error(`unknown executor "${name}" (known: ${executorNames().join(', ')})`);
  const bag = ((shared().executors as Record<string, Executor> | undefined) ??= {});
  return (bag[name] ??= factory());
}
