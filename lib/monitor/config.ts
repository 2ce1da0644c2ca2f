import { leftoverGraceMsFromEnv } from '../config';
import { roleQuotasFromEnv, type RoleQuotas } from '../jobs/quotas';
import { compressSettingsFromEnv, type CompressSettings } from './compress-config';
import { retentionPolicyFromEnv, type RetentionPolicy } from './retention-config';

/**
 * The monitor's settings, from the environment (read at start; every value has a default).
 *
 * - `JOBDECK_RECONCILE_MS` (1000): interval of the reconcile pass that probes every attempt.
 * - `JOBDECK_MAX_RECOVERIES` (3): recoveries allowed per task before the job ends FAILED_CONTROLLER.
 * - `JOBDECK_RECOVERY_BACKOFF_MS` (1000): delay before a task's first recovery; doubles each time,
 *   capped at 60 000.
 * - `JOBDECK_LOST_CONFIRM_MS` (min(500, reconcile)): a "lost" verdict is only believed when a second
 *   probe at least this much later says "lost" again.
 * - `JOBDECK_LAUNCH_GRACE_MS` (10 000): a STARTING attempt with no executor handle anywhere (row,
 *   executor's own record) is "being launched" — by another server on the same database, whose
 *   executor call may take seconds (sbatch; the local launcher under load) — until it is this old
 *   (from its row's createdAt); only then is it "never launched" (lost, then recovered).
 * - `JOBDECK_START_TIMEOUT_MS` (3 600 000): a job that cannot start within this ends FAILED_NO_RESOURCE.
 * - `JOBDECK_CANCEL_GRACE_MS` (10 000): SIGTERM → SIGKILL grace on cancel.
 * - `JOBDECK_LEFTOVER_GRACE_MS` (2 000): SIGTERM → SIGKILL grace for processes an attempt left
 *   behind when it ended (`sleep 300 &`), and for what a deleted job left.
 * - `JOBDECK_CAPACITY_CHECK` (1): `0` admits every job at once (benchmarks).
 * - `JOBDECK_EXIT_WATCH` (1): `0` turns off the executor's immediate exit notification, leaving
 *   only the reconcile pass — pure interval polling, how Ray's job monitor works (the benchmark's
 *   baseline; never useful in production).
 * - `JOBDECK_USAGE_INTERVAL_MS` (5000): interval of the resource-usage sampling round (one look at
 *   every running attempt: lib/monitor/usage.ts); `0` turns sampling off; else 100–3 600 000.
 * - `JOBDECK_MONITOR_MAX_ERRORS` (3): consecutive unexpected errors of one job's step before the
 *   exception path ends the job FAILED_CONTROLLER (temporary database failures never count).
 * - `JOBDECK_QUOTA_<MEMBER|ADMIN>_<PENDING_JOBS|RUNNING_CPUS>` (none): the role defaults of the
 *   per-user quotas (lib/jobs/quotas.ts): admission applies the running-CPU one, the API's
 *   submit the pending one (both read them from here).
 */
export interface MonitorSettings {
  reconcileMs: number;
  maxRecoveries: number;
  recoveryBackoffMs: number;
  maxRecoveryBackoffMs: number;
  lostConfirmMs: number;
  launchGraceMs: number;
  startTimeoutMs: number;
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

/** Environment variables by name (process.env or a plain object in tests). */
type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, def: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}: expected an integer ≥ ${min}, got "${raw}"`);
  return n;
}

function flag(env: Env, name: string, def: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return def;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`${name}: expected 0 or 1, got "${env[name]}"`);
}

/** JOBDECK_USAGE_INTERVAL_MS: 0 (off) or 100–3 600 000 ms. */
function usageInterval(env: Env): number {
  const n = int(env, 'JOBDECK_USAGE_INTERVAL_MS', 5000, 0);
  if (n !== 0 && (n < 100 || n > 3_600_000)) throw new Error(`JOBDECK_USAGE_INTERVAL_MS: expected 0 (off) or 100–3600000, got "${env.JOBDECK_USAGE_INTERVAL_MS}"`);
  return n;
}

/**
 * Reads the settings (see the module comment).
 * @throws Error naming the variable when a value is malformed.
 */
export function monitorSettingsFromEnv(env: Env = process.env): MonitorSettings {
  const reconcileMs = int(env, 'JOBDECK_RECONCILE_MS', 1000, 10);
  const check = (env.JOBDECK_CAPACITY_CHECK ?? '1').trim();
  if (!['0', '1', 'true', 'false', ''].includes(check)) throw new Error(`JOBDECK_CAPACITY_CHECK: expected 0 or 1, got "${env.JOBDECK_CAPACITY_CHECK}"`);
  return {
    reconcileMs,
    maxRecoveries: int(env, 'JOBDECK_MAX_RECOVERIES', 3, 0),
    recoveryBackoffMs: int(env, 'JOBDECK_RECOVERY_BACKOFF_MS', 1000, 0),
    maxRecoveryBackoffMs: 60_000,
    lostConfirmMs: int(env, 'JOBDECK_LOST_CONFIRM_MS', Math.min(500, reconcileMs), 0),
    launchGraceMs: int(env, 'JOBDECK_LAUNCH_GRACE_MS', 10_000, 0),
    startTimeoutMs: int(env, 'JOBDECK_START_TIMEOUT_MS', 3_600_000, 0),
    cancelGraceMs: int(env, 'JOBDECK_CANCEL_GRACE_MS', 10_000, 0),
    leftoverGraceMs: leftoverGraceMsFromEnv(env),
    capacityCheck: !(check === '0' || check === 'false'),
    exitWatch: flag(env, 'JOBDECK_EXIT_WATCH', true),
    maxStepErrors: int(env, 'JOBDECK_MONITOR_MAX_ERRORS', 3, 1),
    usageIntervalMs: usageInterval(env),
    retention: retentionPolicyFromEnv(env),
    quotas: roleQuotasFromEnv(env),
    compress: compressSettingsFromEnv(env),
  };
}

/**
 * JOBDECK_LEASE_MS: how long a server's job leases last without a heartbeat (docs/design.md
 * "Replicas"; default 10 000, 300 – 600 000). Renewed every third of it.
 * @throws Error naming the variable when it is not an integer in range.
 */
export function leaseMsFromEnv(env: Env = process.env): number {
  const n = int(env, 'JOBDECK_LEASE_MS', 10_000, 300);
  if (n > 600_000) throw new Error(`JOBDECK_LEASE_MS: expected an integer ≤ 600000, got "${env.JOBDECK_LEASE_MS}"`);
  return n;
}
