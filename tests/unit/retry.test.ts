import { describe, expect, it } from 'vitest';
import { classifyExit, decideRecovery, decideRestart, recoveryDelayMs, restartDelayMs } from '../../lib/jobs/retry';
import { attemptDir, attemptLogPath, jobDir } from '../../lib/jobs/paths';
import { isTransientDbError, TransientDatabaseError } from '../../lib/monitor/errors';
import { monitorSettingsFromEnv } from '../../lib/monitor/config';
import { readTaskSpec } from '../../lib/monitor/taskspec';

const policy = (max: number, codes: number[] = []) => ({ maxRestartsOnErrors: max, recoverOnExitCodes: codes });

describe('decideRestart (SkyPilot seed: decide after ANY task fails, FAILED and FAILED_SETUP alike)', () => {
  it('restarts, counted, while restarts < max_restarts_on_errors', () => {
    expect(decideRestart({ status: 'FAILED', exitCode: 1 }, 0, policy(1))).toMatchObject({ action: 'restart', counted: true });
    expect(decideRestart({ status: 'FAILED', exitCode: 1 }, 1, policy(2))).toMatchObject({ action: 'restart', counted: true, reason: expect.stringContaining('restart 2 of 2') });
  });

  it('ends the job with the failure once the budget is spent', () => {
    expect(decideRestart({ status: 'FAILED', exitCode: 1 }, 1, policy(1))).toEqual({
      action: 'fail',
      status: 'FAILED',
      reason: 'run exited with code 1; restarts spent (1 of 1)',
    });
  });

  it("names a gang's failing rank in the reason", () => {
    expect(decideRestart({ status: 'FAILED', exitCode: 3, rank: 1 }, 0, policy(1))).toEqual({ action: 'restart', counted: true, delayMs: 0, reason: 'rank 1: run exited with code 3: restart 1 of 1' });
    expect(decideRestart({ status: 'FAILED_SETUP', exitCode: 2, rank: 2 }, 0, policy(0))).toMatchObject({ action: 'fail', status: 'FAILED_SETUP', reason: 'rank 2: setup exited with code 2; no restarts allowed (max_restarts_on_errors: 0)' });
  });

  it('treats FAILED_SETUP exactly like FAILED and keeps its status at the end', () => {
    expect(decideRestart({ status: 'FAILED_SETUP', exitCode: 2 }, 0, policy(1))).toMatchObject({ action: 'restart', counted: true });
    expect(decideRestart({ status: 'FAILED_SETUP', exitCode: 2 }, 1, policy(1))).toMatchObject({ action: 'fail', status: 'FAILED_SETUP', reason: expect.stringContaining('setup exited with code 2') });
  });

  it('with max 0: no restart at all', () => {
    expect(decideRestart({ status: 'FAILED', exitCode: 7 }, 0, policy(0))).toMatchObject({ action: 'fail', status: 'FAILED', reason: expect.stringContaining('max_restarts_on_errors: 0') });
  });

  it('an exit code in recover_on_exit_codes restarts without spending the budget, even when it is spent', () => {
    expect(decideRestart({ status: 'FAILED', exitCode: 42 }, 0, policy(0, [42]))).toMatchObject({ action: 'restart', counted: false });
    expect(decideRestart({ status: 'FAILED', exitCode: 42 }, 5, policy(1, [3, 42]))).toMatchObject({ action: 'restart', counted: false });
    // other codes still count
    expect(decideRestart({ status: 'FAILED', exitCode: 1 }, 0, policy(1, [42]))).toMatchObject({ action: 'restart', counted: true });
    expect(decideRestart({ status: 'FAILED', exitCode: 1 }, 1, policy(1, [42]))).toMatchObject({ action: 'fail' });
  });

  it('an unknown exit code never matches recover_on_exit_codes', () => {
    expect(decideRestart({ status: 'FAILED', exitCode: null }, 0, policy(0, [0, 1]))).toMatchObject({ action: 'fail' });
  });

  it('a restart waits restart_backoff after attempt 1, doubling per attempt up to the cap; the reason says how long', () => {
    const backoff = { ...policy(5, [75]), backoffMs: 30_000, maxBackoffMs: 100_000 };
    expect(decideRestart({ status: 'FAILED_SETUP', exitCode: 1, number: 1 }, 0, backoff)).toEqual({ action: 'restart', counted: true, delayMs: 30_000, reason: 'setup exited with code 1: restart 1 of 5 after 30 s' });
    expect(decideRestart({ status: 'FAILED', exitCode: 1, number: 2 }, 1, backoff)).toMatchObject({ delayMs: 60_000, reason: 'run exited with code 1: restart 2 of 5 after 60 s' });
    expect(decideRestart({ status: 'FAILED', exitCode: 1, number: 3 }, 2, backoff)).toMatchObject({ delayMs: 100_000, reason: 'run exited with code 1: restart 3 of 5 after 100 s' });
    // Uncounted restarts wait too: the attempt number grows with every attempt of the task.
    expect(decideRestart({ status: 'FAILED', exitCode: 75, number: 2 }, 0, backoff)).toMatchObject({ counted: false, delayMs: 60_000, reason: expect.stringContaining('restart after 60 s (not counted)') });
    // No wait when there is no failure left to restart.
    expect(decideRestart({ status: 'FAILED', exitCode: 1, number: 6 }, 5, backoff)).toEqual({ action: 'fail', status: 'FAILED', reason: 'run exited with code 1; restarts spent (5 of 5)' });
  });
});

describe('restartDelayMs', () => {
  it('base · 2^(n−1), capped, never below the base; 0 without a backoff', () => {
    const p = { backoffMs: 10_000, maxBackoffMs: 300_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((n) => restartDelayMs(n, p))).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    // A spec asking for more than the server's cap keeps its own value.
    expect(restartDelayMs(3, { backoffMs: 600_000, maxBackoffMs: 300_000 })).toBe(600_000);
    expect(restartDelayMs(4, { backoffMs: 0, maxBackoffMs: 300_000 })).toBe(0);
    expect(restartDelayMs(2, {})).toBe(0);
  });
});

describe('decideRecovery (lost attempts: bounded, backoff, never the user budget)', () => {
  const p = { maxRecoveries: 3, backoffMs: 1000, maxBackoffMs: 5000 };
  it('recovers with exponential backoff up to the bound', () => {
    expect(decideRecovery('gone', 0, p)).toMatchObject({ action: 'recover', delayMs: 1000 });
    expect(decideRecovery('gone', 1, p)).toMatchObject({ action: 'recover', delayMs: 2000 });
    expect(decideRecovery('gone', 2, p)).toMatchObject({ action: 'recover', delayMs: 4000, reason: expect.stringContaining('recovery 3 of 3') });
  });
  it('past the bound: FAILED_CONTROLLER with the reason', () => {
    expect(decideRecovery('pid 9 vanished', 3, p)).toMatchObject({ action: 'fail', status: 'FAILED_CONTROLLER', reason: expect.stringContaining('pid 9 vanished') });
    expect(decideRecovery('x', 0, { ...p, maxRecoveries: 0 })).toMatchObject({ action: 'fail' });
  });
  it('caps the delay', () => {
    expect(recoveryDelayMs(10, p)).toBe(5000);
    expect(recoveryDelayMs(1, { backoffMs: 0, maxBackoffMs: 10 })).toBe(0);
  });
});

describe('classifyExit', () => {
  it('maps phase and code to the attempt status', () => {
    expect(classifyExit('run', 0)).toBe('SUCCEEDED');
    expect(classifyExit('setup', 0)).toBe('SUCCEEDED');
    expect(classifyExit('run', 3)).toBe('FAILED');
    expect(classifyExit('setup', 2)).toBe('FAILED_SETUP');
    expect(classifyExit('run', 143)).toBe('FAILED');
  });
});

describe('attempt folder layout', () => {
  it('is $JOBDECK_HOME/jobs/<id>/task-<i>/attempt-<n>/run.log', () => {
    expect(jobDir(7, '/data')).toBe('/data/jobs/7');
    expect(attemptDir(7, 1, 2, '/data')).toBe('/data/jobs/7/task-1/attempt-2');
    expect(attemptLogPath(7, 0, 1, '/data')).toBe('/data/jobs/7/task-0/attempt-1/run.log');
  });
  it('refuses ids that would escape the folder', () => {
    expect(() => jobDir(0, '/d')).toThrow(RangeError);
    expect(() => jobDir(1.5, '/d')).toThrow(RangeError);
    expect(() => attemptDir(1, -1, 1, '/d')).toThrow(RangeError);
    expect(() => attemptDir(1, 0, 0, '/d')).toThrow(RangeError);
  });
});

describe('isTransientDbError', () => {
  it('recognises unreachable / closed / timed-out databases, also as a cause', () => {
    expect(isTransientDbError(new TransientDatabaseError())).toBe(true);
    expect(isTransientDbError(Object.assign(new Error("Can't reach database server at 127.0.0.1:5999"), { code: 'P1001' }))).toBe(true);
    expect(isTransientDbError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientDbError(new Error('wrapped', { cause: Object.assign(new Error('y'), { code: '57P01' }) }))).toBe(true);
    expect(isTransientDbError(Object.assign(new Error('z'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } } }))).toBe(true);
  });
  it('does not excuse bugs or constraint violations', () => {
    expect(isTransientDbError(new TypeError('cannot read properties of undefined'))).toBe(false);
    expect(isTransientDbError(Object.assign(new Error('Unique constraint failed'), { code: 'P2002' }))).toBe(false);
    expect(isTransientDbError(null)).toBe(false);
  });
});

describe('monitor settings', () => {
  it('has defaults and names a bad variable', () => {
    const s = monitorSettingsFromEnv({});
    expect(s).toMatchObject({ reconcileMs: 1000, maxRecoveries: 3, cancelGraceMs: 10_000, startTimeoutMs: null, capacityCheck: true });
    expect(monitorSettingsFromEnv({ JOBDECK_CAPACITY_CHECK: '0' }).capacityCheck).toBe(false);
    expect(monitorSettingsFromEnv({}).exitWatch).toBe(true);
    expect(monitorSettingsFromEnv({ JOBDECK_EXIT_WATCH: '0' }).exitWatch).toBe(false);
    expect(() => monitorSettingsFromEnv({ JOBDECK_EXIT_WATCH: 'maybe' })).toThrow(/JOBDECK_EXIT_WATCH: expected 0 or 1/);
    expect(() => monitorSettingsFromEnv({ JOBDECK_RECONCILE_MS: 'fast' })).toThrow(/JOBDECK_RECONCILE_MS: expected an integer/);
    expect(() => monitorSettingsFromEnv({ JOBDECK_CAPACITY_CHECK: 'maybe' })).toThrow(/JOBDECK_CAPACITY_CHECK/);
  });

  it('JOBDECK_START_TIMEOUT_MS: off by default (a job waits as long as it must); off, or ms ≥ 0', () => {
    expect(monitorSettingsFromEnv({ JOBDECK_START_TIMEOUT_MS: 'off' }).startTimeoutMs).toBeNull();
    expect(monitorSettingsFromEnv({ JOBDECK_START_TIMEOUT_MS: '' }).startTimeoutMs).toBeNull();
    expect(monitorSettingsFromEnv({ JOBDECK_START_TIMEOUT_MS: '3600000' }).startTimeoutMs).toBe(3_600_000);
    expect(monitorSettingsFromEnv({ JOBDECK_START_TIMEOUT_MS: '0' }).startTimeoutMs).toBe(0);
    expect(() => monitorSettingsFromEnv({ JOBDECK_START_TIMEOUT_MS: '1h' })).toThrow(/JOBDECK_START_TIMEOUT_MS: expected an integer ≥ 0/);
  });

  it('JOBDECK_USAGE_INTERVAL_MS: 5 s by default, 0 turns sampling off, 100–3 600 000 otherwise', () => {
    expect(monitorSettingsFromEnv({}).usageIntervalMs).toBe(5000);
    expect(monitorSettingsFromEnv({ JOBDECK_USAGE_INTERVAL_MS: '0' }).usageIntervalMs).toBe(0);
    expect(monitorSettingsFromEnv({ JOBDECK_USAGE_INTERVAL_MS: '250' }).usageIntervalMs).toBe(250);
    for (const bad of ['50', '3600001', '-1', 'often']) expect(() => monitorSettingsFromEnv({ JOBDECK_USAGE_INTERVAL_MS: bad })).toThrow(/JOBDECK_USAGE_INTERVAL_MS/);
  });
});

describe('readTaskSpec', () => {
  it('reads the normalized TaskSpec and defaults what is missing', () => {
    expect(readTaskSpec({ setup: 's', run: 'r', envs: { A: '1' }, workdir: null, resources: { cpus: 2 }, jobRecovery: { maxRestartsOnErrors: 1, recoverOnExitCodes: [3] } }, 1)).toEqual({
      setup: 's',
      run: 'r',
      envs: { A: '1' },
      workdir: null,
      cpus: 2,
      nodes: 1,
      maxRestartsOnErrors: 1,
      recoverOnExitCodes: [3],
      restartBackoffMs: null,
    });
    expect(readTaskSpec({ run: 'r', jobRecovery: { maxRestartsOnErrors: 1, recoverOnExitCodes: [], restartBackoffMs: 30_000 } }, 1)).toMatchObject({ restartBackoffMs: 30_000 });
    expect(readTaskSpec({ run: 'echo' }, 3)).toMatchObject({ setup: null, run: 'echo', cpus: 3, nodes: 1, maxRestartsOnErrors: 0, recoverOnExitCodes: [] });
    expect(readTaskSpec({ run: 'echo', numNodes: 3 }, 1)).toMatchObject({ nodes: 3 });
  });
});
