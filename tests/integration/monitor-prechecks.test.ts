/**
 * A launch the user's spec makes impossible is not a lost attempt: a task whose workdir is
 * relative (stored before submit refused it, or written by hand) ends FAILED_PRECHECKS with the
 * executor's reason on the first launch — no recovery spent, the job FAILED_PRECHECKS, later
 * tasks CANCELLED — on both databases, with the real local executor. And submit refuses a
 * relative workdir up front.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { parseJobSpec, SpecError } from '../../lib/jobs/spec';
import { createStore, submitJob } from '../../lib/store';
import { Fixture, jobTree, story, waitTerminal } from './monitor-helpers';

describe.each(DB_KINDS)('launch prechecks on %s', (kind) => {
  let t: TestDatabase;
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(async () => {
    t = await createTestDatabase(kind, `monitor-prechecks-${kind}`);
    db = t.db.prisma;
  });
  afterAll(async () => {
    await t?.dispose();
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  it('submit refuses a relative workdir, naming the rule', () => {
    for (const workdir of ['../../../../../../etc', 'rel/dir', './x', '~user/x']) {
      let err: unknown;
      try {
        parseJobSpec(`workdir: ${workdir}\nrun: ls\n`);
      } catch (e) {
        err = e;
      }
      expect(err, workdir).toBeInstanceOf(SpecError);
      expect((err as SpecError).issues[0]).toMatchObject({ line: 1, path: 'task[0].workdir', message: expect.stringContaining('absolute path or one starting with ~/') });
    }
    for (const workdir of ['/tmp', '~', '~/project']) expect(parseJobSpec(`workdir: "${workdir}"\nrun: ls\n`).tasks[0].workdir).toBe(workdir);
  });

  it('a stored relative workdir ends the job FAILED_PRECHECKS at its first launch, no recovery', async () => {
    fx = new Fixture();
    const m = fx.monitor(db, { maxRecoveries: 3 });
    // What an older server accepted: the spec as validated then, with the relative workdir.
    const spec = parseJobSpec('name: rel\n---\nworkdir: /tmp\nrun: echo one\n---\nrun: echo two\n');
    spec.tasks[0].workdir = '../../../../../../etc';
    const job = await submitJob(createStore(db), {
      name: spec.name,
      submissionId: null,
      specYaml: 'hand-written',
      spec: spec as never,
      specHash: 'x',
      cpus: 1,
      nodes: 1,
      executor: 'local',
      tasks: spec.tasks.map((x) => ({ name: x.name, spec: x as never })),
    });
    await m.start();
    const j = await waitTerminal(db, job.id);
    expect(j.status).toBe('FAILED_PRECHECKS');
    expect(j.statusReason).toContain('workdir must be an absolute path or start with ~/');
    expect(j.recoveryCount).toBe(0);
    const tree = (await jobTree(db, job.id))!;
    expect(tree.tasks.map((x) => x.status)).toEqual(['FAILED_PRECHECKS', 'CANCELLED']);
    expect(tree.tasks[0].attempts).toHaveLength(1);
    expect(tree.tasks[0].attempts[0]).toMatchObject({ status: 'FAILED', statusReason: expect.stringContaining('workdir must be') });
    expect(tree.tasks[0].statusReason).toContain('workdir must be');
    expect(await story(db, job.id)).toEqual([
      'job >PENDING',
      't0 PENDING>STARTING',
      't0a1 >STARTING',
      'job PENDING>STARTING',
      't0a1 STARTING>FAILED',
      't0 STARTING>FAILED_PRECHECKS',
      't1 PENDING>CANCELLED',
      'job STARTING>FAILED_PRECHECKS',
    ]);
  });
});
