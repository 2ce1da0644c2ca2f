import { leftoverGraceMsFromEnv, setting, type Env } from '../config';
import { roleQuotasFromEnv, type RoleQuotas } from '../jobs/quotas';
import { compressSettingsFromEnv, type CompressSettings } from './compress-config';
import { retentionPolicyFromEnv, type RetentionPolicy } from './retention-config';

/**
 * The monitor's settings, read at start from the environment through lib/config.ts (each
 * variable's bounds, default and meaning are in its table, and in the README's): the reconcile
 * interval, the recovery budget and backoff, the restart backoff (Kubernetes' CrashLoopBackOff numbers), the lost-confirmation delay, the launch grace, the
 * start timeout, the cancel and leftover graces, the capacity check, the exit watch, the usage
 * sampling interval, the exception path's error budget, and the retention, quota and compression
 * settings of their own modules.
 */
export interface MonitorSettings {
  reconcileMs: number;
  maxRecoveries: number;
  recoveryBackoffMs: number;
  maxRecoveryBackoffMs: number;
  /** Restart backoff when the spec gives none (ms; lib/jobs/retry restartDelayMs). */
  restartBackoffMs: number;
  /** Cap of the doubling restart backoff (ms). */
  maxRestartBackoffMs: number;
  lostConfirmMs: number;
  launchGraceMs: number;
  /** ms; null: no start timeout (the default). */
  startTimeoutMs: number | null;
  cancelGraceMs: number;
  leftoverGraceMs: number;
  capacityCheck: boolean;
  /** Subscribe to executor.watch() for immediate exits (false: interval polling only). */
  exitWatch: boolean;
  maxStepErrors: number;
  /** Resource-usage sampling interval (ms); 0: off. */
  usageIntervalMs: number;
  /** The retention policy (lib/monitor/retention-config.ts). */
  retention: RetentionPolicy;
  /** The role defaults of the per-user quotas (lib/jobs/quotas.ts). */
  quotas: RoleQuotas;
  /** The log compressor's settings (lib/monitor/compress-config.ts). */
  compress: CompressSettings;
}

/**
 * Reads the settings (see the module comment).
 * @throws ConfigError naming the variable when a value is malformed.
 */
export function monitorSettingsFromEnv(env: Env = process.env): MonitorSettings {
  const reconcileMs = setting('JOBDECK_RECONCILE_MS', env);
  return {
    reconcileMs,
    maxRecoveries: setting('JOBDECK_MAX_RECOVERIES', env),
    recoveryBackoffMs: setting('JOBDECK_RECOVERY_BACKOFF_MS', env),
    maxRecoveryBackoffMs: 60_000,
    restartBackoffMs: setting('JOBDECK_RESTART_BACKOFF_MS', env),
    maxRestartBackoffMs: setting('JOBDECK_MAX_RESTART_BACKOFF_MS', env),
    lostConfirmMs: setting('JOBDECK_LOST_CONFIRM_MS', env) ?? Math.min(500, reconcileMs),
    launchGraceMs: setting('JOBDECK_LAUNCH_GRACE_MS', env),
    startTimeoutMs: setting('JOBDECK_START_TIMEOUT_MS', env),
    cancelGraceMs: setting('JOBDECK_CANCEL_GRACE_MS', env),
    leftoverGraceMs: leftoverGraceMsFromEnv(env),
    capacityCheck: setting('JOBDECK_CAPACITY_CHECK', env),
    exitWatch: setting('JOBDECK_EXIT_WATCH', env),
    maxStepErrors: setting('JOBDECK_MONITOR_MAX_ERRORS', env),
    usageIntervalMs: setting('JOBDECK_USAGE_INTERVAL_MS', env),
    retention: retentionPolicyFromEnv(env),
    quotas: roleQuotasFromEnv(env),
    compress: compressSettingsFromEnv(env),
  };
}

/**
 * JOBDECK_LEASE_MS: how long a server's job leases last without a heartbeat (docs/design.md
 * "Replicas"; default 10 000, 300 – 600 000). Renewed every third of it.
 * @throws ConfigError naming the variable when it is not an integer in range.
 */
export function leaseMsFromEnv(env: Env = process.env): number {
  return setting('JOBDECK_LEASE_MS', env);
}
