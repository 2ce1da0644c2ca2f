import { readFileSync } from 'node:fs';
import { setting } from '../../config';
import { detectCgroups, prepareCgroups, type CgroupSupport } from './cgroup';
import type { LimitsStatus } from '../types';

/**
 * How the local executor holds its attempts to what they asked for (docs/design.md §7 "Limits"),
 * read once when the executor is made: whether control groups can be used here and which
 * limits they enforce, the process-count cap, and the status `GET /api/health` shows. Where no
 * group can be made (not root, no controller, or the operator turned them off) jobs still run —
 * and the status, the server's log at start and the health answer say that their limits are not
 * enforced: never a silent pretend.
 *
 * Settings: `JOBDECK_CGROUPS` (`auto`, the default: use them where possible; `off`: never),
 * `JOBDECK_CGROUP_PARENT` (the parent group's path in each hierarchy, default `jobdeck`: one per
 * machine — servers of one data folder share it; give another to keep jobdeck instances apart),
 * `JOBDECK_ATTEMPT_PIDS_MAX` (processes and threads one attempt may have at once, default 4096).
 */

/** The local executor's limits (see the module comment). */
export interface LocalLimits {
  /** What groups are made with: a version, or null (none, with the reason). */
  support: CgroupSupport;
  /** Most processes of one attempt at once. */
  pidsMax: number;
  /** What health and the start log say. */
  status: LimitsStatus;
}

type Env = Readonly<Record<string, string | undefined>>;


/**
 * Reads the settings and prepares the parent groups (see the module comment).
 * @throws Error naming the variable for a malformed JOBDECK_CGROUPS, JOBDECK_CGROUP_PARENT or JOBDECK_ATTEMPT_PIDS_MAX.
 */
export function localLimitsFromEnv(env: Env = process.env, mountinfo?: string): LocalLimits {
  const mode = setting('JOBDECK_CGROUPS', env);
  const parent = setting('JOBDECK_CGROUP_PARENT', env);
  const pidsMax = setting('JOBDECK_ATTEMPT_PIDS_MAX', env);
  let support: CgroupSupport;
  if (mode === 'off') support = { version: null, reason: 'control groups are off (JOBDECK_CGROUPS=off)' };
  else {
    let text = mountinfo;
    if (text === undefined) {
      try {
        text = readFileSync('/proc/self/mountinfo', 'utf8');
      } catch {
        text = '';
      }
    }
    support = prepareCgroups(detectCgroups(text, parent));
  }
  return { support, pidsMax, status: statusOf(support) };
}

/** The limits status of `support`. */
function statusOf(s: CgroupSupport): LimitsStatus {
  if (s.version === null) {
    return { cgroups: null, enforced: [], notes: [`attempts run without limits: ${s.reason}; resources.memory, resources.cpus and the GPU devices are not enforced on the local executor (admission still counts them)`] };
  }
  if (s.version === 2) {
    const enforced = (['memory', 'cpu', 'pids'] as const).filter((c) => s.controllers.has(c));
    const missing = (['memory', 'cpu', 'pids'] as const).filter((c) => !s.controllers.has(c));
    return {
      cgroups: 'v2',
      enforced,
      notes: [...(missing.length ? [`cgroup v2 without the ${missing.join(', ')} controller: not enforced`] : []), 'GPU device files are not restricted on cgroup v2 (that needs an eBPF device program): CUDA_VISIBLE_DEVICES names the granted ones'],
    };
  }
  const enforced = (['memory', 'cpu', 'pids', 'devices'] as const).filter((c) => s.mounts[c]);
  const missing = (['cpu', 'pids', 'devices'] as const).filter((c) => !s.mounts[c]);
  return { cgroups: 'v1', enforced, notes: missing.length ? [`cgroup v1 without the ${missing.join(', ')} hierarchy: not enforced`] : [] };
}
