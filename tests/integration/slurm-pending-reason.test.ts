/**
 * Slurm's own pending reason (docs/slurm.md "Why a job is not running yet"): a job jobdeck
 * admitted and submitted that Slurm holds PENDING — its CPUs taken by a job jobdeck does not
 * know — reads RUNNING in jobdeck with the reason "Slurm: Resources" (Job.pendingReason, the API
 * summary, `jobdeck status`), asked with one squeue call per pass for all such jobs and written
 * only when it changes; once Slurm runs it, the reason is gone. The real one-node cluster
 * (scripts/slurm-up.sh, started when needed), the real monitor, both databases.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSlurmExecutor } from '../../lib/executors/slurm/executor';
import { getJobDetail, getJobSummary } from '../../lib/api/views';
import { renderStatus } from '../../lib/cli/commands/manage';
import { colors as makeColors } from '../../lib/cli/format';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import type { StoreEvent } from '../../lib/store';
import { DB_KINDS } from '../helpers/db';
import { storeOf } from '../helpers/store';
import { useDatabase } from '../helpers/use-database';
import { Fixture, jobTree, ROOT, submit, waitFor, waitTerminal, wrapExecutor } from './monitor-helpers';
import { useSlurmClusters } from '../helpers/slurm-lock';

useSlurmClusters();

beforeAll(() => {
  execFileSync('bash', [path.join(ROOT, 'scripts', 'slurm-up.sh')], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
}, 600_000);

/** Slurm jobs this file started outside jobdeck (cancelled after each test, whatever happened). */
const outsiders: string[] = [];

/** A Slurm job jobdeck does not know, holding `cpus` CPUs of the node until cancelled. */
function outsider(cpus: number): string {
  const id = execFileSync('sbatch', ['--parsable', '--job-name=jobdeck-test-outsider', `--cpus-per-task=${cpus}`, '--output=/dev/null', '--wrap', 'sleep 300'], { encoding: 'utf8' }).trim().split(';')[0];
  outsiders.push(id);
  return id;
}

/**
 * Every job left on the cluster cancelled, and gone from squeue: this file holds the clusters
 * (useSlurmClusters), and a job another suite left pending would stand in front of ours and
 * change Slurm's reason for them.
 */
async function clearCluster(): Promise<void> {
  const ids = () => execFileSync('squeue', ['-h', '-o', '%i'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const left = ids();
  if (left.length) execFileSync('scancel', left);
  await waitFor(async () => ids().length === 0, 'the cluster empty', 60_000);
}

const slurmState = (id: string) => execFileSync('squeue', ['-h', '-o', '%T', '-j', id], { encoding: 'utf8' }).trim();

describe.each(DB_KINDS)("Slurm's pending reason on %s", (kind) => {
  const t = useDatabase(kind, `slurm-pending-reason-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    for (const id of outsiders.splice(0)) execFileSync('scancel', [id]);
    const refs = (await db.attempt.findMany({ where: { executorRef: { not: null } }, select: { executorRef: true } })).map((a) => a.executorRef!);
    if (refs.length) execFileSync('scancel', refs);
    await fx?.cleanup(db);
  });

  it('a job held by Slurm for want of CPUs shows "Slurm: Resources" (one squeue per pass, one write), and loses it once Slurm runs it', async () => {
    fx = new Fixture();
    const slurm = createSlurmExecutor({ pollMs: 250 });
    const cpus = slurm.capacity().cpus;
    const asked: string[][] = [];
    const ex = wrapExecutor(slurm, { held: (refs) => (asked.push([...refs]), slurm.held!(refs)) });
    // Passes only when the test asks (reconcileNow): each is one squeue at most.
    const m = fx.monitor(db, { executor: ex, reconcileMs: 60_000 });
    await m.start();
    // Every CPU of the node is taken by a job jobdeck does not know: jobdeck's own count says
    // they are free, admits and submits; Slurm holds the jobs PENDING.
    await clearCluster();
    const other = outsider(cpus);
    await waitFor(async () => slurmState(other) === 'RUNNING', 'the outside job running');
    const gate = path.join(fx.home, 'gate');
    const started = path.join(fx.home, 'started');
    const job = (name: string) => `name: ${name}\nresources:\n  cpus: 1\n  infra: slurm\nrun: touch ${started}.${name}; while [ ! -f ${gate} ]; do sleep 0.1; done\n`;
    const a = await submit(db, job('a'));
    const b = await submit(db, job('b'));
    const reasonOf = async (id: number) => {
      const j = await jobTree(db, id);
      return j ? `${j.status}: ${j.pendingReason}` : 'gone';
    };
    let seen = '';
    await waitFor(async () => {
      await m.reconcileNow();
      seen = `a: ${await reasonOf(a)}, b: ${await reasonOf(b)}, squeue: ${execFileSync('squeue', ['-h', '-o', '%i %T %r'], { encoding: 'utf8' }).trim().replace(/\n/g, '; ')}`;
      const both = [await reasonOf(a), await reasonOf(b)];
      return both.includes('RUNNING: Slurm: Resources') && both.every((r) => r.startsWith('RUNNING: Slurm: '));
    }, 'both jobs held by Slurm, with its reason').catch((err: Error) => {
      throw new Error(`${err.message} (last seen ${seen})`);
    });
    // jobdeck launches the two at once, so either may reach Slurm first: the first in Slurm's line
    // waits for the CPUs ("Resources"), the second for the first ("Priority") or the CPUs itself.
    const [first] = (await reasonOf(a)) === 'RUNNING: Slurm: Resources' ? [a, b] : [b, a];
    for (const id of [a, b]) expect(['RUNNING: Slurm: Resources', 'RUNNING: Slurm: Priority']).toContain(await reasonOf(id));
    const refs = (await db.attempt.findMany({ where: { jobId: { in: [a, b] } }, orderBy: { id: 'asc' } })).map((x) => x.executorRef);
    // One squeue per pass for both jobs; passes with nothing changed write nothing.
    asked.length = 0;
    let writes = 0;
    const count = (e: StoreEvent) => void (e.type === 'updated' && e.changed === 'pendingReason' && writes++);
    storeOf(db).bus.on('change', count);
    try {
      await m.reconcileNow();
      await m.reconcileNow();
      expect(asked).toEqual([refs, refs]);
      expect(writes).toBe(0);
    } finally {
      storeOf(db).bus.off('change', count);
    }
    // Where a user looks: the API and `jobdeck status`.
    expect(await getJobSummary(storeOf(db), first)).toMatchObject({ status: 'RUNNING', pendingReason: 'Slurm: Resources' });
    const detail = (await getJobDetail(storeOf(db), first))!;
    expect(renderStatus(detail, new Date(), makeColors(false)).split('\n')[1]).toBe('  not running yet: Slurm: Resources (submitted to slurm, waiting in its queue)');

    // The CPUs come free: Slurm runs the jobs; their reason goes, and they are not asked about again.
    execFileSync('scancel', [outsiders.splice(0)[0]]);
    await waitFor(async () => existsSync(`${started}.a`) && existsSync(`${started}.b`), 'both jobs running in Slurm', 60_000);
    await waitFor(async () => {
      await m.reconcileNow();
      return (await reasonOf(a)) === 'RUNNING: null' && (await reasonOf(b)) === 'RUNNING: null';
    }, 'the reasons cleared');
    asked.length = 0;
    await m.reconcileNow();
    expect(asked).toEqual([]);
    expect((await getJobSummary(storeOf(db), a))!.pendingReason).toBeNull();
    writeFileSync(gate, '');
    for (const id of [a, b]) expect((await waitTerminal(db, id, 60_000)).status).toBe('SUCCEEDED');
  });
});
