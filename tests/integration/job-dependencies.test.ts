/**
 * Job-level `depends_on` (docs/design.md §18 "Dependencies", docs/spec.md "depends_on") with the
 * real monitor, the real local executor and both databases: a dependent waits PENDING with its
 * reason outside the line — it neither starts nor blocks the jobs behind it — starts when its
 * dependencies end as its `after` mode asks, and ends CANCELLED with the reason when they never
 * can; what a submit cannot resolve is refused at the entry's line.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { submitJobSpec } from '../../lib/control/submit';
import { requestCancel } from '../../lib/control/cancel';
import { SpecError } from '../../lib/jobs/spec';
import { storeOf } from '../helpers/store';
import { Fixture, jobTree, submit, waitFor, waitStatus, waitTerminal } from './monitor-helpers';

const gated = (gate: string, code = 0) => `while [ ! -f ${gate} ]; do sleep 0.05; done; exit ${code}`;

describe.each(DB_KINDS)('depends_on on %s', (kind) => {
  const t = useDatabase(kind, `job-deps-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('after: ok — waits with its reason outside the line (a 4-CPU dependent at priority 1000 blocks no one), then runs once its dependency succeeded', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db);
    await m.start();
    const up = await submit(db, `name: train\nrun: ${gated(gate)}\n`);
    await waitStatus(db, up, 'RUNNING');
    const dep = await submit(db, `name: eval\npriority: 1000\nresources: {cpus: 4}\ndepends_on: {jobs: [train], after: ok}\nrun: echo evaluated\n`);
    const behind = await submit(db, 'name: behind\nrun: echo behind\n');
    expect((await waitTerminal(db, behind)).status).toBe('SUCCEEDED');
    await m.idle();
    const waiting = (await jobTree(db, dep))!;
    expect([waiting.status, waiting.depsWaiting, waiting.pendingReason]).toEqual(['PENDING', true, `waits for job ${up} to succeed`]);
    expect(waiting.tasks[0].attempts).toHaveLength(0);
    expect(await db.jobDependency.findMany({ where: { jobId: dep }, select: { onJobId: true, after: true } })).toEqual([{ onJobId: up, after: 'ok' }]);
    writeFileSync(gate, '');
    const done = await waitTerminal(db, dep);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.readyAt).not.toBeNull();
    expect(done.startedAt!.getTime()).toBeGreaterThanOrEqual((await jobTree(db, up))!.endedAt!.getTime());
  });

  it('after: ok — a failed dependency ends the dependent CANCELLED with the reason, never started', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db);
    await m.start();
    const up = await submit(db, `name: prep\nrun: ${gated(gate, 3)}\n`);
    const dep = await submit(db, `name: after-prep\ndepends_on: {jobs: [${up}]}\nrun: echo never\n`);
    await m.idle();
    expect((await jobTree(db, dep))!.pendingReason).toBe(`waits for job ${up} to succeed`);
    writeFileSync(gate, '');
    const done = await waitTerminal(db, dep);
    expect(done.status).toBe('CANCELLED');
    expect(done.statusReason).toBe(`job ${up} ended FAILED; this job waited for it to succeed (after: ok)`);
    expect(done.tasks[0].attempts).toHaveLength(0);
  });

  it('after: failed runs after a failure and is cancelled after a success; after: any runs after a cancel', async () => {
    fx = new Fixture();
    const gate = `${fx.home}/gate`;
    const m = fx.monitor(db);
    await m.start();
    const bad = await submit(db, `name: bad\nrun: ${gated(gate, 1)}\n`);
    const good = await submit(db, `name: good\nrun: ${gated(gate)}\n`);
    const slow = await submit(db, `name: slow\nrun: ${gated(`${gate}-never`)}\n`);
    const onFail = await submit(db, `name: on-fail\ndepends_on: {jobs: [${bad}], after: failed}\nrun: echo diagnose\n`);
    const onFailOfGood = await submit(db, `name: on-fail-good\ndepends_on: {jobs: [good], after: failed}\nrun: echo never\n`);
    const onAny = await submit(db, `name: on-any\ndepends_on: {jobs: [slow], after: any}\nrun: echo cleanup\n`);
    await m.idle();
    expect((await jobTree(db, onFail))!.pendingReason).toBe(`waits for job ${bad} to fail`);
    expect((await jobTree(db, onAny))!.pendingReason).toBe(`waits for job ${slow} to end`);
    writeFileSync(gate, '');
    expect((await waitTerminal(db, onFail)).status).toBe('SUCCEEDED');
    const cancelled = await waitTerminal(db, onFailOfGood);
    expect([cancelled.status, cancelled.statusReason]).toEqual(['CANCELLED', `job ${good} ended SUCCEEDED; this job waited for it to fail (after: failed)`]);
    await waitStatus(db, slow, 'RUNNING');
    expect((await jobTree(db, onAny))!.status).toBe('PENDING');
    await requestCancel(storeOf(db), [slow]);
    expect((await waitTerminal(db, slow)).status).toBe('CANCELLED');
    expect((await waitTerminal(db, onAny)).status).toBe('SUCCEEDED');
  });

  it('a dependency that ended before the submit: met at once (it joins the line), or refused when it can never be met', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const ok = await submit(db, 'name: done-ok\nrun: "true"\n');
    const failed = await submit(db, 'name: done-failed\nrun: exit 2\n');
    await waitTerminal(db, ok);
    await waitTerminal(db, failed);
    const dep = await submit(db, `name: later\ndepends_on: {jobs: [done-ok]}\nrun: echo later\n`);
    expect((await jobTree(db, dep))!.depsWaiting).toBe(false);
    expect((await waitTerminal(db, dep)).status).toBe('SUCCEEDED');
    const err = await submitJobSpec(storeOf(db), { source: { kind: 'yaml', text: `name: never\nrun: echo x\ndepends_on:\n  jobs: [${failed}]\n`, filename: 'never.yaml' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpecError);
    expect((err as SpecError).message).toBe(`never.yaml:4 task[0].depends_on.jobs[0]: job ${failed} ended FAILED; this job would wait for it to succeed (after: ok): it can never start`);
  });

  it('refuses an unknown id or name and a cycle (its own name) at the entry, file:line; a name is the submitter\'s most recent job of that name', async () => {
    const store = storeOf(db);
    const text = ['name: nightly', 'run: echo x', 'depends_on:', '  after: any', '  jobs:', '    - 999999', '    - no-such-job', '    - nightly', ''].join('\n');
    const err = await submitJobSpec(store, { source: { kind: 'yaml', text, filename: 'nightly.yaml' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpecError);
    expect((err as SpecError).message.split('\n')).toEqual([
      'nightly.yaml:6 task[0].depends_on.jobs[0]: job 999999 does not exist',
      'nightly.yaml:7 task[0].depends_on.jobs[1]: no job or group named "no-such-job"; name it by its id, or check the name',
      'nightly.yaml:8 task[0].depends_on.jobs[2]: a dependency cycle: "nightly" is this job\'s own name, so it would wait for itself; name an earlier run by its id',
    ]);
    expect(await db.job.count({ where: { name: 'nightly' } })).toBe(0);
    const a = (await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'true' }, name: 'twice' })).result.id;
    const b = (await submitJobSpec(store, { source: { kind: 'cmd', cmd: 'true' }, name: 'twice' })).result.id;
    const dep = (await submitJobSpec(store, { source: { kind: 'yaml', text: 'name: dep\nrun: "true"\ndepends_on: {jobs: [twice]}\n' } })).result.id;
    expect(b).toBeGreaterThan(a);
    expect(await db.jobDependency.findMany({ where: { jobId: dep }, select: { onJobId: true } })).toEqual([{ onJobId: b }]);
    await waitFor(async () => (await requestCancel(store, [a, b, dep])) && true, 'cleanup');
  });
});
