/**
 * Lost attempts (recovery, not restart): a process that vanishes without an exit status is
 * recovered with a new attempt (cause "recovery"), never spending max_restarts_on_errors;
 * recoveries are counted and bounded (then FAILED_CONTROLLER). One missed liveness probe while
 * the process is alive never triggers a recovery. Real database (both kinds), real processes.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import type { ProbeResult } from '../../lib/executors/types';
import { Fixture, groupAlive, jobTree, story, submit, waitFor, waitTerminal, wrapExecutor } from './monitor-helpers';

const gated = (gate: string, extra = '') => `name: lost\n${extra}run: |\n  while [ ! -f ${gate} ]; do sleep 0.05; done\n  echo "attempt $JOBDECK_ATTEMPT done"\n`;

describe.each(DB_KINDS)('lost attempts on %s', (kind) => {
  const t = useDatabase(kind, `recovery-lost-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  async function runningAttempt(id: number, number: number) {
    return waitFor(async () => {
      const j = await jobTree(db, id);
      const a = j?.tasks[0].attempts.find((x) => x.number === number);
      return a?.status === 'RUNNING' && a.pid ? a : null;
    }, `attempt ${number} running`);
  }

  it('one missed liveness probe while the process is alive never triggers a recovery', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const probes: ProbeResult['state'][] = [];
    let missed = 0;
    let running = 0;
    const flaky = wrapExecutor(fx.executor, {
      probe: async (h) => {
        const real = await fx.executor.probe(h);
        // the second probe that finds it running (the attempt is RUNNING in the row by then) is
        // answered "lost" instead: a missed probe
        if (real.state === 'running' && ++running === 2 && missed === 0) {
          missed++;
          probes.push('lost');
          return { state: 'lost', reason: 'missed probe' };
        }
        probes.push(real.state);
        return real;
      },
    });
    const m = fx.monitor(db, { executor: flaky, lostConfirmMs: 200 });
    await m.start();
    const id = await submit(db, gated(gate));
    await waitFor(async () => missed === 1 && probes.length >= 3, 'the missed probe and a fresh one after it');
    writeFileSync(gate, '');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts).toHaveLength(1);
    expect(j.recoveryCount).toBe(0);
    expect(probes.slice(0, 3)).toEqual(['running', 'lost', 'running']); // re-probed and found alive
    expect((await story(db, id)).some((x) => x.includes('LOST') || x.includes('RECOVERING'))).toBe(false);
  });

  it('a process group killed with SIGKILL (no exit status) is recovered: attempt LOST, new attempt, budget untouched', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db);
    await m.start();
    const id = await submit(db, gated(gate, 'job_recovery:\n  max_restarts_on_errors: 0\n'));
    const a1 = await runningAttempt(id, 1);
    process.kill(-a1.pid!, 'SIGKILL'); // the machine "loses" it: no exit file is written
    const a2 = await runningAttempt(id, 2);
    expect(a2.cause).toBe('recovery');
    writeFileSync(gate, '');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts.map((a) => [a.number, a.status, a.cause])).toEqual([
      [1, 'LOST', 'first'],
      [2, 'SUCCEEDED', 'recovery'],
    ]);
    expect(j.tasks[0]).toMatchObject({ recoveries: 1, restarts: 0 });
    expect(j).toMatchObject({ recoveryCount: 1, restartCount: 0 });
    const s = await story(db, id);
    expect(s).toEqual(expect.arrayContaining(['t0a1 RUNNING>LOST', 't0 RUNNING>RECOVERING', 'job RUNNING>RECOVERING', 't0 RECOVERING>STARTING', 't0a2 >STARTING', 'job RECOVERING>STARTING']));
    expect(m.state().recoveries).toBe(1);
  });

  it('recoveries are bounded: past JOBDECK_MAX_RECOVERIES the job ends FAILED_CONTROLLER, later tasks CANCELLED', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db, { maxRecoveries: 1 });
    await m.start();
    const id = await submit(db, gated(gate) + '---\nrun: echo never\n');
    const a1 = await runningAttempt(id, 1);
    process.kill(-a1.pid!, 'SIGKILL');
    const a2 = await runningAttempt(id, 2);
    process.kill(-a2.pid!, 'SIGKILL');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('FAILED_CONTROLLER');
    expect(j.statusReason).toMatch(/recoveries spent \(1 of 1/);
    expect(j.tasks.map((x) => x.status)).toEqual(['FAILED_CONTROLLER', 'CANCELLED']);
    expect(j.tasks[0].attempts.map((a) => a.status)).toEqual(['LOST', 'LOST']);
    expect(j.tasks[1].attempts).toHaveLength(0);
  });

  it('a launch that throws is a lost attempt: recovered, not a restart', async () => {
    fx = new Fixture();
    let fails = 1;
    const ex = wrapExecutor(fx.executor, {
      launch: async (req) => {
        if (fails-- > 0) throw new Error('fork: Resource temporarily unavailable');
        return fx.executor.launch(req);
      },
    });
    const m = fx.monitor(db, { executor: ex });
    await m.start();
    const id = await submit(db, 'name: launchfail\nrun: echo fine\n');
    const j = await waitTerminal(db, id);
    expect(j.status).toBe('SUCCEEDED');
    expect(j.tasks[0].attempts.map((a) => [a.status, a.cause, a.statusReason])).toEqual([
      ['LOST', 'first', 'launch failed: fork: Resource temporarily unavailable'],
      ['SUCCEEDED', 'recovery', null],
    ]);
    expect(j.restartCount).toBe(0);
    expect(j.recoveryCount).toBe(1);
    void groupAlive;
  });
});
