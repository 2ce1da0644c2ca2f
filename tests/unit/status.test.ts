import { describe, expect, it } from 'vitest';
import { Prisma } from '../../lib/generated/prisma/client';
import * as Enums from '../../lib/generated/prisma/enums';
import {
  ATTEMPT_STATUSES,
  ATTEMPT_TERMINAL,
  ATTEMPT_TRANSITIONS,
  assertTransition,
  canTransition,
  deriveJobStatus,
  IllegalTransitionError,
  isTerminal,
  JOB_FAILED,
  JOB_STATUSES,
  JOB_TERMINAL,
  STATUS_OUTCOME,
  JOB_TRANSITIONS,
  TASK_STATUSES,
  TASK_TERMINAL,
  TASK_TRANSITIONS,
} from '../../lib/jobs/status';

void Prisma;

describe('status machine', () => {
  it('matches the Prisma enums exactly', () => {
    expect([...JOB_STATUSES].sort()).toEqual(Object.values(Enums.JobStatus).sort());
    expect([...TASK_STATUSES].sort()).toEqual(Object.values(Enums.TaskStatus).sort());
    expect([...ATTEMPT_STATUSES].sort()).toEqual(Object.values(Enums.AttemptStatus).sort());
  });

  it('has a row for every status and only known targets', () => {
    for (const [statuses, table] of [
      [JOB_STATUSES, JOB_TRANSITIONS],
      [TASK_STATUSES, TASK_TRANSITIONS],
      [ATTEMPT_STATUSES, ATTEMPT_TRANSITIONS],
    ] as const) {
      expect(Object.keys(table).sort()).toEqual([...statuses].sort());
      for (const targets of Object.values(table) as string[][]) for (const t of targets) expect(statuses as readonly string[]).toContain(t);
    }
  });

  it('never leaves a terminal status', () => {
    for (const s of JOB_TERMINAL) expect(JOB_TRANSITIONS[s]).toEqual([]);
    for (const s of TASK_TERMINAL) expect(TASK_TRANSITIONS[s]).toEqual([]);
    for (const s of ATTEMPT_TERMINAL) expect(ATTEMPT_TRANSITIONS[s]).toEqual([]);
  });

  it('lets every non-terminal job reach CANCELLING or CANCELLED', () => {
    for (const s of JOB_STATUSES) {
      if (isTerminal('job', s) || s === 'CANCELLING') continue;
      expect(canTransition('job', s, 'CANCELLING')).toBe(true);
    }
    expect(canTransition('job', 'PENDING', 'CANCELLED')).toBe(true);
    expect(canTransition('job', 'CANCELLING', 'CANCELLED')).toBe(true);
  });

  it('follows the designed job path PENDING → STARTING → RUNNING → RECOVERING → STARTING → RUNNING → SUCCEEDED', () => {
    const path = ['PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'STARTING', 'RUNNING', 'SUCCEEDED'];
    for (let i = 1; i < path.length; i++) expect(canTransition('job', path[i - 1], path[i])).toBe(true);
  });

  it('refuses illegal transitions with a typed error', () => {
    expect(() => assertTransition('job', 'SUCCEEDED', 'RUNNING')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('job', 'FAILED', 'FAILED_CONTROLLER')).toThrow(/illegal job transition FAILED → FAILED_CONTROLLER/);
    expect(() => assertTransition('attempt', 'LOST', 'RUNNING')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('task', 'PENDING', 'PENDING')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('job', 'NOPE', 'RUNNING')).toThrow(IllegalTransitionError);
  });
});

describe('deriveJobStatus (the one rule)', () => {
  const t = (...s: string[]) => s.map((status, index) => ({ index, status: status as never }));
  it('mirrors the current task', () => {
    expect(deriveJobStatus(t('PENDING', 'PENDING'))).toBe('PENDING');
    expect(deriveJobStatus(t('STARTING', 'PENDING'))).toBe('STARTING');
    expect(deriveJobStatus(t('RUNNING', 'PENDING'))).toBe('RUNNING');
    expect(deriveJobStatus(t('SUCCEEDED', 'PENDING'))).toBe('RUNNING');
    expect(deriveJobStatus(t('SUCCEEDED', 'RECOVERING'))).toBe('RECOVERING');
  });
  it('ends with the first failure, before CANCELLED', () => {
    expect(deriveJobStatus(t('FAILED', 'CANCELLED'))).toBe('FAILED');
    expect(deriveJobStatus(t('SUCCEEDED', 'FAILED_SETUP', 'CANCELLED'))).toBe('FAILED_SETUP');
    expect(deriveJobStatus(t('SUCCEEDED', 'CANCELLED'))).toBe('CANCELLED');
  });
  it('succeeds only when every task did', () => {
    expect(deriveJobStatus(t('SUCCEEDED', 'SUCCEEDED'))).toBe('SUCCEEDED');
    expect(deriveJobStatus(t('SUCCEEDED', 'RUNNING'))).toBe('RUNNING');
  });
  it('shows CANCELLING once a cancel was requested', () => {
    expect(deriveJobStatus(t('RUNNING', 'PENDING'), { cancelRequested: true })).toBe('CANCELLING');
    expect(deriveJobStatus(t('CANCELLING'))).toBe('CANCELLING');
  });
  it('sorts by index', () => {
    expect(deriveJobStatus([{ index: 1, status: 'PENDING' }, { index: 0, status: 'SUCCEEDED' }])).toBe('RUNNING');
  });
});

describe('status outcomes (the one classification)', () => {
  it('classifies every status of every entity, and nothing else', () => {
    expect(Object.keys(STATUS_OUTCOME).sort()).toEqual([...new Set([...JOB_STATUSES, ...TASK_STATUSES, ...ATTEMPT_STATUSES])].sort());
  });
  it('makes terminal exactly the statuses that are not live, as docs/design.md §2 lists them', () => {
    expect([...JOB_TERMINAL]).toEqual(['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);
    expect([...TASK_TERMINAL]).toEqual([...JOB_TERMINAL]);
    expect([...ATTEMPT_TERMINAL].sort()).toEqual(['CANCELLED', 'FAILED', 'FAILED_SETUP', 'LOST', 'SUCCEEDED']);
    for (const s of JOB_STATUSES) expect(isTerminal('job', s)).toBe(STATUS_OUTCOME[s] !== 'live');
  });
  it('puts every failure, and only failures, in the failed group', () => {
    expect([...JOB_FAILED]).toEqual(['FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);
    expect(deriveJobStatus([{ index: 0, status: 'FAILED_NO_RESOURCE' }, { index: 1, status: 'CANCELLED' }])).toBe('FAILED_NO_RESOURCE');
  });
});
