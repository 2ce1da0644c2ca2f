import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSlurmExecutor } from '../../lib/executors/slurm/executor';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { useDatabase } from '../helpers/use-database';
import { useSlurmClusters } from '../helpers/slurm-lock';
import { Fixture, ROOT, story, submit, waitFor, waitTerminal } from './monitor-helpers';

useSlurmClusters();

/**
 * Time on Slurm (docs/slurm.md "Limits"): `max_duration: 5s` becomes `--time=1` (whole minutes,
 * rounded up) and Slurm itself stops the job at it — a real TIMEOUT of the one-node test cluster,
 * which the monitor reads as the task's own failure, "exceeded max_duration 5s": FAILED, no
 * recovery (before, a TIMEOUT read as a lost attempt and was re-run). The minute Slurm counts in
 * is the test's length (about 1–2 minutes): one job, on one database — what is tested is Slurm's
 * end and its reading, not the database.
 */
describe('Slurm TIMEOUT is the max_duration limit', () => {
  const t = useDatabase('pglite', 'slurm-limits');
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
    execFileSync('bash', [path.join(ROOT, 'scripts', 'slurm-up.sh')], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  }, 600_000);
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('max_duration: 5s ends FAILED "exceeded max_duration 5s" by Slurm\'s own TIMEOUT, never recovered', { timeout: 300_000 }, async () => {
    fx = new Fixture();
    const slurm = createSlurmExecutor({ pollMs: 1000 });
    await fx.monitor(db, { executor: (name) => (name === 'slurm' ? slurm : fx.executor) }).start();
    const id = await submit(db, 'name: overrun\nmax_duration: 5s\nresources:\n  infra: slurm\nrun: sleep 600\n');
    const j = await waitTerminal(db, id, 240_000);
    const a = j.tasks[0].attempts;
    expect(a).toHaveLength(1);
    // Slurm's clock, not jobdeck's: at least the minute it rounded up to.
    expect(a[0].endedAt!.getTime() - a[0].startedAt!.getTime()).toBeGreaterThanOrEqual(55_000);
    expect(j).toMatchObject({ status: 'FAILED', recoveryCount: 0, restartCount: 0, statusReason: 'task 0: exceeded max_duration 5s; no restarts allowed (max_restarts_on_errors: 0)' });
    expect(a[0]).toMatchObject({ status: 'FAILED', statusReason: 'exceeded max_duration 5s' });
    // Slurm's own word: the job is COMPLETING (Reason=TimeLimit) while its processes are being
    // stopped — what the monitor may have read — and TIMEOUT once they are gone.
    const show = () => execFileSync('scontrol', ['-o', 'show', 'job', a[0].executorRef!], { encoding: 'utf8' });
    expect(show()).toMatch(/JobState=(TIMEOUT|COMPLETING Reason=TimeLimit)/);
    await waitFor(async () => /JobState=TIMEOUT/.test(show()), 'Slurm to say TIMEOUT');
    expect((await story(db, id)).some((l) => l.includes('RECOVERING') || l.includes('LOST'))).toBe(false);
  });
});
