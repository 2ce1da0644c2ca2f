/**
 * The executor kinds' table (lib/jobs/executor-kinds.ts) against the executors the registry
 * makes: every kind has one, under its name, and what the table says an executor can do is what
 * its instance offers — the spec rules and the monitor read the table, the monitor calls the
 * instance.
 */
import { describe, expect, it } from 'vitest';
import { createExecutors } from '../../lib/executors/index';
import { capabilitiesOf, DEFAULT_EXECUTOR, EXECUTOR_KINDS, EXECUTOR_NAMES, isExecutorKind, kindsWith } from '../../lib/jobs/executor-kinds';
import { serverExecutor } from '../../lib/jobs/spec';

describe('executor kinds', () => {
  it('the registry makes one executor per kind, named as the kind, offering held() exactly where the table says', () => {
    const registry = createExecutors();
    expect(registry.names()).toEqual([...EXECUTOR_NAMES]);
    for (const kind of EXECUTOR_NAMES) {
      const ex = registry.get(kind);
      expect(ex.name).toBe(kind);
      expect(typeof ex.held === 'function').toBe(EXECUTOR_KINDS[kind].held);
    }
    // capacity() of a host kind answers without a backend; the others' ask their cluster.
    for (const kind of kindsWith((c) => c.hostCpus)) expect(registry.get(kind).capacity().host).toBe(true);
  });

  it('answers by name, exactly; the default is a kind', () => {
    expect(isExecutorKind('slurm')).toBe(true);
    expect(isExecutorKind('Slurm')).toBe(false);
    expect(isExecutorKind('toString')).toBe(false);
    expect(capabilitiesOf('aws')).toBeUndefined();
    expect(capabilitiesOf('slurm')?.multiNode).toBe(true);
    expect(isExecutorKind(DEFAULT_EXECUTOR)).toBe(true);
    expect(serverExecutor({})).toBe(DEFAULT_EXECUTOR);
    expect(() => serverExecutor({ JOBDECK_EXECUTOR: 'aws' })).toThrow(`JOBDECK_EXECUTOR must be one of ${EXECUTOR_NAMES.join(', ')}`);
  });
});
